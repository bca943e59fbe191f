"""The nodes' Leases: when each kubelet last said it was alive, read through the API alone.

On a cluster reached by a kubeconfig alone no node is read directly, so a
node frozen mid-run (paused, overloaded, cut off) would read as a kubelet
that stopped restarting. Every kubelet renews its node's Lease in
``kube-node-lease`` every 10 s (see the ``lease_renew_gap`` bound), writing
``spec.renewTime`` from the node's own clock. This reader polls the Leases
of the run's nodes; a gap between two renewals longer than the bound is a
span in which the node was not observed (node clock, ns), and a node whose
Lease has not moved for longer than a run tolerates is silent.

Each renewal seen is kept in the run's trace (``lease``), so a replay feeds
the same renewals to :meth:`LeaseReader.on_renewed`.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Final

from kubernetes import client

from crashloop_harness.core import timeouts
from crashloop_harness.core.errors import first_line
from crashloop_harness.model.bounds import BOUNDS
from crashloop_harness.model.durations import NS_PER_S
from crashloop_harness.recording.trace import Tap

LEASE_NAMESPACE: Final = "kube-node-lease"
# The longest gap between two renewals of a live kubelet (bounds table).
RENEW_GAP_NS: Final = int(BOUNDS["lease_renew_gap"].as_seconds() * NS_PER_S)
# How often the Leases are read: a fifth of a renewal period.
LEASE_POLL_S: Final = 2.0
# Far past any run: the end of a span that has not ended yet.
_OPEN_END_NS: Final = 2**62


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
) -> list[str]:
    """The kubelets whose Lease was last renewed longer ago than a live kubelet's gap.

    Frozen (SIGSTOP, its process alive) or exited, a kubelet that no longer
    renews its Lease restarts nothing: seen from outside it is one fact, said
    one way. ``already`` are nodes said stopped otherwise (their process gone).
    """
    said = set(already)
    return [
        f"the kubelet of node {node} stopped answering: its Lease was last renewed at "
        f"{_utc(renewed)}, {(now_ns - renewed) / NS_PER_S:.0f}s before the run's end (bound "
        "lease_renew_gap): frozen or stopped, it restarts nothing"
        for node, renewed in renewals.items()
        if renewed is not None and now_ns - renewed > RENEW_GAP_NS and node not in said
    ]


def _utc(ns: int) -> str:
    return f"{datetime.fromtimestamp(ns / NS_PER_S, UTC):%H:%M:%S} UTC"


class LeaseReader:
    """Polls the run's nodes' Leases; spans of missed renewals, nodes gone silent."""

    def __init__(
        self,
        api: client.ApiClient | None,
        nodes: Iterable[str],
        problem: Callable[[str], None],
        stop: threading.Event,
        *,
        tap: Tap,
    ) -> None:
        self._api = api
        self._nodes = tuple(nodes)
        self._problem = problem
        self._stop = stop
        self._tap = tap
        self._lock = threading.Lock()
        self._renewals: dict[str, list[int]] = {node: [] for node in self._nodes}
        # Host monotonic time at which each node's latest renewal was first seen.
        self._moved_at: dict[str, float] = {}
        # Why the Leases cannot be read (no permission): said once, in the coverage.
        self.unreadable: str | None = None

    def run(self) -> None:
        """Poll until ``stop``; a Lease that cannot be read is reported once and left."""
        assert self._api is not None
        leases = client.CoordinationV1Api(self._api)
        while not self._stop.is_set():
            for node in self._nodes:
                try:
                    lease = leases.read_namespaced_lease(
                        node, LEASE_NAMESPACE, _request_timeout=timeouts.API_REQUEST
                    )
                except client.ApiException as error:
                    if error.status in (401, 403, 404):
                        self.unreadable = (
                            f"the Lease of node {node} cannot be read ({error.status} "
                            f"{error.reason}): node freezes are not detected"
                        )
                        self._problem(self.unreadable)
                        return
                    self._problem(f"reading the Lease of {node}: {first_line(error)}")
                    continue
                except Exception as error:  # the API unreachable: the next poll retries
                    self._problem(f"reading the Lease of {node}: {first_line(error)}")
                    continue
                renewed = renewed_ns(lease)
                if renewed is not None and self.on_renewed(node, renewed):
                    self._tap.write("lease", node=node, renewed_ns=renewed)
            self._stop.wait(LEASE_POLL_S)

    def on_renewed(self, node: str, renewed_ns: int) -> bool:
        """A renewal read (node clock, ns); False for a repeat of the last one."""
        with self._lock:
            seen = self._renewals.setdefault(node, [])
            if seen and renewed_ns <= seen[-1]:
                return False
            seen.append(renewed_ns)
            self._moved_at[node] = time.monotonic()
            return True

    def unobserved(self, node: str) -> list[tuple[int, int]]:
        """Node-clock spans between renewals further apart than a live kubelet's.

        A Lease that has not moved for longer than that by now is an open span.
        """
        with self._lock:
            seen = list(self._renewals.get(node, ()))
            moved = self._moved_at.get(node)
        spans = [(a, b) for a, b in itertools.pairwise(seen) if b - a > RENEW_GAP_NS]
        # Seen only at a poll: the Lease may have moved a whole poll before.
        still_ns = (time.monotonic() - moved - LEASE_POLL_S) * NS_PER_S if moved else 0.0
        if seen and still_ns > RENEW_GAP_NS:
            spans.append((seen[-1], _OPEN_END_NS))
        return spans

    def silent(self, longer_than: float) -> list[str]:
        """Nodes whose Lease has not moved for ``longer_than`` seconds."""
        now = time.monotonic()
        with self._lock:
            return [
                f"node {node}: its kubelet has not renewed its Lease for {now - moved:.0f}s "
                "(the node frozen, cut off or gone)"
                for node, moved in self._moved_at.items()
                if now - moved > longer_than
            ]
