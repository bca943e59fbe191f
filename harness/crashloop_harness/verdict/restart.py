"""The verdict on one restart: its delay against the curve's window, its reported level.

Restart n is the creation of attempt n; its delay runs from attempt n-1's
exit. A run past the curve's reset threshold may start the curve over, so a
restart may be read at more than one curve position, the best fit kept.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from crashloop_harness.model.backoff import UNMEASURED, BackoffCurve, CostAllowance
from crashloop_harness.model.durations import NS_PER_S, format_duration, to_ns
from crashloop_harness.recording.nodepods import PodStartup
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.verdict.failures import Failure, Rule
from crashloop_harness.verdict.lateness import (
    busy_host_reach_ns,
    machine_lateness,
    started_beside,
)
from crashloop_harness.verdict.levels import level_problem as level_problem_of
from crashloop_harness.verdict.slowness import NODE_TOO_SLOW, NODE_UNMEASURED, NodeSlowness
from crashloop_harness.verdict.tolerances import (
    CLOCK_ROUNDING,
    RESET_LEAD,
    dur,
    secs,
)

# The rules one restart is checked against, each with what its failure means.
TOO_EARLY = Rule(
    "too-early",
    "the kubelet restarted before its backoff had passed (a shorter curve than the "
    "live config implies)",
)
TOO_LATE = Rule("too-late", "the kubelet restarted later than its backoff allows")
# Not judged: the restart was late while its node was not observed or its host
# saturated. The check observes on for a restart in its place (see runs.check).
SET_ASIDE = Rule(
    "set-aside",
    "a restart late while its node was not observed or its host saturated is set aside, "
    "not judged: the check observes longer for one in its place",
)
NOT_MEASURED = Rule(
    "not-measured",
    "an attempt was not recorded, so the delay could not be measured: a recorder "
    "problem, not a kubelet verdict",
)


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
    # Every rule it failed, the most telling first (``reason`` joins their words).
    failures: tuple[Failure, ...] = ()
    # Why the restart's delay was not judged (late across a span its node was not
    # observed or its host saturated); None when it was judged.
    set_aside: str | None = None

    @property
    def code(self) -> str:
        """Its headline failure's code; empty when it passed."""
        return self.failures[0].code if self.failures else ""


def waited_restarts(checks: Sequence[RestartCheck]) -> list[RestartCheck]:
    """The measured restarts that waited out a back-off, the ones an overshoot is taken over.

    Restart 1 (and the first restart after a curve reset, ``curve_n == 1``)
    does not wait: its margin is the bare restart latency and would drag a
    median of the back-off overshoot down. Unmeasured restarts have no margin.
    """
    return [c for c in checks if c.curve_n >= 2 and c.margin_s is not None]


def curve_positions(
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


def check_restart(
    curve: BackoffCurve,
    n: int,
    positions: tuple[int, ...],
    previous: AttemptRecord | None,
    current: AttemptRecord | None,
    *,
    confirm_levels: bool,
    unobserved: Sequence[tuple[int, int]] = (),
    saturated: Sequence[tuple[int, int, float]] = (),
    startups: Sequence[PodStartup] = (),
    allowance: CostAllowance = UNMEASURED,
    node_slow: NodeSlowness | None = None,
    levels_until_ns: int | None = None,
) -> RestartCheck:
    """The best-fitting reading of restart n among the candidate positions.

    ``allowance`` is what the restart may cost its node (crashloop_harness.verdict.nodecost);
    ``startups`` other pods' start-ups on its node (crashloop_harness.recording.nodepods);
    ``node_slow`` says what of the verdict the node was too slow to deliver;
    ``levels_until_ns`` when the watch that reads levels stopped (node clock): a
    restart decided after it is not asked for its level.
    """
    # The run's last listing can find a restart made after the level watch stopped
    # (found on a sound reduced worker's 1m level, the last restart of two demo runs).
    after_watch = (
        current is not None
        and levels_until_ns is not None
        and decided_at(current) > levels_until_ns
    )
    confirm_levels = confirm_levels and not after_watch
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
            startups=startups,
            allowance=allowance,
            node_slow=node_slow or NodeSlowness(),
        )
        for p in positions
    ]
    chosen = next((c for c in candidates if c.passed), candidates[0])
    level = curve.expected_reported_backoff(chosen.curve_n)
    if after_watch and chosen.passed and chosen.reported_s is None and level is not None:
        # A pass says what it did not cover: this level was never readable.
        return dataclasses.replace(
            chosen, reason=f"{chosen.reason}; its level not read: made after the watch stopped"
        )
    return chosen


def _check_at(
    curve: BackoffCurve,
    n: int,
    position: int,
    previous: AttemptRecord | None,
    current: AttemptRecord | None,
    *,
    confirm_levels: bool,
    unobserved: Sequence[tuple[int, int]],
    saturated: Sequence[tuple[int, int, float]],
    startups: Sequence[PodStartup],
    allowance: CostAllowance,
    node_slow: NodeSlowness,
) -> RestartCheck:
    expected = curve.delay_before_restart(position)
    expected_ns = to_ns(expected)
    upper_ns = to_ns(curve.upper_tolerance(expected, allowance))
    reported = current.reported_backoff_s if current else None
    problems: list[Failure] = []

    delay_ns: int | None = None
    if current is None:
        problems.append(
            NOT_MEASURED.failed(
                f"attempt {n} was never recorded (the recorder missed it)", restart=n
            )
        )
    if previous is None:
        problems.append(
            NOT_MEASURED.failed(
                f"attempt {n - 1} was never recorded, so the exit this restart waits from is "
                "unknown",
                restart=n,
            )
        )
    elif previous.finished_at_ns is None:
        problems.append(
            NOT_MEASURED.failed(
                f"attempt {n - 1} has no recorded finish time, so the wait before attempt {n} "
                "cannot be measured",
                restart=n,
            )
        )
    set_aside: str | None = None
    if current is not None and previous is not None and previous.finished_at_ns is not None:
        delay_ns = decided_at(current) - previous.finished_at_ns
        found = _delay_problems(
            n,
            delay_ns,
            expected,
            upper_ns,
            exited_ns=previous.finished_at_ns,
            decided_ns=decided_at(current),
            unobserved=unobserved,
            saturated=saturated,
            startups=startups,
            allowance=allowance,
            node_slow=node_slow,
        )
        set_aside = next((f.words for f in found if f.code == SET_ASIDE.code), None)
        problems += [f for f in found if f.code != SET_ASIDE.code]

    level_problem = level_problem_of(
        curve,
        n,
        position,
        reported,
        confirm_levels=confirm_levels and current is not None,
        node_slow=node_slow,
    )
    if level_problem is not None:
        problems.append(level_problem)

    return RestartCheck(
        n=n,
        expected_s=expected_ns / NS_PER_S,
        measured_s=None if delay_ns is None else delay_ns / NS_PER_S,
        margin_s=None if delay_ns is None else (delay_ns - expected_ns) / NS_PER_S,
        upper_bound_s=upper_ns / NS_PER_S,
        reported_s=reported,
        passed=not problems,
        reason="; ".join(p.words for p in problems) or set_aside or _pass_reason(n, position),
        curve_n=position,
        start_latency_s=latency_of(current),
        error=bool(problems) and all(p.error for p in problems),
        failures=tuple(problems),
        set_aside=set_aside,
    )


def _delay_problems(
    n: int,
    delay_ns: int,
    expected: timedelta,
    upper_ns: int,
    *,
    exited_ns: int,
    decided_ns: int,
    unobserved: Sequence[tuple[int, int]],
    saturated: Sequence[tuple[int, int, float]],
    startups: Sequence[PodStartup],
    allowance: CostAllowance,
    node_slow: NodeSlowness,
) -> list[Failure]:
    """What is wrong with restart n's delay: too early, too late, or late for the node's sake."""
    expected_ns = to_ns(expected)
    numbers = {"measured_s": delay_ns / NS_PER_S, "upper_bound_s": upper_ns / NS_PER_S}
    if delay_ns < expected_ns - to_ns(CLOCK_ROUNDING):
        return [
            TOO_EARLY.failed(
                f"too early: restarted (created) after {secs(delay_ns)}, "
                f"before the {dur(expected)} back-off had passed",
                restart=n,
                numbers=numbers,
            )
        ]
    if delay_ns <= upper_ns:
        return []
    excess_ns = delay_ns - upper_ns
    reach_ns = busy_host_reach_ns(allowance, first=expected_ns == 0)
    gap = machine_lateness(
        unobserved,
        saturated,
        exited_ns,
        decided_ns,
        busy_from_ns=exited_ns + expected_ns,
        excess_ns=excess_ns,
        busy_reach_ns=reach_ns,
    ) or started_beside(
        startups, exited_ns + expected_ns, decided_ns, excess_ns=excess_ns, reach_ns=reach_ns
    )
    late = f"restarted (created) after {secs(delay_ns)}, over the {secs(upper_ns)} upper bound"
    if gap:
        # Late, but the node (or the host under it) was not running as it should
        # meanwhile, or was starting other pods: neither a pass nor the kubelet's failure.
        # Not judged; the check observes on for a restart in its place.
        return [SET_ASIDE.failed(f"set aside: {late}, but {gap}", restart=n, numbers=numbers)]
    node_s = _node_s_lateness(node_slow, late, excess_ns=excess_ns, reach_ns=reach_ns)
    if node_s is not None:
        rule, words = node_s
        return [rule.failed(words, restart=n, error=True, numbers=numbers)]
    return [
        TOO_LATE.failed(f"too late: {late}{allowance_note(allowance)}", restart=n, numbers=numbers)
    ]


def _node_s_lateness(
    node_slow: NodeSlowness, late: str, *, excess_ns: int, reach_ns: int
) -> tuple[Rule, str] | None:
    """Why a late restart is no verdict on its kubelet for its node's sake (the rule and its
    words), None when the node can be judged."""
    if node_slow.too_slow is not None:
        return NODE_TOO_SLOW, f"error: {late}, but {node_slow.too_slow}"
    if node_slow.unmeasured is not None and excess_ns <= reach_ns:
        # A node as slow as the slowest the verdict judges makes a sound kubelet this late.
        return NODE_UNMEASURED, (
            f"error: {late}, but {node_slow.unmeasured}, and a node at the slowest pace "
            f"judged may take {secs(reach_ns)} longer: not the kubelet's failure"
        )
    return None


def allowance_note(allowance: CostAllowance) -> str:
    """What a measured node's bound was made of, for a failure message."""
    if not allowance.measured:
        return ""
    return (
        f" (its node's restart cost, measured in this run, is {allowance.slowdown:.2f}x the "
        "reference host's)"
    )


def decided_at(record: AttemptRecord) -> int:
    """When the kubelet restarted: the container's creation, its start where that is unknown."""
    return record.created_at_ns if record.created_at_ns is not None else record.started_at_ns


def latency_of(record: AttemptRecord | None) -> float | None:
    if record is None or record.created_at_ns is None:
        return None
    return (record.started_at_ns - record.created_at_ns) / NS_PER_S


def _pass_reason(n: int, position: int) -> str:
    if position == n:
        return "on the curve"
    return f"on the curve, at its restart {position} after a reset"
