"""The cluster as a run's summary names it: its name, release, node image and kubelets."""

from __future__ import annotations

from dataclasses import dataclass, field

from crashloop_harness.cluster.kubeletswap import NodeKubelet


@dataclass(frozen=True, kw_only=True)
class ClusterInfo:
    """Which cluster ran the measurements, and which kubelet binary each node ran."""

    name: str
    node_image: str
    kubernetes_version: str
    # Read in each node at the run's start; empty on an existing cluster (its
    # binaries are out of reach) and in summaries written before they were kept.
    kubelets: tuple[NodeKubelet, ...] = ()
    # The kind that made the cluster ("-": an existing cluster, or a summary from before).
    kind_version: str = "-"
    # How each judged node's kubelet was read by a check inside the cluster: "direct", or
    # through the API server's node proxy and why (crashloop_harness.cluster.kubeletapi).
    # Empty from outside the cluster, where every read goes through the node proxy.
    kubelet_access: dict[str, str] = field(default_factory=dict)

    @property
    def swapped_kubelets(self) -> tuple[NodeKubelet, ...]:
        return tuple(k for k in self.kubelets if k.swapped is not None)
