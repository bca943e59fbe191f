"""A cluster reached by a kubeconfig alone: no docker, no kind, no access to its nodes.

The operator's node pools: the check runs one crashing pod on each selected
node and judges it against the curve that node's own live kubelet config
(/configz) implies, so no profile file is needed. Every read and write goes
through the API with the kubeconfig's credentials; what each needs is in
``rbac/`` (harness/crashloop_harness/resources/rbac/crashloop-check.yaml).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import urllib3
from kubernetes import client

from crashloop_harness.cluster.evidence import collect_failure_evidence
from crashloop_harness.cluster.info import ClusterInfo
from crashloop_harness.cluster.kube import NodeStatus, node_configz, node_statuses
from crashloop_harness.cluster.kubeconfig import context_name, remote_api, require_kubeconfig
from crashloop_harness.cluster.kubeletapi import (
    DIRECT,
    kubelet_get,
    kubelet_routes,
    kubelet_routes_of,
)
from crashloop_harness.cluster.kubeletstate import KubeletProcess
from crashloop_harness.cluster.kubeletswap import NodeKubelet
from crashloop_harness.cluster.liveconfig import NodeConfigRow, row_for
from crashloop_harness.cluster.profiles import ClusterSpec
from crashloop_harness.cluster.runnamespace import create_run_namespace, refuse_busy_namespace
from crashloop_harness.cluster.target import (
    API_ONLY,
    Capabilities,
    NodeRows,
    RunEnding,
    RunNamespace,
    RunScope,
)
from crashloop_harness.core.errors import HarnessError, first_line
from crashloop_harness.core.progress import Progress
from crashloop_harness.pods.skeleton import on_existing_node

RBAC_HINT: Final = (
    "grant the check's roles (`crashloop rbac`: nodes get/list, nodes/proxy get from outside "
    "the cluster or nodes/configz, nodes/metrics and nodes/pods from inside it, pods in the "
    "run's namespace)"
)
_PROCESS_START: Final = re.compile(r"^process_start_time_seconds\s+(\S+)$", re.MULTILINE)


@dataclass(frozen=True)
class RemoteCluster:
    """Where the check runs: a kubeconfig, its context, the nodes, the workload's image."""

    kubeconfig: Path
    context: str | None
    nodes: tuple[str, ...]
    workload_image: str
    name: str
    # A namespace prepared with the check's role (None: the check creates one).
    namespace: str | None = None
    # The namespace is shared by a fleet's checks, found idle once before any of them: a
    # check neither refuses it for their pods nor touches them (its watch and clean-up
    # select its own run's).
    namespace_shared: bool = False

    def api(self) -> client.ApiClient:
        return remote_api(self.kubeconfig, self.context)

    # What a run asks of it (crashloop_harness.cluster.target.RunTarget): the API alone.

    @property
    def capabilities(self) -> Capabilities:
        return API_ONLY

    def node_rows(
        self, api: client.ApiClient, progress: Progress, *, require_profiles: bool
    ) -> NodeRows:
        """Each chosen node judged against its own live config: no profile to require."""
        del require_profiles
        chosen = [status for status in node_statuses(api) if status.name in self.nodes]
        rows, left_out = readable_rows(api, chosen)
        for node, why in left_out.items():
            progress(f"node {node} left out: {why}")
        kept = {row.worker for row in rows}
        return NodeRows(rows, {s.name: s.name for s in chosen if s.name in kept}, left_out)

    def profile_of(self, subject: str) -> str | None:
        del subject
        return None

    def profile_names(self) -> frozenset[str] | None:
        return None

    def ready_image(self, progress: Progress) -> str:
        """The image the operator made pullable (its nodes cannot be loaded from here)."""
        del progress
        return self.workload_image

    def run_namespace(
        self, api: client.ApiClient, what: str, run_id: str, progress: Progress
    ) -> RunNamespace:
        del progress
        if self.namespace is not None:
            if not self.namespace_shared:
                refuse_busy_namespace(api, self.namespace)
            return RunNamespace(self.namespace, owned=False)
        return RunNamespace(create_run_namespace(api, what, run_id), owned=True)

    def place(self, manifest: dict[str, Any], subject: str) -> dict[str, Any]:
        return on_existing_node(manifest, subject)

    def kubelets_at_start(self, api: client.ApiClient, nodes: Sequence[str]) -> RemoteKubelets:
        return RemoteKubelets(api, kubelet_start_times(api, nodes))

    def gather_evidence(
        self, api: client.ApiClient, namespace: str, into: Path, *, run: RunScope
    ) -> None:
        # Its own pods, their events and its own nodes' configs: a prepared namespace may
        # hold a fleet's other checks, and a cluster thousands of nodes.
        collect_failure_evidence(
            api,
            [namespace],
            into,
            pod_selector=run.pod_selector,
            nodes=run.nodes,
            silent=run.silent,
        )

    def describe(self, rows: Sequence[NodeConfigRow]) -> ClusterInfo:
        """Named by its kubelets' versions, each as its Node object reports it (the
        binaries are out of reach)."""
        versions = sorted({row.kubelet_version for row in rows if row.kubelet_version})
        return ClusterInfo(
            name=self.name,
            node_image="-",
            kubernetes_version=", ".join(versions) or "-",
            kubelets=tuple(NodeKubelet(row.node, row.kubelet_version or "-", "-") for row in rows),
            # A fleet's checks share one process: each summary names its own nodes.
            kubelet_access={
                node: route
                for node, route in kubelet_routes_of(self.api).items()
                if node in {row.node for row in rows}
            },
        )


@dataclass(frozen=True)
class RemoteKubelets:
    """The judged nodes' kubelets as a run on an existing cluster starts: their start times."""

    api: client.ApiClient
    start_times: Mapping[str, float | None]

    def ending(
        self, confirm: Collection[str] = (), made: Mapping[str, KubeletProcess] | None = None
    ) -> RunEnding:
        """A kubelet that restarted, seen in its metrics. (Frozen nodes are read from their
        Leases throughout the run, so ``confirm`` adds nothing here; no run restarts the
        kubelet of a cluster it reaches by a kubeconfig alone, so neither does ``made``.)"""
        del confirm, made
        after = kubelet_start_times(self.api, list(self.start_times))
        return RunEnding(tuple(restarted_kubelets(self.start_times, after)), {}, None)


def connect(
    kubeconfig: Path,
    *,
    context: str | None,
    nodes: Sequence[str],
    selector: str | None,
    workload_image: str,
    namespace: str | None,
) -> RemoteCluster:
    """The existing cluster a kubeconfig reaches, its chosen nodes Ready; nothing created."""
    require_kubeconfig(kubeconfig)
    if not nodes and not selector:
        raise HarnessError(
            "which nodes of the existing cluster? none named",
            "name them (--nodes NODE[,NODE...]) or select them (--node-selector KEY[=VALUE])",
        )
    if nodes and selector:
        raise HarnessError("nodes both named and selected", "choose them one way, not both")
    api = remote_api(kubeconfig, context)
    try:
        statuses = node_statuses(api)
    except client.ApiException as error:
        raise HarnessError(
            f"cannot list the cluster's nodes: {error.status} {error.reason}", RBAC_HINT
        ) from error
    except urllib3.exceptions.HTTPError as error:
        raise HarnessError(
            f"the API server of {kubeconfig} did not answer: {first_line(error)}",
            "check the kubeconfig's server address, the network and the context",
        ) from error
    chosen = select_nodes(statuses, nodes, selector)
    return RemoteCluster(
        kubeconfig=kubeconfig,
        context=context,
        nodes=tuple(status.name for status in chosen),
        workload_image=workload_image,
        name=context_name(kubeconfig, context),
        namespace=namespace,
    )


def select_nodes(
    statuses: Sequence[NodeStatus], names: Sequence[str], selector: str | None
) -> list[NodeStatus]:
    """The nodes named, or matching ``selector`` (key or key=value, comma-separated); Ready."""
    by_name = {status.name: status for status in statuses}
    if names:
        unknown = [name for name in names if name not in by_name]
        if unknown:
            raise HarnessError(
                f"no node {', '.join(unknown)} in the cluster",
                f"name nodes it has: {', '.join(sorted(by_name)) or '(none)'}",
            )
        chosen = [by_name[name] for name in names]
    else:
        terms = [term.strip() for term in (selector or "").split(",") if term.strip()]
        chosen = [s for s in statuses if all(_matches(s.labels, term) for term in terms)]
        if not chosen:
            raise HarnessError(
                f"no node matches the selector {selector!r}",
                "check the label with `kubectl get nodes --show-labels`",
            )
    not_ready = [status.name for status in chosen if not status.ready]
    if not_ready:
        raise HarnessError(
            f"node {', '.join(not_ready)} is not Ready: its kubelet cannot be judged",
            "leave it out (--nodes) or wait until it is Ready",
        )
    return chosen


def _matches(labels: Mapping[str, str], term: str) -> bool:
    if "=" in term:
        key, value = term.split("=", 1)
        return labels.get(key.strip()) == value.strip()
    return term in labels


def live_rows(api: client.ApiClient, nodes: Sequence[NodeStatus]) -> list[NodeConfigRow]:
    """Each node's live backoff settings; the node is its own worker and has no profile."""
    empty = ClusterSpec(name="-", path=Path("-"), workers=())
    rows = []
    for status in nodes:
        try:
            configz = node_configz(api, status.name)
        except client.ApiException as error:
            # In a pod, the proxy was the fallback: the direct read's refusal comes first.
            route = kubelet_routes(api).get(status.name, DIRECT)
            direct = "" if route == DIRECT else f"{route.removeprefix('node proxy: ')}; then "
            raise HarnessError(
                f"cannot read the kubelet config of node {status.name} ({direct}"
                f"GET /api/v1/nodes/{status.name}/proxy/configz: {error.status} {error.reason})",
                RBAC_HINT if error.status in (401, 403) else "check that the node's kubelet runs",
            ) from error
        row = row_for(status.name, {}, configz, empty, status.kubelet_version)
        rows.append(dataclasses.replace(row, worker=status.name))
    return rows


# What reading one node's kubelet can raise: refused, timed out, not JSON, unreachable.
NODE_READ_ERRORS: Final = (
    client.ApiException,
    urllib3.exceptions.HTTPError,
    HarnessError,
    OSError,
    ValueError,
)


def readable_rows(
    api: client.ApiClient, nodes: Sequence[NodeStatus]
) -> tuple[list[NodeConfigRow], dict[str, str]]:
    """The rows of the nodes whose kubelet config could be read, and why each other could
    not (node -> words): one node's blocked port or broken kubelet leaves the others judged.
    None readable: the first node's error, as its own read says it."""
    rows: list[NodeConfigRow] = []
    left_out: dict[str, str] = {}
    first: Exception | None = None
    for status in nodes:
        try:
            rows += live_rows(api, [status])
        except NODE_READ_ERRORS as error:
            first = first or error
            left_out[status.name] = f"its kubelet's config could not be read: {first_line(error)}"
    if not rows and first is not None:
        raise first
    return rows, left_out


def kubelet_start_times(api: client.ApiClient, nodes: Sequence[str]) -> dict[str, float | None]:
    """Each kubelet's process start (its /metrics), to see a restart without node access."""
    starts: dict[str, float | None] = {}
    for node in nodes:
        try:
            metrics = kubelet_get(api, node, "metrics")
            found = _PROCESS_START.search(metrics.decode("utf-8", "replace"))
            starts[node] = float(found.group(1)) if found else None
        except (client.ApiException, urllib3.exceptions.HTTPError, ValueError):
            starts[node] = None
    return starts


def restarted_kubelets(
    before: Mapping[str, float | None], after: Mapping[str, float | None]
) -> list[str]:
    """Nodes whose kubelet is another process now (or could not be read again)."""
    problems = []
    for node, started in before.items():
        now = after.get(node)
        if started is None:
            continue
        if now is None:
            problems.append(f"node {node}: the kubelet's metrics could not be read at the end")
        elif now != started:
            problems.append(
                f"node {node}: the kubelet restarted during the run (its back-off state was wiped)"
            )
    return problems
