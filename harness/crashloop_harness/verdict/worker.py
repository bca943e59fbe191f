"""The verdict on one worker's container: every restart, completeness, overdue, evidence."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Final

from crashloop_harness.model.backoff import UNMEASURED, BackoffCurve, CostAllowance
from crashloop_harness.model.durations import format_duration, to_ns
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.verdict.apicheck import api_cross_check
from crashloop_harness.verdict.evidence import evidence_problems
from crashloop_harness.verdict.lateness import machine_lateness
from crashloop_harness.verdict.nodecost import NodeCost
from crashloop_harness.verdict.restart import (
    NodeSlowness,
    RestartCheck,
    check_restart,
    curve_positions,
)
from crashloop_harness.verdict.tolerances import (
    REPORTED_EPSILON_S,
    SLOW_LEVELS_FROM,
    clock,
    dur,
    secs,
)


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
    # What a restart cost the node in the run, the bounds were made from (None:
    # the reference host's cost was assumed).
    cost: NodeCost | None = None

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
        messages += [failure_message(self.worker, c) for c in self.checks if not c.passed]
        return messages


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
    # When the runtime created the restart after the last one seen, which has not
    # started yet (a slow runtime): the kubelet's decision, made then.
    pending_created_ns: int | None = None
    # Node-clock spans (ns) in which the node was not observed (see the recorder).
    unobserved: tuple[tuple[int, int], ...] = ()
    # Host-clock spans (ns) in which the host's CPUs were saturated, with the
    # busiest share (a kind node's clock is the host's).
    saturated: tuple[tuple[int, int, float], ...] = ()
    # What a restart costs the node, measured in the run; None: the reference
    # host's cost (the sources' terms, restart 1 at a flat bound).
    cost: NodeCost | None = None
    # Node clock: when the watch that reads the kubelet's levels stopped. A restart
    # the run's last listing found after it cannot have shown its level.
    levels_until_ns: int | None = None

    @property
    def allowance(self) -> CostAllowance:
        return UNMEASURED if self.cost is None else self.cost.allowance

    def slowness(self, curve: BackoffCurve) -> NodeSlowness:
        """What of the verdict this node was too slow to deliver."""
        cost = self.cost
        if cost is None or not cost.measured:
            return NodeSlowness()
        too_slow = cost.too_slow_message(curve) if cost.too_slow else None
        levels = (
            f"node {cost.node} is {cost.slowdown:.2f}x slower than the reference host at "
            f"restarting (bound slow_levels_from {SLOW_LEVELS_FROM:g}x): its status writes, "
            "which carry the level, fall behind its restarts"
            if cost.levels_fall_behind
            else None
        )
        return NodeSlowness(too_slow=too_slow, levels=levels)


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
    together: bool = True,
) -> WorkerVerdict:
    """Check every restart of one container against ``curve``.

    ``worker`` and ``node`` default to the records' own. With
    ``confirm_levels`` a restart whose back-off is :data:`CONFIRM_FROM` or more
    fails when its reported level was not seen. With ``together``, the rules on
    the restarts taken together apply too (:mod:`crashloop_harness.verdict.evidence`: the
    share of levels seen, the cap's median); without, only what no later restart
    can undo is judged, as an early decision must be. Raises ValueError when the
    records mix containers or pods, or repeat an attempt: that is a caller's
    mistake (read them through :func:`crashloop_harness.recording.records.read_attempts`), not
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
    problems, notes = api_cross_check(by_attempt.values())
    curve_n = 0
    slowness = observation.slowness(curve)
    for n in range(1, max(by_attempt) + 1):
        previous, current = by_attempt.get(n - 1), by_attempt.get(n)
        positions, note = curve_positions(curve, previous, curve_n + 1, n)
        if note:
            notes.append(note)
        check = check_restart(
            curve,
            n,
            positions,
            previous,
            current,
            confirm_levels=confirm_levels,
            unobserved=observation.unobserved,
            saturated=observation.saturated,
            allowance=observation.allowance,
            node_slow=slowness,
            levels_until_ns=observation.levels_until_ns,
        )
        curve_n = check.curve_n
        checks.append(check)

    last = max(by_attempt)
    pending_problems, errors = _pending_problems(curve, by_attempt[last], curve_n, observation)
    problems += pending_problems
    if slowness.too_slow is not None:
        errors.append(f"error: {slowness.too_slow}")
    if together:
        found, found_errors = evidence_problems(
            curve,
            checks,
            by_attempt,
            confirm_levels=confirm_levels,
            saturated=observation.saturated,
            cost=observation.cost,
            node_slow=slowness,
        )
        problems += found
        errors += found_errors
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
        cost=observation.cost,
    )


def _pending_problems(
    curve: BackoffCurve, last: AttemptRecord, curve_n: int, observation: Observation
) -> tuple[list[str], list[str]]:
    """What is wrong about the restart after the last one seen: missing, overdue, misreported.

    Problems, then errors (overdue only across a span the node was not observed).
    """
    n = last.attempt + 1
    positions, _ = curve_positions(curve, last, curve_n + 1, n)
    problems: list[str] = []
    reported = observation.pending_reported_s
    if reported is not None:
        levels = [curve.expected_reported_backoff(p) for p in positions]
        if not any(same_level(reported, level) for level in levels):
            expected = " or ".join("none" if lv is None else dur(lv) for lv in levels)
            problems.append(
                f"restart {n} (pending): the kubelet reports a {reported:g}s back-off, "
                f"the model expects {expected}"
            )
    seen = (
        f"the last restart seen was {last.attempt}"
        if last.attempt
        else "only the first run was seen (no restart)"
    )
    overdue = _overdue(curve, last, positions, observation, seen)
    if overdue is not None:
        found, errors = overdue
        return [*problems, *found], errors
    if last.attempt < observation.required_restarts:
        state = "still running" if last.finished_at_ns is None else "exited, waiting"
        problems.append(
            f"incomplete: the observation ended before restart {n} "
            f"(the profile needs restarts up to {observation.required_restarts}); "
            f"{seen}, attempt {last.attempt} {state}"
        )
    return problems, []


def _overdue(
    curve: BackoffCurve,
    last: AttemptRecord,
    positions: tuple[int, ...],
    observation: Observation,
    seen: str,
) -> tuple[list[str], list[str]] | None:
    """The restart after ``last``, overdue on the node's clock: a failure, or an error while
    the node was not observed; None when it is not (yet) overdue."""
    n = last.attempt + 1
    if last.finished_at_ns is None or observation.now_ns is None:
        return None
    # The most lenient reading: a long run may or may not have reset the curve.
    upper_ns = max(
        to_ns(curve.upper_tolerance(curve.delay_before_restart(p), observation.allowance))
        for p in positions
    )
    due_ns = last.finished_at_ns + upper_ns
    created = observation.pending_created_ns
    # Created in time, not started yet: the runtime is slow to start it, which is
    # not the kubelet's lateness; its own check judges it once it has started.
    if observation.now_ns <= due_ns or (created is not None and created <= due_ns):
        return None
    nominal_ns = min(to_ns(curve.delay_before_restart(p)) for p in positions)
    gap = machine_lateness(
        observation.unobserved,
        observation.saturated,
        last.finished_at_ns,
        observation.now_ns,
        busy_from_ns=last.finished_at_ns + nominal_ns,
        excess_ns=observation.now_ns - due_ns,
    )
    if gap is not None:
        return [], [f"error: restart {n} overdue, but {gap}"]
    return [
        f"restart {n} overdue: attempt {last.attempt} exited at "
        f"{clock(last.finished_at_ns)}, so restart {n} was due by {clock(due_ns)}; none by "
        f"{clock(observation.now_ns)}, {secs(observation.now_ns - due_ns)} past its bound "
        f"({seen})"
    ], []


def same_level(reported: float, level: timedelta | None) -> bool:
    return level is not None and abs(reported - level.total_seconds()) <= REPORTED_EPSILON_S


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
                "read records with crashloop_harness.recording.records.read_attempts, which keeps "
                "the latest"
            )
        by_attempt[record.attempt] = record
    return dict(sorted(by_attempt.items()))


def failure_message(worker: str, check: RestartCheck) -> str:
    measured = "not measured" if check.measured_s is None else f"measured {check.measured_s:.3f}s"
    return (
        f"{worker}: restart {check.n}: expected {check.expected_s:g}s "
        f"(accepting up to {check.upper_bound_s:g}s), {measured}: {check.reason}"
    )
