"""Measured restart delays of one container against the expected curve.

Pure: the input is a worker's attempt records (one container of one pod) and
the :class:`~harness.model.backoff.BackoffCurve` of that worker's live kubelet
config; the output says, restart by restart, whether the kubelet kept to the
curve, and why not when it did not.

Restart n is the creation of attempt n: the moment the kubelet decided to
restart, not when the container got going. Its delay is counted the way the
kubelet counts it: from the previous attempt's CRI ``finishedAt`` to this
attempt's CRI ``createdAt`` (``startedAt`` for records that lack it), both
runtime nanoseconds; the start latency (started - created) is reported on its
own, so a slow runtime under load is never blamed on the kubelet. It passes when

    expected - CLOCK_ROUNDING <= delay <= curve.upper_tolerance(expected)

(see :mod:`harness.model.backoff` for the upper bound), and when the back-off the
kubelet reported while waiting is the model's. Near the caps the delay
windows of neighbouring levels overlap (reduced max 30s against 60s, default
max 150s against 300s), so for a back-off of :data:`CONFIRM_FROM` or more the
reported level must have been seen: a restart whose level was not seen is
"unconfirmed", a failure, not a pass.

A pass is earned: a worker fails when the observation ended before the
restarts it needed (incomplete), when a restart is overdue (the previous exit
plus the window's upper bound has passed on the node's clock without it), or
when the pod status's times disagree with the runtime's beyond the API's
whole-second rounding.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Final

from harness.model.backoff import BackoffCurve
from harness.model.bounds import BOUNDS
from harness.model.durations import NS_PER_S, format_duration, to_ns
from harness.model.releases import AT_EXPIRY
from harness.recording.cri import CriFormatError, parse_rfc3339_nano
from harness.recording.records import SOURCE_SELF, AttemptRecord

# The values and their sources are in harness.model.bounds; what each does here:
#
# Lower slack. The kubelet restarts only once time.Now() - finishedAt has
# reached the back-off, so the true delay is never short; the two ends are
# stamped by different processes on a wall clock NTP may slew.
CLOCK_ROUNDING: Final = BOUNDS["clock_rounding"].as_timedelta()

# The kubelet decides a reset by comparing the exit with the time it last
# advanced the back-off (just before creating the attempt), not with the
# attempt's startedAt, which comes later by the create/start time. A run this
# close to reset_after may or may not have reset the curve, so both readings
# are accepted there.
RESET_LEAD: Final = BOUNDS["reset_lead"].as_timedelta()

# From this back-off on, the kubelet's waiting message stays posted long
# enough (a status update, then the watch) to be seen before the restart, and
# the windows of neighbouring levels overlap near the caps: the reported level
# is required. Below it (the fast worker's 2s) the message may come and go
# between two status updates and only the delay is judged.
CONFIRM_FROM: Final = BOUNDS["confirm_from"].as_timedelta()

# The pod status carries the runtime's times truncated to whole seconds. A
# disagreement up to this is rounding; beyond it the record mixes up two
# attempts (or a source changed), and the evidence cannot be trusted.
API_ROUNDING: Final = BOUNDS["api_rounding"].as_timedelta()
# How far the workload's own report may sit from the runtime's times it stands
# in for: tests/e2e/test_existing_cluster.py holds every attempt within it.
SELF_REPORT_SLACK: Final = BOUNDS["self_report_max"].as_timedelta()
ZERO: Final = timedelta(0)

# Evidence a worker needs beyond each restart's own window. Below CONFIRM_FROM
# a level's window holds its neighbour's delays, so most restarts must show
# the kubelet's own level (judged once LEVEL_SHARE_FROM should have), and the
# restarts at the cap must not sit, in median, further past it than a sound
# kubelet's do (judged from CAP_MEDIAN_FROM of them).
LEVEL_SHARE_MIN: Final = BOUNDS["level_share_min"].as_fraction()
LEVEL_SHARE_FROM: Final = 4
CAP_MEDIAN_OVERSHOOT: Final = BOUNDS["cap_median_overshoot"].as_seconds()
CAP_MEDIAN_FROM: Final = 5

# A reported back-off is Go duration text, parsed to microseconds and carried
# as float seconds; anything closer than this is the same value.
_REPORTED_EPSILON_S: Final = BOUNDS["reported_level_epsilon"].as_seconds()


@dataclass(frozen=True, kw_only=True)
class RestartCheck:
    """The verdict on restart n (the start of attempt n).

    ``curve_n`` is the position on the curve the model used: n, unless the
    curve was reset by a long run. ``measured_s`` (the decision delay,
    created - previous finished) and ``margin_s`` (measured - expected) are
    None when the restart could not be measured. ``start_latency_s`` is
    started - created of attempt n, None when the creation was not recorded.
    """

    n: int
    expected_s: float
    measured_s: float | None
    margin_s: float | None
    upper_bound_s: float
    reported_s: float | None
    passed: bool
    reason: str
    curve_n: int
    start_latency_s: float | None = None
    # Not the kubelet's to answer for: the restart was late across a span in
    # which its node was not observed (paused, frozen, the host overloaded).
    error: bool = False


@dataclass(frozen=True, kw_only=True)
class WorkerVerdict:
    """Every restart check of one worker's container, and what they add up to.

    ``problems`` are failures that belong to no single restart (nothing
    recorded, an incomplete observation, an overdue restart, a pending
    restart's reported level, the pod status contradicting the runtime);
    ``notes`` explain without failing (curve resets, sub-second rounding).
    ``last_restart`` is the highest restart seen (0: only the first run).
    """

    worker: str
    node: str
    checks: tuple[RestartCheck, ...]
    reported_seen: int
    reported_expected: int
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    last_restart: int = 0
    # Like problems, but the node's fault, not the kubelet's (an overdue
    # restart while the node was not observed): the verdict is an error.
    errors: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return not self.problems and not self.errors and all(c.passed for c in self.checks)

    @property
    def in_error(self) -> bool:
        """Not passed, yet nothing the kubelet can be blamed for: every failure is an error."""
        return (
            not self.passed and not self.problems and all(c.passed or c.error for c in self.checks)
        )

    @property
    def failures(self) -> list[str]:
        """One human message per failure, naming the worker and the restart."""
        messages = [f"{self.worker}: {p}" for p in (*self.problems, *self.errors)]
        messages += [_failure_message(self.worker, c) for c in self.checks if not c.passed]
        return messages


def waited_restarts(checks: Sequence[RestartCheck]) -> list[RestartCheck]:
    """The measured restarts that waited out a back-off, the ones an overshoot is taken over.

    Restart 1 (and the first restart after a curve reset, ``curve_n == 1``)
    does not wait: its margin is the bare restart latency and would drag a
    median of the back-off overshoot down. Unmeasured restarts have no margin.
    """
    return [c for c in checks if c.curve_n >= 2 and c.margin_s is not None]


@dataclass(frozen=True, kw_only=True)
class Observation:
    """How far one worker had to be, and was, observed: what completeness is judged against.

    ``required_restarts`` is the highest restart the profile needs (0: none,
    judge what was seen). ``now_ns`` is the node's clock when the judgement is
    made (the end of the observation, or a moment during it); with it, a
    restart whose window has closed without it is overdue. ``pending_reported_s``
    is the back-off the kubelet reports for the restart after the last one
    seen, which has not happened yet (None when not seen).
    """

    required_restarts: int = 0
    now_ns: int | None = None
    pending_reported_s: float | None = None
    # Node-clock spans (ns) in which the node was not observed (see the recorder).
    unobserved: tuple[tuple[int, int], ...] = ()
    # Host-clock spans (ns) in which the host's CPUs were saturated, with the
    # busiest share (a kind node's clock is the host's).
    saturated: tuple[tuple[int, int, float], ...] = ()


# Judge what was recorded, nothing more: no completeness, no overdue check.
AS_RECORDED: Final = Observation()


def judge_worker(
    attempts: Sequence[AttemptRecord],
    curve: BackoffCurve,
    *,
    worker: str | None = None,
    node: str | None = None,
    observation: Observation = AS_RECORDED,
    confirm_levels: bool = True,
) -> WorkerVerdict:
    """Check every restart of one container against ``curve``.

    ``worker`` and ``node`` default to the records' own. With
    ``confirm_levels`` a restart whose back-off is :data:`CONFIRM_FROM` or more
    fails when its reported level was not seen. Raises ValueError when the
    records mix containers or pods, or repeat an attempt: that is a caller's
    mistake (read them through :func:`harness.recording.records.read_attempts`), not
    something the kubelet did.
    """
    by_attempt = _index(attempts)
    first = next(iter(by_attempt.values()), None)
    worker = worker if worker is not None else (first.worker if first else "")
    node = node if node is not None else (first.node if first else "")
    if first is None:
        return WorkerVerdict(
            worker=worker,
            node=node,
            checks=(),
            reported_seen=0,
            reported_expected=0,
            problems=("no container attempt was recorded: the pod never ran its container",),
        )

    checks: list[RestartCheck] = []
    problems, notes = _api_cross_check(by_attempt.values())
    curve_n = 0
    for n in range(1, max(by_attempt) + 1):
        previous, current = by_attempt.get(n - 1), by_attempt.get(n)
        positions, note = _curve_positions(curve, previous, curve_n + 1, n)
        if note:
            notes.append(note)
        check = _check(
            curve,
            n,
            positions,
            previous,
            current,
            confirm_levels=confirm_levels,
            unobserved=observation.unobserved,
            saturated=observation.saturated,
        )
        curve_n = check.curve_n
        checks.append(check)

    last = max(by_attempt)
    pending_problems, errors = _pending_problems(curve, by_attempt[last], curve_n, observation)
    problems += pending_problems
    evidence_problems, evidence_errors = _evidence_problems(
        curve, checks, by_attempt, confirm_levels=confirm_levels, saturated=observation.saturated
    )
    problems += evidence_problems
    errors += evidence_errors
    expected_reports = [c for c in checks if curve.expected_reported_backoff(c.curve_n) is not None]
    return WorkerVerdict(
        worker=worker,
        node=node,
        checks=tuple(checks),
        reported_seen=sum(c.reported_s is not None for c in expected_reports),
        reported_expected=len(expected_reports),
        problems=tuple(problems),
        notes=tuple(notes),
        last_restart=last,
        errors=tuple(errors),
    )


def _pending_problems(
    curve: BackoffCurve, last: AttemptRecord, curve_n: int, observation: Observation
) -> tuple[list[str], list[str]]:
    """What is wrong about the restart after the last one seen: missing, overdue, misreported.

    Problems, then errors (overdue only across a span the node was not observed).
    """
    n = last.attempt + 1
    positions, _ = _curve_positions(curve, last, curve_n + 1, n)
    problems: list[str] = []
    reported = observation.pending_reported_s
    if reported is not None:
        levels = [curve.expected_reported_backoff(p) for p in positions]
        if not any(_same_level(reported, level) for level in levels):
            expected = " or ".join("none" if lv is None else _td(lv) for lv in levels)
            problems.append(
                f"restart {n} (pending): the kubelet reports a {reported:g}s back-off, "
                f"the model expects {expected}"
            )
    seen = (
        f"the last restart seen was {last.attempt}"
        if last.attempt
        else "only the first run was seen (no restart)"
    )
    if last.finished_at_ns is not None and observation.now_ns is not None:
        # The most lenient reading: a long run may or may not have reset the curve.
        upper_ns = max(
            to_ns(curve.upper_tolerance(curve.delay_before_restart(p))) for p in positions
        )
        due_ns = last.finished_at_ns + upper_ns
        nominal_ns = min(to_ns(curve.delay_before_restart(p)) for p in positions)
        gap = _machine_lateness(
            observation.unobserved,
            observation.saturated,
            last.finished_at_ns,
            observation.now_ns,
            busy_from_ns=last.finished_at_ns + nominal_ns,
            excess_ns=observation.now_ns - due_ns,
        )
        if observation.now_ns > due_ns and gap is not None:
            return problems, [f"error: restart {n} overdue, but {gap}"]
        if observation.now_ns > due_ns:
            return [
                *problems,
                f"restart {n} overdue: attempt {last.attempt} exited at {_s(last.finished_at_ns)} "
                f"(Unix), so restart {n} was due by {_s(due_ns)}; none by "
                f"{_s(observation.now_ns)}, {_s(observation.now_ns - due_ns)} past its bound "
                f"({seen})",
            ], []
    if last.attempt < observation.required_restarts:
        state = "still running" if last.finished_at_ns is None else "exited, waiting"
        problems.append(
            f"incomplete: the observation ended before restart {n} "
            f"(the profile needs restarts up to {observation.required_restarts}); "
            f"{seen}, attempt {last.attempt} {state}"
        )
    return problems, []


def _evidence_problems(
    curve: BackoffCurve,
    checks: Sequence[RestartCheck],
    by_attempt: Mapping[int, AttemptRecord],
    *,
    confirm_levels: bool,
    saturated: Sequence[tuple[int, int, float]],
) -> tuple[list[str], list[str]]:
    """What the worker's restarts together fail to show: its levels, a sound cap.

    Problems, then errors (the cap's median overshoot while the host was
    saturated through most of those restarts: the machine's lateness).
    """
    problems: list[str] = []
    waited = [
        c
        for c in checks
        if c.measured_s is not None and curve.expected_reported_backoff(c.curve_n) is not None
    ]
    seen = sum(c.reported_s is not None for c in waited)
    if confirm_levels and len(waited) >= LEVEL_SHARE_FROM and seen < LEVEL_SHARE_MIN * len(waited):
        problems.append(
            f"levels unconfirmed: the kubelet's back-off level was seen before {seen} of the "
            f"{len(waited)} restarts that waited one; at least {LEVEL_SHARE_MIN:.0%} must show "
            "it (bound level_share_min), or a kubelet at a neighbouring level passes on its "
            "delays alone"
        )
    if curve.requeue != AT_EXPIRY:
        return problems, []
    cap_s = curve.maximum.total_seconds()
    at_cap = [c for c in waited if c.curve_n >= 2 and c.expected_s == cap_s]
    margins = [c.margin_s for c in at_cap if c.margin_s is not None]
    if len(margins) < CAP_MEDIAN_FROM:
        return problems, []
    median = statistics.median(margins)
    if median <= CAP_MEDIAN_OVERSHOOT:
        return problems, []
    message = (
        f"the {len(margins)} restarts at the {_td(curve.maximum)} cap came {median:.3f}s past "
        f"it in median, over the {CAP_MEDIAN_OVERSHOOT:g}s a kubelet keeping to "
        f"{_td(curve.maximum)} shows (bound cap_median_overshoot): is its cap longer?"
    )
    busy = [c for c in at_cap if _saturated_during(saturated, by_attempt, c.n)]
    if 2 * len(busy) > len(at_cap):
        return problems, [
            f"error: {message} But the host was saturated during {len(busy)} of them: "
            "the machine's lateness, not the kubelet's alone"
        ]
    return [*problems, message], []


def _saturated_during(
    saturated: Sequence[tuple[int, int, float]], by_attempt: Mapping[int, AttemptRecord], n: int
) -> bool:
    """Whether the host was saturated between attempt n-1's exit and restart n."""
    previous, current = by_attempt.get(n - 1), by_attempt.get(n)
    if previous is None or current is None or previous.finished_at_ns is None:
        return False
    start, end = previous.finished_at_ns, _decided_at(current)
    return any(a < end and b > start for a, b, _ in saturated)


def _same_level(reported: float, level: timedelta | None) -> bool:
    return level is not None and abs(reported - level.total_seconds()) <= _REPORTED_EPSILON_S


def restarts_needed(
    curve: BackoffCurve,
    min_restarts: int | None = None,
    until_delay: timedelta | None = None,
) -> int:
    """The highest restart a worker must show before it can be judged.

    At least ``min_restarts`` restarts and, with ``until_delay``, the first
    restart whose nominal wait reaches that delay. With neither, the default
    is to see the curve reach its cap once. Resets are not modelled here: a
    container that keeps resetting never gets there and fails as incomplete.
    """
    if min_restarts is None and until_delay is None:
        until_delay = curve.maximum
    needed = min_restarts or 0
    if until_delay is not None:
        if until_delay > curve.maximum:
            raise ValueError(
                f"the curve never waits {format_duration(until_delay)}: its maximum is "
                f"{format_duration(curve.maximum)}"
            )
        n = 1
        while curve.delay_before_restart(n) < until_delay:
            n += 1
        needed = max(needed, n)
    return needed


def observed_enough(
    attempts: Sequence[AttemptRecord],
    curve: BackoffCurve,
    min_restarts: int | None = None,
    until_delay: timedelta | None = None,
) -> bool:
    """Whether a worker has been watched long enough to judge it: restart :func:`restarts_needed`.

    The level of the restart after it is judged when it was seen, not waited
    for: the v1.35 kubelet requeues a pod in back-off at the expiry and often
    posts the pending level only in the sync that restarts the container, so
    waiting for it could add a whole back-off to every check.
    """
    needed = restarts_needed(curve, min_restarts, until_delay)
    # Attempt n exists only once restart n has happened.
    return max((a.attempt for a in attempts), default=-1) >= needed


def _index(attempts: Sequence[AttemptRecord]) -> dict[int, AttemptRecord]:
    by_attempt: dict[int, AttemptRecord] = {}
    for record in attempts:
        first = next(iter(by_attempt.values()), record)
        if (record.pod_uid, record.container) != (first.pod_uid, first.container):
            raise ValueError(
                "judge one container at a time: got "
                f"{first.pod}/{first.container} (uid {first.pod_uid}) and "
                f"{record.pod}/{record.container} (uid {record.pod_uid})"
            )
        if record.attempt in by_attempt:
            raise ValueError(
                f"attempt {record.attempt} of {record.pod}/{record.container} appears twice; "
                "read records with harness.recording.records.read_attempts, which keeps the latest"
            )
        by_attempt[record.attempt] = record
    return dict(sorted(by_attempt.items()))


def _curve_positions(
    curve: BackoffCurve, previous: AttemptRecord | None, next_position: int, n: int
) -> tuple[tuple[int, ...], str | None]:
    """Candidate curve positions for restart n, most likely first, and why.

    A run longer than the curve's reset_after makes the kubelet forget the
    back-off: the restart after it is immediate, like restart 1, and the curve
    starts over from there.
    """
    if previous is None or previous.finished_at_ns is None:
        return (next_position,), None
    run_ns = previous.finished_at_ns - previous.started_at_ns
    reset_ns = to_ns(curve.reset_after)
    run = f"{run_ns / NS_PER_S:.3f}s"
    if run_ns > reset_ns:
        return (1,), (
            f"restart {n}: attempt {n - 1} ran {run}, over the "
            f"{format_duration(curve.reset_after)} reset threshold, so the kubelet "
            "resets the back-off: restart immediately, then the curve starts over"
        )
    if next_position > 1 and reset_ns - to_ns(RESET_LEAD) < run_ns:
        return (next_position, 1), (
            f"restart {n}: attempt {n - 1} ran {run}, within {format_duration(RESET_LEAD)} "
            f"of the {format_duration(curve.reset_after)} reset threshold; "
            "a reset is accepted as well as none"
        )
    return (next_position,), None


def _check(
    curve: BackoffCurve,
    n: int,
    positions: tuple[int, ...],
    previous: AttemptRecord | None,
    current: AttemptRecord | None,
    *,
    confirm_levels: bool,
    unobserved: Sequence[tuple[int, int]] = (),
    saturated: Sequence[tuple[int, int, float]] = (),
) -> RestartCheck:
    """The best-fitting reading of restart n among the candidate positions."""
    candidates = [
        _check_at(
            curve,
            n,
            p,
            previous,
            current,
            confirm_levels=confirm_levels,
            unobserved=unobserved,
            saturated=saturated,
        )
        for p in positions
    ]
    return next((c for c in candidates if c.passed), candidates[0])


def _check_at(
    curve: BackoffCurve,
    n: int,
    position: int,
    previous: AttemptRecord | None,
    current: AttemptRecord | None,
    *,
    confirm_levels: bool,
    unobserved: Sequence[tuple[int, int]] = (),
    saturated: Sequence[tuple[int, int, float]] = (),
) -> RestartCheck:
    expected = curve.delay_before_restart(position)
    expected_ns = to_ns(expected)
    upper_ns = to_ns(curve.upper_tolerance(expected))
    reported = current.reported_backoff_s if current else None
    problems: list[str] = []

    delay_ns: int | None = None
    error = False
    if current is None:
        problems.append(f"attempt {n} was never recorded (the recorder missed it)")
    if previous is None:
        problems.append(
            f"attempt {n - 1} was never recorded, so the exit this restart waits from is unknown"
        )
    elif previous.finished_at_ns is None:
        problems.append(
            f"attempt {n - 1} has no recorded finish time, so the wait before attempt {n} "
            "cannot be measured"
        )
    if current is not None and previous is not None and previous.finished_at_ns is not None:
        delay_ns = _decided_at(current) - previous.finished_at_ns
        if delay_ns < expected_ns - to_ns(CLOCK_ROUNDING):
            problems.append(
                f"too early: restarted (created) after {_s(delay_ns)}, before the {_td(expected)} "
                "back-off had passed"
            )
        elif delay_ns > upper_ns and (
            gap := _machine_lateness(
                unobserved,
                saturated,
                previous.finished_at_ns,
                _decided_at(current),
                busy_from_ns=previous.finished_at_ns + expected_ns,
                excess_ns=delay_ns - upper_ns,
            )
        ):
            # Late, but the node (or the host under it) was not running as it should meanwhile.
            error = True
            problems.append(
                f"error: restarted (created) after {_s(delay_ns)}, over the {_s(upper_ns)} "
                f"upper bound, but {gap}"
            )
        elif delay_ns > upper_ns:
            problems.append(
                f"too late: restarted (created) after {_s(delay_ns)}, "
                f"over the {_s(upper_ns)} upper bound"
            )

    expected_reported = curve.expected_reported_backoff(position)
    if reported is not None:
        if expected_reported is None:
            problems.append(
                f"the kubelet reported a {reported:g}s back-off, but restart {position} "
                "of the curve does not wait"
            )
        elif abs(reported - expected_reported.total_seconds()) > _REPORTED_EPSILON_S:
            problems.append(
                f"the kubelet reported a {reported:g}s back-off, "
                f"the model expects {_td(expected_reported)}"
            )
    elif (
        confirm_levels
        and current is not None
        and expected_reported is not None
        and expected_reported >= CONFIRM_FROM
    ):
        problems.append(
            f"unconfirmed: the kubelet's reported back-off for restart {n} was not seen, and "
            f"without it a {_td(expected_reported)} level cannot be told from its neighbours"
        )

    return RestartCheck(
        n=n,
        expected_s=expected_ns / NS_PER_S,
        measured_s=None if delay_ns is None else delay_ns / NS_PER_S,
        margin_s=None if delay_ns is None else (delay_ns - expected_ns) / NS_PER_S,
        upper_bound_s=upper_ns / NS_PER_S,
        reported_s=reported,
        passed=not problems,
        reason="; ".join(problems) or _pass_reason(n, position),
        curve_n=position,
        start_latency_s=_start_latency_s(current),
        error=error and len(problems) == 1,
    )


def _unobserved_within(spans: Sequence[tuple[int, int]], start_ns: int, end_ns: int) -> str | None:
    """How the node went unobserved between two moments, None when it was observed throughout."""
    overlapping = [(a, b) for a, b in spans if a < end_ns and b > start_ns]
    if not overlapping:
        return None
    longest = max(overlapping, key=lambda span: span[1] - span[0])
    return (
        f"node frozen {_s(longest[1] - longest[0])} at {_s(longest[0])} (Unix): no listing of "
        "it in that span, so the delay is not the kubelet's alone"
    )


def _machine_lateness(
    unobserved: Sequence[tuple[int, int]],
    saturated: Sequence[tuple[int, int, float]],
    start_ns: int,
    end_ns: int,
    *,
    busy_from_ns: int,
    excess_ns: int,
) -> str | None:
    """Why a restart late between two moments is the machine's, None when nothing says so.

    A node not observed (frozen, paused) from the exit on comes first: a
    paused kubelet's timers do not fire. Then a host whose CPUs were
    saturated once the back-off had passed (``busy_from_ns``): load during the
    wait cannot make a restart late, only load once it is due. It excuses only
    as much lateness as it lasted: a restart ``excess_ns`` past its bound needs
    at least that long of it (a busy second cannot account for a minute overdue).
    """
    frozen = _unobserved_within(unobserved, start_ns, end_ns)
    if frozen is not None:
        return frozen
    busy = [(a, b, share) for a, b, share in saturated if a < end_ns and b > busy_from_ns]
    saturated_ns = sum(min(b, end_ns) - max(a, busy_from_ns) for a, b, _ in busy)
    if not busy or saturated_ns < excess_ns:
        return None
    busiest = max(share for _, _, share in busy)
    first = max(min(a for a, _, _ in busy), busy_from_ns)
    return (
        f"the host was saturated (its CPUs {busiest:.0%} busy) for {_s(saturated_ns)} after "
        f"{_s(first)} (Unix), once the back-off had passed: the delay is the machine's "
        "lateness, not the kubelet's alone"
    )


def _decided_at(record: AttemptRecord) -> int:
    """When the kubelet restarted: the container's creation, its start where that is unknown."""
    return record.created_at_ns if record.created_at_ns is not None else record.started_at_ns


def _start_latency_s(record: AttemptRecord | None) -> float | None:
    if record is None or record.created_at_ns is None:
        return None
    return (record.started_at_ns - record.created_at_ns) / NS_PER_S


def _pass_reason(n: int, position: int) -> str:
    if position == n:
        return "on the curve"
    return f"on the curve, at its restart {position} after a reset"


def _api_cross_check(records: Iterable[AttemptRecord]) -> tuple[list[str], list[str]]:
    """Problems and notes where the pod status's whole seconds disagree with the runtime.

    The kubelet copies the runtime's times into pod status truncated to the
    second, so the two agree on the whole second. Within :data:`API_ROUNDING`
    a difference is a note; beyond it the record mixes up two attempts (or a
    source changed), the evidence is contradictory, and that is a failure.
    """
    problems: list[str] = []
    notes: list[str] = []
    for record in records:
        pairs = (
            ("startedAt", record.started_at_ns, record.api_started_at),
            ("finishedAt", record.finished_at_ns, record.api_finished_at),
        )
        for name, cri_ns, api_text in pairs:
            if cri_ns is None or api_text is None:
                continue
            try:
                api_ns = parse_rfc3339_nano(api_text)
            except CriFormatError as error:
                problems.append(f"attempt {record.attempt}: pod status {name} unreadable: {error}")
                continue
            if api_ns is not None and api_ns // NS_PER_S == cri_ns // NS_PER_S:
                continue
            source = "workload's report" if record.source == SOURCE_SELF else "runtime's"
            text = (
                f"attempt {record.attempt}: pod status {name} {api_text} disagrees with the "
                f"{source} {_s(cri_ns)} (Unix)"
            )
            # The workload reports its own start a little after the runtime's (its
            # main runs later) and its exit a little before: the API, which copies
            # the runtime's, may then be a second off.
            allowed = API_ROUNDING + (SELF_REPORT_SLACK if record.source == SOURCE_SELF else ZERO)
            if api_ns is not None and abs(api_ns - cri_ns) <= to_ns(allowed):
                notes.append(f"{text}, within the API's {_td(API_ROUNDING)} rounding")
            else:
                problems.append(f"{text} beyond the API's {_td(API_ROUNDING)} rounding")
    return problems, notes


def _failure_message(worker: str, check: RestartCheck) -> str:
    measured = "not measured" if check.measured_s is None else f"measured {check.measured_s:.3f}s"
    return (
        f"{worker}: restart {check.n}: expected {check.expected_s:g}s "
        f"(accepting up to {check.upper_bound_s:g}s), {measured}: {check.reason}"
    )


def _s(ns: int) -> str:
    return f"{ns / NS_PER_S:.3f}s"


def _td(value: timedelta) -> str:
    return format_duration(value)
