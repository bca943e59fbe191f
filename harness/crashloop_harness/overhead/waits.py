"""What an overhead cell waits for before it measures, each a condition with a named timeout.

In a cell's order: its worker's runtime rid of the cells before it, every
pod started, crashing pods climbed to their cap, every other worker's runtime
rid of the cells before it, the kubelet's event writes drained, and after the
window every pod gone from the API.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Final

from kubernetes import client

from crashloop_harness.cluster.nodecommand import run_in_node
from crashloop_harness.core import timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.polling import poll, poll_true
from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.overhead.analysis import (
    EVENT_BACKLOG_QPS,
    PEAK_INTERVALS,
    RequestSample,
    event_write_rate,
    restarts_to_cap,
    time_to_cap,
)
from crashloop_harness.overhead.nodeusage import kubelet_requests
from crashloop_harness.recording.cri import CriFormatError, CriSandbox, parse_pods

# The node's own pods (kube-proxy, kindnet): every other sandbox is a workload's.
SYSTEM_NAMESPACE: Final = "kube-system"
# How often the API and the runtimes are asked while waiting: often enough to
# start a cell within seconds of its condition, seldom enough to load nothing.
POLL_S: Final = 2.0
# How often the kubelet's request counters (and in a window the node's processes)
# are read: each read makes the kubelet render its /metrics and the engine run a
# `docker exec`, so not more often than a peak over PEAK_INTERVALS needs. The
# event drain is read on the same period, so its rate spans what a peak spans.
REQUEST_SAMPLE_S: Final = 10.0


def restart_counts(core: client.CoreV1Api, namespace: str) -> dict[str, int]:
    """Each pod's restarts so far, all containers."""
    pods = core.list_namespaced_pod(namespace, _request_timeout=timeouts.API_REQUEST).items
    return {
        pod.metadata.name: sum(
            int(s.restart_count or 0) for s in pod.status.container_statuses or []
        )
        for pod in pods
    }


def workload_sandboxes(node: str) -> list[CriSandbox]:
    """The sandboxes the node's runtime still holds outside kube-system; a runtime too busy
    to answer raises HarnessError (the wait asks again)."""
    text = run_in_node(node, ["crictl", "pods", "-o", "json"])
    try:
        return [s for s in parse_pods(text) if s.namespace != SYSTEM_NAMESPACE]
    except CriFormatError as error:
        raise HarnessError(
            f"node {node}: `crictl pods -o json` printed what the harness cannot read ({error})",
            "the node image's crictl changed its output: rebuild it "
            "(`crashloop node-image --offline`)",
        ) from error


def _left_text(left: list[CriSandbox]) -> str:
    by_namespace = Counter(s.namespace for s in left)
    return ", ".join(f"{count} of {ns}" for ns, count in sorted(by_namespace.items()))


def wait_nodes_cleared(nodes: list[str], stop: threading.Event) -> None:
    """Until no node's runtime holds a sandbox outside kube-system, ready or not.

    The machine's cores are shared by every node, so a sandbox torn down on
    any of them is load on the one measured.
    """
    left: dict[str, list[CriSandbox]] = {}

    def count() -> int | None:
        for node in nodes:
            try:
                left[node] = workload_sandboxes(node)
            except HarnessError:
                return None  # a runtime too busy to answer: ask again
        return sum(len(found) for found in left.values())

    cleared = poll(
        count,
        lambda remaining: remaining == 0,
        within=timeouts.OVERHEAD_NODE_CLEARED,
        every=POLL_S,
        stop=stop,
    )
    if not cleared.done:
        if stop.is_set():
            return
        remaining = {node: found for node, found in left.items() if found}
        where = "; ".join(f"{node}: {_left_text(found)}" for node, found in remaining.items())
        raise HarnessError(
            f"the workers' runtimes still held sandboxes after "
            f"{timeouts.OVERHEAD_NODE_CLEARED:.0f}s ({where or 'no answer from crictl'}), "
            "and a cell measured beside them would count their teardown",
            "see `docker exec <node> crictl pods`; delete what is left "
            "(`kubectl delete namespace ...`), or CRASHLOOP_TIMEOUT_SCALE=2 on a slow machine",
        )


def wait_all_started(core: client.CoreV1Api, namespace: str, pods: int) -> None:
    def started() -> int:
        listed = core.list_namespaced_pod(namespace, _request_timeout=timeouts.API_REQUEST).items
        return sum(_started(pod) for pod in listed)

    counted = poll(
        started, lambda count: count >= pods, within=timeouts.OVERHEAD_PODS_STARTED, every=POLL_S
    )
    if not counted.done:
        raise HarnessError(
            f"only {counted.last} of {pods} pods started within "
            f"{timeouts.OVERHEAD_PODS_STARTED:.0f}s",
            "fewer pods (--pods), or CRASHLOOP_TIMEOUT_SCALE=2 on a slow machine",
        )


def _started(pod: Any) -> bool:
    """The pod's container has run at least once (running now, or ended before)."""
    for status in pod.status.container_statuses or []:
        state, last = status.state, status.last_state
        if (state and (state.running or state.terminated)) or (last and last.terminated):
            return True
    return False


def wait_at_cap(
    core: client.CoreV1Api, namespace: str, curve: BackoffCurve, stop: threading.Event
) -> tuple[bool, float]:
    """Until every pod's next wait is the cap: (reached, seconds it took).

    Given twice the curve's nominal climb plus a margin. A kubelet that falls
    that far behind is measured anyway, as it is, and the cell says so.
    """
    level = restarts_to_cap(curve)
    limit = 2 * time_to_cap(curve).total_seconds() + timeouts.OVERHEAD_CAP_MARGIN
    began = time.monotonic()
    reached = poll(
        lambda: min(restart_counts(core, namespace).values(), default=0),
        lambda lowest: lowest >= level,
        within=limit,
        every=POLL_S,
        stop=stop,
    )
    return reached.done, time.monotonic() - began


@dataclass(frozen=True)
class Drained:
    """Whether the kubelet's event writes fell to EVENT_BACKLOG_QPS, and when (monotonic s)."""

    drained: bool
    at_s: float


def wait_events_drained(
    core: client.CoreV1Api, node: str, *, not_before_s: float, stop: threading.Event
) -> Drained:
    """Until the kubelet's event writes over the last PEAK_INTERVALS readings are at most
    EVENT_BACKLOG_QPS, and not before ``not_before_s`` (monotonic: the warm-up's end).

    Read on the sweep's sample period, so the rate spans what a peak spans:
    a window opened on a rate read over one reading was seen among events
    still at 10/s. A kubelet whose /metrics does not answer never drains.
    """
    readings: list[RequestSample] = []

    def drained() -> bool:
        sample = kubelet_requests(core, node)
        if sample is not None:
            readings.append(sample)
        rate = event_write_rate(readings[-(PEAK_INTERVALS + 1) :])
        return (
            len(readings) > PEAK_INTERVALS
            and rate is not None
            and rate <= EVENT_BACKLOG_QPS
            and time.monotonic() >= not_before_s
        )

    done = poll_true(
        drained, within=timeouts.OVERHEAD_EVENTS_DRAINED, every=REQUEST_SAMPLE_S, stop=stop
    )
    return Drained(done, time.monotonic())


def wait_pods_gone(core: client.CoreV1Api, namespace: str) -> None:
    if not poll_true(
        lambda: (
            not core.list_namespaced_pod(namespace, _request_timeout=timeouts.API_REQUEST).items
        ),
        within=timeouts.NAMESPACE_GONE,
    ):
        raise HarnessError(
            f"the cell's pods were not gone within {timeouts.NAMESPACE_GONE:.0f}s",
            "see `crashloop status`; the next cell would run beside them",
        )
