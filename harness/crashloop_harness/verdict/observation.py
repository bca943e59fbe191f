"""How far one worker had to be, and was, observed: what its verdict is judged against."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from crashloop_harness.model.backoff import UNMEASURED, BackoffCurve, CostAllowance
from crashloop_harness.recording.nodepods import PodStartup
from crashloop_harness.verdict.nodecost import NodeCost
from crashloop_harness.verdict.slowness import NodeSlowness


def unmeasured_words(node: str) -> str:
    """Why a node judged at the reference host's cost cannot fail its kubelet for lateness."""
    return (
        f"this run measured nothing of node {node}'s pace (no pace probe answered, no runtime "
        "timestamps), so it was judged at the reference host's cost"
    )


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
    # Other pods' start-ups on the node, as its kubelet listed them at the end: a late
    # restart 1 across one is set aside (crashloop_harness.recording.nodepods).
    startups: tuple[PodStartup, ...] = ()
    # What a restart costs the node, measured in the run; None: the reference
    # host's cost (the sources' terms, restart 1 at a flat bound).
    cost: NodeCost | None = None
    # Node clock: when the watch that reads the kubelet's levels stopped. A restart
    # the run's last listing found after it cannot have shown its level.
    levels_until_ns: int | None = None
    # Restarts set aside (late while the host was saturated or the node not
    # observed), counted in ``required_restarts``: one more restart owed for each.
    set_aside: int = 0
    # The first of them, in its own words (what the machine did, and when).
    first_set_aside: str = ""
    # Why the worker's pod cannot run its container, as the pod's status says (a
    # refusal, an image pull): no attempt is then the environment's, not the kubelet's.
    not_running: str | None = None
    # False for a judgement made while the check observes on (an early decision):
    # an overdue restart the machine excuses then decides nothing yet.
    final: bool = True

    @property
    def allowance(self) -> CostAllowance:
        return UNMEASURED if self.cost is None else self.cost.allowance

    def slowness(self, curve: BackoffCurve) -> NodeSlowness:
        """What of the verdict this node was too slow to deliver."""
        cost = self.cost
        if cost is None:
            return NodeSlowness()
        if not cost.measured:
            return NodeSlowness(unmeasured=unmeasured_words(cost.node))
        too_slow = cost.too_slow_message(curve) if cost.too_slow else None
        levels = cost.levels_words() if cost.levels_fall_behind else None
        return NodeSlowness(too_slow=too_slow, levels=levels)


# Judge what was recorded, nothing more: no completeness, no overdue check.
AS_RECORDED: Final = Observation()
