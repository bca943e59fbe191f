"""What a node, not its kubelet, may be to blame for: the rules whose failures are errors.

A node that was not observed (paused, frozen, the host saturated) or that is
too slow for its windows or its status writes cannot be judged on what it
showed meanwhile: its failures are the environment's errors, never the
kubelet's failures and never a pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from crashloop_harness.verdict.failures import Rule

# Not the kubelet's: the node was not observed (paused, frozen, the host saturated).
ENVIRONMENT = Rule(
    "environment",
    "the node or the host under it was not running as it should (not observed, paused or "
    "saturated) while a restart was due: an environment problem, not a kubelet verdict",
)
# Not the kubelet's: the node is too slow for its windows, or for its status writes.
NODE_TOO_SLOW = Rule(
    "node-too-slow",
    "a node restarts containers so much slower than the reference host that its "
    "windows cannot tell the curve from its neighbour's, or its status writes miss "
    "the levels: the node's, not the kubelet's (see each node's restart cost in the report)",
)

# Not the kubelet's alone: the run measured nothing of the node's pace.
NODE_UNMEASURED = Rule(
    "node-unmeasured",
    "a node whose pace the run could not measure (no pace probe, no runtime timestamps) "
    "is judged at the reference host's cost: a restart later than that, by no more than "
    "a node at the slowest pace judged could make it, is the node's or the kubelet's, "
    "and no verdict",
)


@dataclass(frozen=True)
class NodeSlowness:
    """What of a verdict a slow node could not deliver, each a reason or None.

    ``too_slow``: the node's windows cannot tell the curve from its neighbour's,
    so lateness is an error; ``levels``: its status writes fall behind, so a
    level not seen is an error; ``unmeasured``: the run measured nothing of the
    node's pace, so lateness a slow node could make is an error.
    """

    too_slow: str | None = None
    levels: str | None = None
    unmeasured: str | None = None
