"""What a worker's restarts must show together: most of its levels, a sound median at its cap.

Restart by restart, a kubelet one level out can pass below CONFIRM_FROM: a
3 s kubelet told 2 s restarts inside the 2 s level's window. These rules
judge the restarts together (docs/verdict.md): the levels it reports catch a
3 s kubelet told 2 s; the cap's median, read on the kubelet's 1 s sync ticks,
catches a cap a doubling too long on its delays alone.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from crashloop_harness.model.backoff import REQUEUE_CAP, REQUEUE_FRACTION, BackoffCurve
from crashloop_harness.model.releases import AT_EXPIRY
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.verdict.failures import Failure, Rule
from crashloop_harness.verdict.firstrestart import FIRST_LATE, first_restart_problem
from crashloop_harness.verdict.medians import uniform_median_quantile
from crashloop_harness.verdict.nodecost import (
    REFERENCE_COST_MEDIAN_S,
    REFERENCE_START_S,
    NodeCost,
)
from crashloop_harness.verdict.restart import RestartCheck, decided_at
from crashloop_harness.verdict.samples import REFERENCE_START_P95_S
from crashloop_harness.verdict.slowness import ENVIRONMENT, NODE_TOO_SLOW, NodeSlowness
from crashloop_harness.verdict.tolerances import (
    CAP_MEDIAN_CONFIDENCE,
    CAP_MEDIAN_FROM,
    LEVEL_SHARE_FROM,
    LEVEL_SHARE_MIN,
    SYNC_TICK_S,
    dur,
)

LEVELS_UNCONFIRMED = Rule(
    "levels-unconfirmed",
    "too few restarts showed the kubelet's back-off level: a kubelet one level off its "
    "curve would pass on its delays alone",
)
START_LATE = Rule(
    "start-late",
    "the containers started later after their creation, in median, than the node's runtime "
    "takes: the kubelet waited between creating each container and starting it",
)
# A median of this many starts at least (the reference's p95 is its bound: a median of
# five sound starts passes it by chance about once in a thousand runs).
START_MEDIAN_FROM = 5
CAP_MEDIAN = Rule(
    "cap-median",
    "the restarts at the cap came further past it, in median, than a kubelet keeping to "
    "its cap shows: its cap is likely longer than the live config says",
)


def evidence_problems(
    curve: BackoffCurve,
    checks: Sequence[RestartCheck],
    by_attempt: Mapping[int, AttemptRecord],
    *,
    confirm_levels: bool,
    saturated: Sequence[tuple[int, int, float]],
    cost: NodeCost | None = None,
    node_slow: NodeSlowness | None = None,
) -> tuple[list[Failure], list[Failure]]:
    """What the worker's restarts together fail to show: its levels, a sound cap.

    Problems, then errors (the cap's median overshoot while the host was
    saturated through most of those restarts: the machine's lateness; what
    ``node_slow`` says the node was too slow to deliver).
    ``cost`` is the node's restart cost measured in the run: the cap's median
    may sit further past the cap on a node slower than the reference host.
    """
    waited = [
        c
        for c in checks
        if c.measured_s is not None and curve.expected_reported_backoff(c.curve_n) is not None
    ]
    slow = node_slow or NodeSlowness()
    problems, errors = _levels_and_starts(
        checks, waited, confirm_levels=confirm_levels, cost=cost, slow=slow
    )
    if curve.requeue != AT_EXPIRY:
        return problems, errors
    cap_s = curve.maximum.total_seconds()
    # A restart set aside (late while the host was saturated) is not judged here either.
    at_cap = [c for c in waited if c.curve_n >= 2 and c.expected_s == cap_s and c.set_aside is None]
    found = _cap_median_problem(curve, at_cap, cost)
    if found is None:
        return problems, errors
    message, numbers = found
    if slow.too_slow is not None:
        too_slow = f"error: {message} But {slow.too_slow}"
        return problems, [*errors, NODE_TOO_SLOW.failed(too_slow, error=True, numbers=numbers)]
    busy = [c for c in at_cap if _saturated_during(saturated, by_attempt, c.n)]
    if 2 * len(busy) > len(at_cap):
        saturated_words = (
            f"error: {message} But the host was saturated during {len(busy)} of them: "
            "the machine's lateness, not the kubelet's alone"
        )
        return problems, [
            *errors,
            ENVIRONMENT.failed(saturated_words, error=True, numbers=numbers),
        ]
    return [*problems, CAP_MEDIAN.failed(message, numbers=numbers)], errors


def _levels_unconfirmed(waited: Sequence[RestartCheck]) -> str | None:
    """Too few of the restarts that waited a level showed it, once enough should have."""
    seen = sum(c.reported_s is not None for c in waited)
    if len(waited) < LEVEL_SHARE_FROM or seen >= LEVEL_SHARE_MIN * len(waited):
        return None
    return (
        f"levels unconfirmed: the kubelet's back-off level was seen before {seen} of the "
        f"{len(waited)} restarts that waited one; at least {LEVEL_SHARE_MIN:.0%} must show "
        "it (bound level_share_min), or a kubelet at a neighbouring level passes on its "
        "delays alone"
    )


def _levels_and_starts(
    checks: Sequence[RestartCheck],
    waited: Sequence[RestartCheck],
    *,
    confirm_levels: bool,
    cost: NodeCost | None,
    slow: NodeSlowness,
) -> tuple[list[Failure], list[Failure]]:
    """The share of levels seen and the starts' median: problems, then the errors of a node
    too slow for them."""
    problems: list[Failure] = []
    errors: list[Failure] = []
    unconfirmed = _levels_unconfirmed(waited) if confirm_levels else None
    levels_slow = slow.levels or slow.too_slow
    if unconfirmed is not None and levels_slow is not None:
        errors.append(NODE_TOO_SLOW.failed(f"error: {unconfirmed}. But {levels_slow}", error=True))
    elif unconfirmed is not None:
        problems.append(LEVELS_UNCONFIRMED.failed(unconfirmed))
    late_start = _start_problem(checks, cost)
    if late_start is not None and slow.too_slow is not None:
        words, numbers = late_start
        errors.append(
            NODE_TOO_SLOW.failed(f"error: {words} But {slow.too_slow}", error=True, numbers=numbers)
        )
    elif late_start is not None:
        problems.append(START_LATE.failed(late_start[0], numbers=late_start[1]))
    late_first = first_restart_problem(cost)
    if late_first is not None and slow.too_slow is not None:
        words, numbers = late_first
        errors.append(
            NODE_TOO_SLOW.failed(f"error: {words} But {slow.too_slow}", error=True, numbers=numbers)
        )
    elif late_first is not None:
        problems.append(FIRST_LATE.failed(late_first[0], numbers=late_first[1]))
    return problems, errors


def _start_problem(
    checks: Sequence[RestartCheck], cost: NodeCost | None
) -> tuple[str, dict[str, float]] | None:
    """The restarts' starts (started - created) sit, in median, past what the node's runtime
    takes: the reference host's p95 times the node's pace, probed beside the kubelet.

    Nothing of the kubelet's but its own work runs between the two calls, so only a
    paced node is judged (a node measured by its own starts would excuse them).
    """
    if cost is None or not cost.paced:
        return None
    latencies = [
        c.start_latency_s for c in checks if c.start_latency_s is not None and c.set_aside is None
    ]
    if len(latencies) < START_MEDIAN_FROM:
        return None
    median = statistics.median(latencies)
    bound = REFERENCE_START_P95_S * cost.pace
    if median <= bound:
        return None
    words = (
        f"start late: the {len(latencies)} restarts started {median:.3f}s after their "
        f"creation in median, over the {bound:.3g}s the node's runtime takes (the reference "
        f"host's p95, bound reference_start_latency, times its pace {cost.pace:.2f}x, "
        "bound reference_pace)"
    )
    return words, {"start_median_s": median, "start_bound_s": bound}


def _cap_median_problem(
    curve: BackoffCurve, at_cap: Sequence[RestartCheck], cost: NodeCost | None
) -> tuple[str, dict[str, float]] | None:
    """The restarts at the cap sit, in median, further past it than a sound kubelet's do:
    the words, and the median and its bound (seconds)."""
    margins = [c.margin_s for c in at_cap if c.margin_s is not None]
    if len(margins) < CAP_MEDIAN_FROM:
        return None
    median = statistics.median(margins)
    shift = cost.cap_median_shift_s() if cost is not None else 0.0
    # Without the runtime's creation time a delay runs to the container's start,
    # so it holds the runtime's start latency too.
    to_start = all(c.start_latency_s is None for c in at_cap)
    slowdown = cost.slowdown if cost is not None else 1.0
    start_s = REFERENCE_START_S * slowdown if to_start else 0.0
    bound = cap_median_bound(curve, len(margins)) + shift + start_s
    if median <= bound:
        return None
    on_node = (
        f", {shift:.3g}s of it for its node's measured restart cost ({slowdown:.2f}x "
        "the reference host's)"
        if shift > 0
        else ""
    )
    started = f", {start_s:.3g}s for the runtime's start its delays run to" if to_start else ""
    words = (
        f"the {len(margins)} restarts at the {dur(curve.maximum)} cap came {median:.3f}s past "
        f"it in median, over the {bound:.3g}s a kubelet keeping to "
        f"{dur(curve.maximum)} shows{on_node}{started} (bounds sync_tick, "
        "cap_median_confidence, reference_cost_median): is its cap longer?"
    )
    return words, {"median_s": median, "bound_s": bound}


def cap_median_bound(curve: BackoffCurve, count: int) -> float:
    """The median overshoot at the cap a sound kubelet stays under, from ``count`` restarts,
    on the reference host.

    Each restart at the cap comes at the first sync tick after its requeue (the
    expiry plus a uniform jitter up to half the cap, at most 30 s), plus its cost.
    The jitter's share of a median of ``count`` draws is its width times the
    confidence quantile of that median; the tick may add nearly a whole tick to
    every restart alike (sync_tick); the cost is its reference median.
    """
    jitter_s = REQUEUE_FRACTION * min(curve.maximum, REQUEUE_CAP).total_seconds()
    share_s = jitter_s * uniform_median_quantile(count, CAP_MEDIAN_CONFIDENCE)
    return share_s + SYNC_TICK_S + REFERENCE_COST_MEDIAN_S


def _saturated_during(
    saturated: Sequence[tuple[int, int, float]], by_attempt: Mapping[int, AttemptRecord], n: int
) -> bool:
    """Whether the host was saturated between attempt n-1's exit and restart n."""
    previous, current = by_attempt.get(n - 1), by_attempt.get(n)
    if previous is None or current is None or previous.finished_at_ns is None:
        return False
    start, end = previous.finished_at_ns, decided_at(current)
    return any(a < end and b > start for a, b, _ in saturated)
