"""A fleet's plan: every node grouped by what decides its restart curve, a few sampled per group.

KEP-5593 makes the crash-loop back-off a per-node setting, so node pools may
restart at different curves. What decides a node's curve is its kubelet's
release and its live config (``/configz``: the back-off fields and the gates
that change the curve), whatever its labels say; nodes are grouped by exactly
that, and a pool whose nodes land in more than one group is said to disagree.
Pure: the nodes come in as :class:`NodeFacts` (read by
:mod:`crashloop_harness.fleet.read`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Final

from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.model.durations import format_duration
from crashloop_harness.model.releases import release_of

# The labels that name a node's pool on the common managed clusters, tried in order; a
# node with none of them is in the pool "-".
POOL_LABELS: Final = (
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "kubernetes.azure.com/agentpool",
    "karpenter.sh/nodepool",
    "node.kubernetes.io/pool",
)
ZONE_LABEL: Final = "topology.kubernetes.io/zone"
CONTROL_PLANE_LABEL: Final = "node-role.kubernetes.io/control-plane"
# The node's operating system, as the kubelet labels it (a Windows pool says windows).
OS_LABEL: Final = "kubernetes.io/os"
# Nodes checked per group unless asked otherwise: enough to tell an outlier from its group.
DEFAULT_PER_GROUP: Final = 3


@dataclass(frozen=True)
class NodeFacts:
    """One node as the plan needs it: where it is, and what decides its curve."""

    cluster: str  # the kubeconfig context it was reached through
    node: str
    kubelet_version: str
    # None for a node left out before its config was read (a control plane, NotReady).
    curve: BackoffCurve | None
    # The feature gates that change the curve, as the live kubelet has them.
    gates: Mapping[str, bool]
    labels: Mapping[str, str] = field(default_factory=dict)
    ready: bool = True
    schedulable: bool = True
    # Why its kubelet's config could not be read (an error, a timeout); None when read.
    unread: str | None = None

    @property
    def pool(self) -> str:
        return next((self.labels[key] for key in POOL_LABELS if key in self.labels), "-")

    @property
    def zone(self) -> str:
        return self.labels.get(ZONE_LABEL, "-")

    @property
    def skipped(self) -> str | None:
        """Why this node is not checked, None when it may be: the first reason that holds."""
        reasons = (
            (CONTROL_PLANE_LABEL in self.labels, "control plane"),
            (not self.ready, "NotReady: its kubelet cannot be judged"),
            (not self.schedulable, "cordoned: left to whoever cordoned it"),
            (
                self.labels.get(OS_LABEL, "linux") != "linux",
                f"{self.labels.get(OS_LABEL)} node: the workload runs on Linux only",
            ),
            (
                not modelled(self.kubelet_version),
                f"release {self.kubelet_version} not modelled: its back-off is not the model's",
            ),
            (self.unread is not None, f"config not read: {self.unread}"),
            (self.curve is None, "its kubelet's config was not read"),
        )
        return next((why for holds, why in reasons if holds), None)


def modelled(kubelet_version: str) -> bool:
    """Whether the back-off model holds this kubelet's release (the pinned minors only)."""
    try:
        release_of(kubelet_version)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, order=True)
class GroupKey:
    """What decides a node's curve: its kubelet's release, its back-off, the gates on it."""

    kubelet_version: str
    initial_s: float
    maximum_s: float
    gates: tuple[tuple[str, bool], ...]

    @classmethod
    def of(cls, facts: NodeFacts) -> GroupKey:
        if facts.curve is None:
            raise ValueError(f"node {facts.node}: no curve read, so no group")
        return cls(
            facts.kubelet_version,
            facts.curve.initial.total_seconds(),
            facts.curve.maximum.total_seconds(),
            tuple(sorted(facts.gates.items())),
        )

    def describe(self) -> str:
        gates = ", ".join(f"{name}={'on' if on else 'off'}" for name, on in self.gates)
        initial, maximum = format_duration_s(self.initial_s), format_duration_s(self.maximum_s)
        backoff = f"back-off {initial}, cap {maximum}"
        return f"{self.kubelet_version}, {backoff}" + (f" ({gates})" if gates else "")


def format_duration_s(seconds: float) -> str:
    return format_duration(timedelta(seconds=seconds))


@dataclass(frozen=True)
class Group:
    """Nodes of one cluster that share a curve, and the few chosen to check it."""

    cluster: str
    name: str  # g1, g2, ... in the order of their keys, per cluster
    key: GroupKey
    curve: BackoffCurve
    nodes: tuple[NodeFacts, ...]
    chosen: tuple[str, ...]
    why_chosen: str

    @property
    def pools(self) -> tuple[str, ...]:
        return tuple(sorted({node.pool for node in self.nodes}))

    @property
    def reserves(self) -> tuple[str, ...]:
        """The group's other nodes, in the order an outlier is re-run on them."""
        return tuple(n.node for n in self.nodes if n.node not in self.chosen)


@dataclass(frozen=True)
class FleetPlan:
    groups: tuple[Group, ...]
    # (cluster, node, why) for every node left out.
    skipped: tuple[tuple[str, str, str], ...]
    # (cluster, pool, its groups) for every pool whose nodes run different curves.
    split_pools: tuple[tuple[str, str, tuple[str, ...]], ...]
    per_group: int

    @property
    def clusters(self) -> tuple[str, ...]:
        return tuple(sorted({group.cluster for group in self.groups}))


def plan_fleet(nodes: Iterable[NodeFacts], per_group: int = DEFAULT_PER_GROUP) -> FleetPlan:
    """Every checkable node grouped per cluster by its :class:`GroupKey`, ``per_group`` chosen
    from each, spread over its zones and pools."""
    if per_group < 1:
        raise ValueError(f"per_group must be at least 1, got {per_group}")
    everyone = list(nodes)
    skipped = tuple((n.cluster, n.node, why) for n in everyone if (why := n.skipped) is not None)
    checkable = [n for n in everyone if n.skipped is None]
    groups: list[Group] = []
    for cluster, in_cluster in itertools.groupby(
        sorted(checkable, key=lambda n: n.cluster), key=lambda n: n.cluster
    ):
        by_key: dict[GroupKey, list[NodeFacts]] = {}
        for facts in sorted(in_cluster, key=lambda n: n.node):
            by_key.setdefault(GroupKey.of(facts), []).append(facts)
        for index, (key, members) in enumerate(sorted(by_key.items()), start=1):
            chosen, why = spread(members, per_group)
            curve = members[0].curve
            assert curve is not None  # every checkable node's was read (NodeFacts.skipped)
            groups.append(Group(cluster, f"g{index}", key, curve, tuple(members), chosen, why))
    return FleetPlan(tuple(groups), skipped, _split_pools(groups), per_group)


def spread(members: Sequence[NodeFacts], count: int) -> tuple[tuple[str, ...], str]:
    """``count`` nodes taken in turn from each (zone, pool) of the group, and why."""
    buckets: dict[tuple[str, str], list[str]] = {}
    for facts in members:
        buckets.setdefault((facts.zone, facts.pool), []).append(facts.node)
    chosen: list[str] = []
    for row in itertools.zip_longest(*buckets.values()):
        chosen += [node for node in row if node is not None]
    chosen = chosen[:count]
    if len(members) <= count:
        why = f"all {len(members)} of the group's nodes"
    elif len(buckets) > 1:
        why = f"{count} of {len(members)}, in turn from its {len(buckets)} zone and pool pairs"
    else:
        why = f"{count} of {len(members)}, by name"
    return tuple(chosen), why


def _split_pools(groups: Sequence[Group]) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    seen: dict[tuple[str, str], set[str]] = {}
    for group in groups:
        for pool in group.pools:
            if pool != "-":
                seen.setdefault((group.cluster, pool), set()).add(group.name)
    return tuple(
        (cluster, pool, tuple(sorted(names)))
        for (cluster, pool), names in sorted(seen.items())
        if len(names) > 1
    )
