"""A fleet's nodes read through the API: each context of a kubeconfig, each node's live curve.

Every cluster is reached as existing-cluster mode reaches one (a kubeconfig's
context, the check's read-only role: nodes get/list, nodes/proxy get); nothing
is created. A context that cannot be reached is that cluster's error, said,
and the other clusters are still read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from kubernetes import client
from kubernetes.config.config_exception import ConfigException

from crashloop_harness.cluster.kube import NodeStatus, node_statuses
from crashloop_harness.cluster.kubeconfig import context_endpoints, context_names, remote_api
from crashloop_harness.cluster.liveconfig import NodeConfigRow
from crashloop_harness.cluster.remote import NODE_READ_ERRORS, live_rows
from crashloop_harness.core.errors import HarnessError, first_line
from crashloop_harness.fleet.plan import CONTROL_PLANE_LABEL, NodeFacts, modelled
from crashloop_harness.model.backoff import curve_fields, curve_from_fields


@dataclass(frozen=True)
class FleetRead:
    nodes: tuple[NodeFacts, ...]
    # context -> why it could not be read
    unreachable: dict[str, str]
    # Every context that was read, whether or not any of its nodes can be checked.
    reached: tuple[str, ...] = ()
    # context -> the context it duplicates (the same server and CA): read once, as that one.
    aliases: dict[str, str] = field(default_factory=dict)


def chosen_contexts(kubeconfig: Path, asked: Sequence[str]) -> list[str]:
    """The contexts asked for, each known to the kubeconfig; every context where none is."""
    known = context_names(kubeconfig)
    if not asked:
        if not known:
            raise HarnessError(
                f"kubeconfig {kubeconfig} has no context", "point --kubeconfig at one that has"
            )
        return known
    unknown = [name for name in asked if name not in known]
    if unknown:
        raise HarnessError(
            f"--contexts {', '.join(unknown)}: not in the kubeconfig",
            f"choose among {', '.join(known) or '(none)'}",
        )
    return list(asked)


# Clusters read at once, and nodes of one cluster read at once: bounds on the API
# requests a plan has in flight (a fleet of 20 contexts and 5,000 nodes plans in the
# time of its slowest reads, not of all of them in a row).
CONTEXTS_AT_ONCE: Final = 8
NODES_AT_ONCE: Final = 16
_READ_ERRORS: Final = (*NODE_READ_ERRORS, ConfigException)


def aliases_of(kubeconfig: Path, contexts: Sequence[str]) -> dict[str, str]:
    """context -> the earlier context that reaches the same server with the same CA: two
    names of one cluster, which would be checked twice and collide on pod names."""
    endpoints = context_endpoints(kubeconfig)
    first: dict[tuple[str, str], str] = {}
    aliases: dict[str, str] = {}
    for context in contexts:
        endpoint = endpoints.get(context)
        if endpoint is None:
            continue
        if endpoint in first:
            aliases[context] = first[endpoint]
        else:
            first[endpoint] = context
    return aliases


def read_fleet(kubeconfig: Path, contexts: Sequence[str]) -> FleetRead:
    """Every node of every context with its live curve; an unreachable context said, not fatal.

    Contexts are read concurrently (CONTEXTS_AT_ONCE), each within its requests' timeouts;
    a context that reaches a cluster another already does is read once, as that one.
    """
    aliases = aliases_of(kubeconfig, contexts)
    contexts = [c for c in contexts if c not in aliases]
    nodes: list[NodeFacts] = []
    unreachable: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=CONTEXTS_AT_ONCE) as pool:
        futures = {context: pool.submit(read_cluster, kubeconfig, context) for context in contexts}
        for context, future in futures.items():
            try:
                nodes += future.result()
            except _READ_ERRORS as error:
                unreachable[context] = first_line(error)
    reached = tuple(c for c in contexts if c not in unreachable)
    return FleetRead(tuple(nodes), unreachable, reached, aliases)


def read_cluster(kubeconfig: Path, context: str) -> list[NodeFacts]:
    """One cluster's nodes; a node whose /configz cannot be read is that node's error (its
    reason kept, the node left out), never its cluster's."""
    api = remote_api(kubeconfig, context)
    statuses = node_statuses(api)
    # A control plane is never checked: its /configz is not read (nor its Lease watched).
    readable = [
        s
        for s in statuses
        if CONTROL_PLANE_LABEL not in s.labels and s.ready and modelled(s.kubelet_version)
    ]
    with ThreadPoolExecutor(max_workers=NODES_AT_ONCE) as pool:
        reads = {s.name: pool.submit(_read_node, api, s) for s in readable}
        found = {name: future.result() for name, future in reads.items()}
    facts: list[NodeFacts] = []
    for status in statuses:
        # None: left out before its config was read (the plan says why).
        row, unread = found.get(status.name, (None, None))
        facts.append(
            NodeFacts(
                context,
                status.name,
                status.kubelet_version,
                None if row is None else row.curve,
                {} if row is None else row.feature_gates,
                status.labels,
                ready=status.ready,
                schedulable=status.schedulable,
                unread=unread,
            )
        )
    return facts


def _read_node(
    api: client.ApiClient, status: NodeStatus
) -> tuple[NodeConfigRow | None, str | None]:
    """One node's live row, or why it could not be read."""
    try:
        (row,) = live_rows(api, [status])
    except _READ_ERRORS as error:
        return None, first_line(error)
    return row, None


def nodes_document(nodes: Sequence[NodeFacts]) -> list[dict[str, Any]]:
    """What was read of every node, as the fleet's nodes.json keeps it (a replay plans from it)."""
    return [
        {
            "cluster": n.cluster,
            "node": n.node,
            "kubelet_version": n.kubelet_version,
            "curve": None if n.curve is None else curve_fields(n.curve),
            "gates": dict(n.gates),
            "labels": dict(n.labels),
            "ready": n.ready,
            "schedulable": n.schedulable,
        }
        for n in nodes
    ]


def nodes_from_document(document: Sequence[Mapping[str, Any]]) -> list[NodeFacts]:
    return [
        NodeFacts(
            str(n["cluster"]),
            str(n["node"]),
            str(n["kubelet_version"]),
            None if n["curve"] is None else curve_from_fields(n["curve"]),
            {str(k): bool(v) for k, v in n["gates"].items()},
            {str(k): str(v) for k, v in n["labels"].items()},
            ready=bool(n["ready"]),
            schedulable=bool(n["schedulable"]),
        )
        for n in document
    ]
