"""The level the kubelet reported for a restart: the one its curve has, and seen where it must be.

Below :data:`CONFIRM_FROM` a neighbouring curve's restarts fall inside the
same window; above it the level the kubelet posts in the pod status is what
tells them apart, so it must have been seen.
"""

from __future__ import annotations

from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.verdict.failures import Failure, Rule
from crashloop_harness.verdict.slowness import NODE_TOO_SLOW, NodeSlowness
from crashloop_harness.verdict.tolerances import CONFIRM_FROM, REPORTED_EPSILON_S, dur

REPORTED_LEVEL = Rule(
    "reported-level",
    "the kubelet announced a different back-off than the model expects: its live "
    "config or the model is off",
)
UNCONFIRMED = Rule(
    "unconfirmed",
    "the kubelet's back-off level for a restart was never seen, and its delay alone "
    "cannot tell the curve from its neighbour's",
)


def level_problem(
    curve: BackoffCurve,
    n: int,
    position: int,
    reported: float | None,
    *,
    confirm_levels: bool,
    node_slow: NodeSlowness,
) -> Failure | None:
    """What is wrong with the level the kubelet reported for restart n, None when nothing."""
    expected_reported = curve.expected_reported_backoff(position)
    if reported is not None:
        # "back-off 0s" posted before an immediate restart is the model's level: none.
        expected_s = 0.0 if expected_reported is None else expected_reported.total_seconds()
        if abs(reported - expected_s) <= REPORTED_EPSILON_S:
            return None
        if expected_reported is None:
            words = (
                f"the kubelet reported a {reported:g}s back-off, but restart {position} "
                "of the curve does not wait"
            )
        else:
            words = (
                f"the kubelet reported a {reported:g}s back-off, "
                f"the model expects {dur(expected_reported)}"
            )
        return REPORTED_LEVEL.failed(
            words, restart=n, numbers={"reported_s": reported, "expected_level_s": expected_s}
        )
    if not confirm_levels or expected_reported is None or expected_reported < CONFIRM_FROM:
        return None
    unconfirmed = (
        f"the kubelet's reported back-off for restart {n} was not seen, and "
        f"without it a {dur(expected_reported)} level cannot be told from its neighbours"
    )
    level_s = expected_reported.total_seconds()
    if node_slow.levels is not None:
        # Not the kubelet's: its node's status writes fell behind its restarts.
        return NODE_TOO_SLOW.failed(
            f"error: {unconfirmed}, but {node_slow.levels}",
            restart=n,
            error=True,
            numbers={"expected_level_s": level_s},
        )
    return UNCONFIRMED.failed(
        f"unconfirmed: {unconfirmed}", restart=n, numbers={"expected_level_s": level_s}
    )
