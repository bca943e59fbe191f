"""What a measured run asks of the cluster it runs on: one protocol, answered by each kind.

The harness's own kind cluster (:class:`~crashloop_harness.cluster.lifecycle.Cluster`)
and an existing cluster reached by a kubeconfig alone
(:class:`~crashloop_harness.cluster.remote.RemoteCluster`) differ in what they
let a run do: one has worker profiles, node containers to read kubelets in and
``kind export logs``; the other has only its API, a prepared namespace perhaps,
and kubelets known by their metrics. Each answers the same questions here, so a
run (``crashloop_harness.runs``) never asks which kind it holds, as kind's
providers answer one interface for docker, podman and nerdctl.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Protocol

from kubernetes import client

from crashloop_harness.cluster.info import ClusterInfo
from crashloop_harness.cluster.kubeletstate import KubeletProcess
from crashloop_harness.cluster.liveconfig import NodeConfigRow
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.progress import Progress


@dataclass(frozen=True)
class RunEnding:
    """What stands between a run's verdicts and its status, read once the observation ended.

    ``errors``: a kubelet restarted (its back-off state wiped) or the engine
    went away; no pass or fail may be claimed. ``stopped``: by node, a kubelet
    that exited and stayed down (or froze); the node's later restarts cannot be
    judged either.
    ``engine_gone``: nothing more can be asked of the cluster (no evidence, no
    clean-up).
    """

    errors: tuple[str, ...]
    stopped: Mapping[str, str]
    engine_gone: str | None


class KubeletWatch(Protocol):
    """The judged nodes' kubelets as a run found them, to tell how the run ended."""

    def ending(
        self, confirm: Collection[str] = (), made: Mapping[str, KubeletProcess] | None = None
    ) -> RunEnding:
        """The run's ending against the start; ``confirm``: nodes about to be blamed,
        watched a little longer where a kind of cluster can tell a frozen kubelet so;
        ``made``: by node, the kubelet process a restart the run made on purpose started."""
        ...


@dataclass(frozen=True)
class Capabilities:
    """What a kind of cluster lets a run do besides its API, as kind's ProviderInfo says what
    a provider can: a run asks here, never which kind of cluster it holds.

    ``node_command``: commands run in its nodes (crashloop_harness.cluster.nodecommand): the
    runtime's own readers and timestamps, files on a node's disk, pace probes.
    ``restart_kubelet``: a node's kubelet restarted on purpose (a scenario's fault).
    """

    node_command: bool
    restart_kubelet: bool

    def refusal(self, what: str, fix: str) -> HarnessError:
        """The error for asking what this kind of cluster cannot do, naming it and the fix."""
        return HarnessError(f"this cluster cannot {what}: it is reached through its API alone", fix)


# The harness's own kind cluster: its nodes are containers on this host.
NODE_ACCESS: Final = Capabilities(node_command=True, restart_kubelet=True)
# A cluster reached by a kubeconfig alone (or from inside it): the API is all there is.
API_ONLY: Final = Capabilities(node_command=False, restart_kubelet=False)


@dataclass(frozen=True)
class RunScope:
    """What is a run's own in a cluster: its pods (by their run label) and its judged nodes;
    ``silent``: those of its nodes whose kubelet stopped answering (asked nothing more)."""

    pod_selector: str
    nodes: tuple[str, ...]
    silent: tuple[str, ...] = ()


@dataclass(frozen=True)
class NodeRows:
    """The judged nodes' live kubelet configs, and which node each judged subject is."""

    rows: list[NodeConfigRow]
    nodes: dict[str, str]  # subject (a worker, or a node of an existing cluster) -> node
    # node -> why it was left out (its kubelet's config could not be read): the others are
    # judged, and the run says it did not judge this one.
    left_out: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RunNamespace:
    name: str
    # False for a namespace prepared for the run (an existing cluster's least-privilege
    # set-up): only the run's pods are deleted afterwards, never the namespace.
    owned: bool


class RunTarget(Protocol):
    """A cluster a run measures on, whichever kind it is."""

    @property
    def name(self) -> str: ...

    @property
    def capabilities(self) -> Capabilities:
        """What a run may ask of its nodes besides the API."""
        ...

    def api(self) -> client.ApiClient: ...

    def node_rows(
        self, api: client.ApiClient, progress: Progress, *, require_profiles: bool
    ) -> NodeRows:
        """The nodes a run judges with their live configs; refuses a config off its
        profile when ``require_profiles`` and the kind has profiles."""
        ...

    def profile_of(self, subject: str) -> str | None:
        """The worker profile ``subject`` runs, None where the kind has none."""
        ...

    def profile_names(self) -> frozenset[str] | None:
        """Every worker profile the cluster runs, None where the kind has none."""
        ...

    def ready_image(self, progress: Progress) -> str:
        """The workload's image, made pullable on every judged node."""
        ...

    def run_namespace(
        self, api: client.ApiClient, what: str, run_id: str, progress: Progress
    ) -> RunNamespace:
        """Where a run's pods go: made fresh for it, or the one prepared for it."""
        ...

    def place(self, manifest: dict[str, Any], subject: str) -> dict[str, Any]:
        """``manifest`` bound to ``subject``'s node the way this kind selects nodes."""
        ...

    def kubelets_at_start(self, api: client.ApiClient, nodes: Sequence[str]) -> KubeletWatch:
        """The judged nodes' kubelets read now, before a run's first pod."""
        ...

    def gather_evidence(
        self, api: client.ApiClient, namespace: str, into: Path, *, run: RunScope
    ) -> None:
        """What the run's pods, their nodes and kubelets said, written under ``into``; a
        namespace shared with other runs (a fleet's) gives only ``run``'s pods and nodes."""
        ...

    def describe(self, rows: Sequence[NodeConfigRow]) -> ClusterInfo:
        """The cluster as a run's summary names it."""
        ...
