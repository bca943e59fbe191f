"""The nodes' Leases: when each kubelet last said it was alive, read through the API alone.

Every kubelet renews its node's Lease in ``kube-node-lease`` every 10 s (see
the ``lease_renew_gap`` bound), writing ``spec.renewTime`` from the node's own
clock: one whose Lease has not moved for longer than that is frozen or gone,
whatever its process says. Read at a run's end here; read throughout a run by
:mod:`crashloop_harness.recording.leasereader`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Final

from kubernetes import client

from crashloop_harness.core import timeouts
from crashloop_harness.model.bounds import BOUNDS
from crashloop_harness.model.durations import NS_PER_S

LEASE_NAMESPACE: Final = "kube-node-lease"
# The longest gap between two renewals of a live kubelet (bounds table).
RENEW_GAP_NS: Final = int(BOUNDS["lease_renew_gap"].as_seconds() * NS_PER_S)


def renewed_ns(lease: client.V1Lease) -> int | None:
    """When a Lease was last renewed (its holder's clock, ns), None when it never was."""
    renewed = lease.spec.renew_time if lease.spec else None
    return int(renewed.timestamp() * 1_000_000) * 1_000 if isinstance(renewed, datetime) else None


def last_renewals(api: client.ApiClient, nodes: Iterable[str]) -> dict[str, int | None]:
    """node -> when its kubelet last renewed its Lease (node clock, ns); None where unread."""
    leases = client.CoordinationV1Api(api)
    found: dict[str, int | None] = {}
    for node in nodes:
        try:
            lease = leases.read_namespaced_lease(
                node, LEASE_NAMESPACE, _request_timeout=timeouts.API_REQUEST
            )
        except Exception:  # unreadable (RBAC, the API away): nothing said of this node
            found[node] = None
            continue
        found[node] = renewed_ns(lease)
    return found


def stopped_renewing(
    renewals: Mapping[str, int | None], now_ns: int, already: Iterable[str] = ()
) -> dict[str, str]:
    """The kubelets whose Lease was last renewed longer ago than a live kubelet's gap, by node.

    Frozen (SIGSTOP, its process alive) or exited, a kubelet that no longer
    renews its Lease restarts nothing: seen from outside it is one fact, said
    one way. ``already`` are nodes said stopped otherwise (their process gone).
    """
    said = set(already)
    return {
        node: f"the kubelet of node {node} stopped answering: its Lease was last renewed at "
        f"{_utc(renewed)}, {(now_ns - renewed) / NS_PER_S:.0f}s before the run's end (bound "
        "lease_renew_gap): frozen or stopped, it restarts nothing"
        for node, renewed in renewals.items()
        if renewed is not None and now_ns - renewed > RENEW_GAP_NS and node not in said
    }


def _utc(ns: int) -> str:
    return f"{datetime.fromtimestamp(ns / NS_PER_S, UTC):%H:%M:%S} UTC"
