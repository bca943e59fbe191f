"""The run's nodes' Leases read throughout a run: spans a node was not observed, silent nodes.

On a cluster reached by a kubeconfig alone no node is read directly, so a
node frozen mid-run (paused, overloaded, cut off) would read as a kubelet
that stopped restarting. This reader polls the Leases of the run's nodes
(:mod:`crashloop_harness.cluster.leases`); a gap between two renewals longer
than the bound is a span in which the node was not observed (node clock, ns),
and a node whose Lease has not moved for longer than a run tolerates is silent.

Each renewal seen is kept in the run's trace (``lease``), so a replay feeds
the same renewals to :meth:`LeaseReader.on_renewed`.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterable
from typing import Final

from kubernetes import client

from crashloop_harness.cluster.leases import LEASE_NAMESPACE, RENEW_GAP_NS, renewed_ns
from crashloop_harness.core import timeouts
from crashloop_harness.core.errors import first_line
from crashloop_harness.model.durations import NS_PER_S
from crashloop_harness.recording.trace import Tap

# How often the Leases are read: a fifth of a renewal period.
LEASE_POLL_S: Final = 2.0
# Far past any run: the end of a span that has not ended yet.
_OPEN_END_NS: Final = 2**62


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
