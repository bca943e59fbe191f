"""Restart 1 held to its node's pace: the wait no back-off decides, judged across the node.

Restart 1 waits no back-off (the kubelet makes the back-off entry on the first
restart, kubernetes#133472): only the PLEG's relist to see the exit (a timer,
bound pleg_relist_period) and the restart's work. One restart 1 alone is
judged against ``pleg_relist_period`` + ``sync_tick`` + the work times the
pace (crashloop_harness.verdict.restart), wide enough that a kubelet which
waits a second before it, saying nothing, passes most checks. Every container
on a node restarts once that way (the subjects and the restart-cost probes
the check starts beside them, pods.skeleton.probe_pod), and the kubelet's
code is the same for each: their median shows a wait the single restart hides.

The bound is the whole relist period plus the work's median times the node's
pace (measured where no kubelet code runs). Not the median of a relist's
uniform wait: containers started together exit together and share the
relist's phase, so a node's median spreads wider than independent draws
would (nine quiet nodes of runs 20261207T024656Z-check-quick-63af,
20261207T035600Z-check-quick-583f and 20261207T051652Z-check-quick-608e:
0.36-0.94 s, where ten independent draws would stay within about 0.45-0.95 s
only rarely). A shared phase can add at most the period; the work is its
median on the reference host (bound reference_cost_median).
"""

from __future__ import annotations

import statistics
from typing import Final

from crashloop_harness.model.backoff import PLEG_RELIST_PERIOD
from crashloop_harness.verdict.failures import Rule
from crashloop_harness.verdict.nodecost import REFERENCE_COST_MEDIAN_S, NodeCost

FIRST_LATE: Final = Rule(
    "first-late",
    "the node's restarts that wait no back-off (every container's restart 1) came later, in "
    "median, than the node's pace allows: the kubelet waited before restart 1, saying nothing",
)
# A median of this many restart 1s at least: fewer say too little of a wait of a second.
FIRST_MEDIAN_FROM: Final = 5
_PLEG_RELIST_S: Final = PLEG_RELIST_PERIOD.total_seconds()


def first_median_bound(pace: float) -> float:
    """What the median of a sound node's restart 1s stays under at ``pace``: the whole
    relist period (a shared phase) plus the work's reference median times the pace."""
    return _PLEG_RELIST_S + REFERENCE_COST_MEDIAN_S * pace


def first_restarts_judged(cost: NodeCost | None) -> bool:
    """Whether the node's restarts with no back-off are judged together (paced, enough)."""
    return cost is not None and cost.paced and len(cost.first_restarts_s) >= FIRST_MEDIAN_FROM


def first_restart_problem(cost: NodeCost | None) -> tuple[str, dict[str, float]] | None:
    """The node's restart 1s sit, in median, past what its pace allows: the words, and the
    median and its bound (seconds). Only a paced node is judged: a node measured by its own
    restart 1s would excuse them."""
    if cost is None or not first_restarts_judged(cost):
        return None
    firsts = cost.first_restarts_s
    median = statistics.median(firsts)
    bound = first_median_bound(cost.pace)
    if median <= bound:
        return None
    words = (
        f"restart 1 late: the {len(firsts)} restarts with no back-off on node {cost.node} "
        f"(every container's restart 1) came {median:.3f}s after their exit in median, over "
        f"the {bound:.3g}s a kubelet that waits no back-off takes there (bound "
        f"pleg_relist_period, and bound reference_cost_median times its pace "
        f"{cost.pace:.2f}x, bound reference_pace): did the kubelet wait before restart 1?"
    )
    return words, {"first_median_s": median, "first_bound_s": bound}
