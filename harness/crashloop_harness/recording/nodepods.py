"""Which other pods a node started while the run watched it, as its kubelet lists them.

A restart, once its back-off is over, is a sync and the runtime's create and
start (restart 1 also the PLEG's relist). When other pods start on the same
node then, their sandboxes take the runtime's and the kubelet's time first,
and no pace probe sees it (a probe times CPU, not the runtime's queue).
Through the API alone, twice on 2026-12-07, a sound kubelet's restart 1 came
0.01 and 0.17 s past its bound while another check's pods started on the
node (runs 20261207T133803Z-check-quick-50d3 and
20261207T141859Z-check-quick-21b0); with 45 pods started on purpose beside a
check, restart 2s came 1.2 and 3.0 s past theirs
(20261207T155821Z-check-quick-3536).

The kubelet's own pod list (``GET /api/v1/nodes/<node>/proxy/pods``, the same
``nodes/proxy`` access /configz needs) names every pod on the node with when
the kubelet took it on (``status.startTime``) and when its sandbox was ready
(the ``PodReadyToStartContainers`` condition), in whole seconds of the node's
clock. A restart late once due, across the start-up of a pod of another run
(or of no run), is set aside for as long as that start-up lasted then
(crashloop_harness.verdict.lateness); a pod whose sandbox is not ready yet
counts as starting until the list is read again. The run's own pods start
together by design and excuse nothing: a kubelet that waits before restart 1
is still judged on a node where only the run starts pods. A restart set aside
covers nothing and is owed, so a node that never stops starting other pods
ends the run in error, never in a pass.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from kubernetes import client

from crashloop_harness.cluster.kubeletapi import kubelet_get
from crashloop_harness.core.conventions import RUN_LABEL
from crashloop_harness.model.durations import NS_PER_S
from crashloop_harness.recording.trace import Tap

# The condition the kubelet sets once a pod's sandbox (and its network) is ready.
SANDBOX_READY: Final = "PodReadyToStartContainers"
# The API's times are whole seconds: a time read T stands for anywhere in [T, T + 1 s).
_SECOND_NS: Final = NS_PER_S
# How often each judged node's pod list is read while the run observes: one GET a node
# every 20 s (a fleet's budget counts it, crashloop_harness.fleet.engine).
READ_EVERY_S: Final = 20.0


@dataclass(frozen=True)
class PodStartup:
    """One pod's start-up on a node: from when its kubelet took it on to when its sandbox
    was ready (node clock, ns; ``until_ns`` None while it is not)."""

    pod: str  # "<namespace>/<name>"
    from_ns: int
    until_ns: int | None

    def overlaps(self, start_ns: int, end_ns: int) -> bool:
        """Whether the start-up may have run at any moment between two instants."""
        last_ns = None if self.until_ns is None else self.until_ns + _SECOND_NS
        return self.from_ns < end_ns and (last_ns is None or last_ns > start_ns)

    def span_within(self, start_ns: int, end_ns: int) -> tuple[int, int] | None:
        """The part of the start-up that may lie between two instants; None if none."""
        if not self.overlaps(start_ns, end_ns):
            return None
        last_ns = end_ns if self.until_ns is None else self.until_ns + _SECOND_NS
        return max(self.from_ns, start_ns), min(last_ns, end_ns)

    def to_fields(self) -> list[Any]:
        return [self.pod, self.from_ns, self.until_ns]

    @classmethod
    def from_fields(cls, fields: list[Any]) -> PodStartup:
        pod, from_ns, until_ns = fields
        return cls(str(pod), int(from_ns), None if until_ns is None else int(until_ns))


def _seconds_ns(text: object) -> int | None:
    if not isinstance(text, str):
        return None
    try:
        return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()) * NS_PER_S
    except ValueError:
        return None


def startups_of(pod_list: Mapping[str, Any], run_id: str) -> list[PodStartup]:
    """The start-ups of every pod in a kubelet's pod list not of run ``run_id``."""
    found: list[PodStartup] = []
    for pod in pod_list.get("items") or []:
        metadata = pod.get("metadata") or {}
        if (metadata.get("labels") or {}).get(RUN_LABEL) == run_id:
            continue
        status = pod.get("status") or {}
        from_ns = _seconds_ns(status.get("startTime"))
        if from_ns is None:
            continue
        ready = next(
            (
                c
                for c in status.get("conditions") or []
                if c.get("type") == SANDBOX_READY and c.get("status") == "True"
            ),
            None,
        )
        until_ns = None if ready is None else _seconds_ns(ready.get("lastTransitionTime"))
        name = f"{metadata.get('namespace', '')}/{metadata.get('name', '')}"
        found.append(PodStartup(name, from_ns, until_ns))
    return found


def read_node_pods(api: client.ApiClient, node: str) -> dict[str, Any]:
    """The node's kubelet's own pod list (kubelet API /pods through the node proxy)."""
    payload: dict[str, Any] = json.loads(kubelet_get(api, node, "pods"))
    return payload


class NodeStartups:
    """Other pods' start-ups on each judged node, read every READ_EVERY_S while the run
    observes (so a restart set aside is known, and owed, while the check can still observe
    one in its place) and once more as it ends; each read kept in the run's trace
    (``node-pods``) for a replay."""

    def __init__(
        self, api: client.ApiClient, run_id: str, tap: Tap, on_error: Callable[[str], None]
    ) -> None:
        self._api = api
        self._run_id = run_id
        self._tap = tap
        self._on_error = on_error
        self._lock = threading.Lock()
        self._by_node: dict[str, list[PodStartup]] = {}

    def run(self, nodes: Iterable[str], stop: threading.Event) -> None:
        """Read every node's list each READ_EVERY_S until ``stop`` (the recorder's own stop
        ends the wait: a period, not a synchronisation)."""
        judged = list(nodes)
        while not stop.wait(READ_EVERY_S):
            self.read(judged)

    def read(self, nodes: Iterable[str]) -> None:
        """Each node's kubelet's pod list; one that cannot be read excuses nothing (noted)."""
        for node in nodes:
            try:
                startups = startups_of(read_node_pods(self._api, node), self._run_id)
            except Exception as error:  # any failure (a 403, a timeout): nothing is excused
                self._on_error(f"{node}: the kubelet's pod list was not read: {error}")
                continue
            self._tap.write("node-pods", node=node, pods=[s.to_fields() for s in startups])
            self.on_startups(node, startups)

    def on_startups(self, node: str, startups: Iterable[PodStartup]) -> None:
        """What one node's kubelet listed (a replay feeds the recorded lists)."""
        with self._lock:
            self._by_node[node] = list(startups)

    def by_node(self) -> dict[str, list[PodStartup]]:
        """node -> other pods' start-ups its kubelet listed (none before the end)."""
        with self._lock:
            return {node: list(found) for node, found in self._by_node.items()}


def startup_time_within(startups: Iterable[PodStartup], start_ns: int, end_ns: int) -> int:
    """How long, between two instants, at least one of the start-ups may have run (ns)."""
    spans = sorted(span for s in startups if (span := s.span_within(start_ns, end_ns)) is not None)
    total = 0
    reach = start_ns
    for begin, end in spans:
        counted_from = max(begin, reach)
        if end > counted_from:
            total += end - counted_from
            reach = end
    return total
