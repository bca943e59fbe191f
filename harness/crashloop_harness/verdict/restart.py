"""The verdict on one restart: its delay against the curve's window, its reported level.

Restart n is the creation of attempt n; its delay runs from attempt n-1's
exit. A run past the curve's reset threshold may start the curve over, so a
restart may be read at more than one curve position, the best fit kept.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from crashloop_harness.model.backoff import UNMEASURED, BackoffCurve, CostAllowance
from crashloop_harness.model.durations import NS_PER_S, format_duration, to_ns
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.verdict.lateness import machine_lateness
from crashloop_harness.verdict.tolerances import (
    CLOCK_ROUNDING,
    CONFIRM_FROM,
    REPORTED_EPSILON_S,
    RESET_LEAD,
    dur,
    secs,
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
    allowance: CostAllowance = UNMEASURED,
    node_slow: NodeSlowness | None = None,
    levels_until_ns: int | None = None,
) -> RestartCheck:
    """The best-fitting reading of restart n among the candidate positions.

    ``allowance`` is what the restart may cost its node (crashloop_harness.verdict.nodecost);
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
    allowance: CostAllowance,
    node_slow: NodeSlowness,
) -> RestartCheck:
    expected = curve.delay_before_restart(position)
    expected_ns = to_ns(expected)
    upper_ns = to_ns(curve.upper_tolerance(expected, allowance))
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
        delay_ns = decided_at(current) - previous.finished_at_ns
        if delay_ns < expected_ns - to_ns(CLOCK_ROUNDING):
            problems.append(
                f"too early: restarted (created) after {secs(delay_ns)}, "
                f"before the {dur(expected)} back-off had passed"
            )
        elif delay_ns > upper_ns and (
            gap := machine_lateness(
                unobserved,
                saturated,
                previous.finished_at_ns,
                decided_at(current),
                busy_from_ns=previous.finished_at_ns + expected_ns,
                excess_ns=delay_ns - upper_ns,
            )
        ):
            # Late, but the node (or the host under it) was not running as it should meanwhile.
            error = True
            problems.append(
                f"error: restarted (created) after {secs(delay_ns)}, over the {secs(upper_ns)} "
                f"upper bound, but {gap}"
            )
        elif delay_ns > upper_ns and node_slow.too_slow is not None:
            error = True
            problems.append(
                f"error: restarted (created) after {secs(delay_ns)}, over the "
                f"{secs(upper_ns)} upper bound, but {node_slow.too_slow}"
            )
        elif delay_ns > upper_ns:
            problems.append(
                f"too late: restarted (created) after {secs(delay_ns)}, "
                f"over the {secs(upper_ns)} upper bound{allowance_note(allowance)}"
            )

    level_problem = _level_problem(
        curve,
        n,
        position,
        reported,
        confirm_levels=confirm_levels and current is not None,
        node_slow=node_slow,
    )
    if level_problem is not None:
        error = error or level_problem.startswith("error: ")
        problems.append(level_problem)

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
        start_latency_s=latency_of(current),
        error=error and all(p.startswith("error: ") for p in problems),
    )


@dataclass(frozen=True)
class NodeSlowness:
    """What of a verdict a slow node could not deliver, each a reason or None.

    ``too_slow``: the node's windows cannot tell the curve from its neighbour's,
    so lateness is an error; ``levels``: its status writes fall behind, so a
    level not seen is an error.
    """

    too_slow: str | None = None
    levels: str | None = None


def allowance_note(allowance: CostAllowance) -> str:
    """What a measured node's bound was made of, for a failure message."""
    if not allowance.measured:
        return ""
    return (
        f" (its node's restart cost, measured in this run, is {allowance.slowdown:.2f}x the "
        "reference host's)"
    )


def _level_problem(
    curve: BackoffCurve,
    n: int,
    position: int,
    reported: float | None,
    *,
    confirm_levels: bool,
    node_slow: NodeSlowness,
) -> str | None:
    """What is wrong with the level the kubelet reported for restart n, None when nothing."""
    expected_reported = curve.expected_reported_backoff(position)
    if reported is not None:
        # "back-off 0s" posted before an immediate restart is the model's level: none.
        expected_s = 0.0 if expected_reported is None else expected_reported.total_seconds()
        if abs(reported - expected_s) <= REPORTED_EPSILON_S:
            return None
        if expected_reported is None:
            return (
                f"the kubelet reported a {reported:g}s back-off, but restart {position} "
                "of the curve does not wait"
            )
        return (
            f"the kubelet reported a {reported:g}s back-off, "
            f"the model expects {dur(expected_reported)}"
        )
    if not confirm_levels or expected_reported is None or expected_reported < CONFIRM_FROM:
        return None
    unconfirmed = (
        f"the kubelet's reported back-off for restart {n} was not seen, and "
        f"without it a {dur(expected_reported)} level cannot be told from its neighbours"
    )
    if node_slow.levels is not None:
        # Not the kubelet's: its node's status writes fell behind its restarts.
        return f"error: {unconfirmed}, but {node_slow.levels}"
    return f"unconfirmed: {unconfirmed}"


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
