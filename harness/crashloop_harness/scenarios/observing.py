"""What a scenario's watch asks of the run it is part of: a container's attempts, when it
first started or turned Ready, and which workers still owe a restart or a window.

Watches call these while the run is going; the metrics (:mod:`crashloop_harness.scenarios.common`)
are judged afterwards from what they kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Final

from crashloop_harness.model.durations import to_ns
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.scenarios.common import LivePod, RunView
from crashloop_harness.scenarios.eventlog import parse_events

# After a window ends, the recorder may still be reading the attempt that
# ended right at the edge: give it this long.
WINDOW_SETTLE: Final = timedelta(seconds=2)


def attempts_of(attempts: Sequence[AttemptRecord], pod: str, container: str) -> list[AttemptRecord]:
    """One container's attempts of all the run recorded."""
    return [a for a in attempts if a.pod == pod and a.container == container]


def first_start(attempts: Sequence[AttemptRecord], pod: str, container: str) -> int | None:
    """The first start of ``pod``'s ``container`` (runtime ns), None before it ran."""
    return min((a.started_at_ns for a in attempts_of(attempts, pod, container)), default=None)


# What the workload's readiness probe (pods.skeleton.ready_probe) writes on
# its first success: the moment the kubelet learned the pod is Ready, in ns.
READY_PROBE_LOG: Final = "ready-probe.log"


def first_ready_ns(view: RunView, pod: LivePod) -> int | None:
    """When ``pod``'s readiness probe first passed (its own log), None before it did."""
    events = parse_events(view.read_pod_file(pod, READY_PROBE_LOG) or "")
    return events[0].unix_ns if events else None


def restarts_pending(
    view: RunView, scenario: str, pod_name: Callable[[str], str], restart: int
) -> list[str]:
    """Workers whose pod's main container has not started attempt ``restart`` yet."""
    started = {a.pod for a in view.attempts() if a.attempt >= restart}
    return [
        f"{scenario} restart {restart} on {worker}"
        for worker in view.nodes
        if pod_name(worker) not in started
    ]


def windows_pending(
    view: RunView,
    scenario: str,
    pod_name: Callable[[str], str],
    container: str,
    window: timedelta,
) -> list[str]:
    """Workers whose window, from the pod's first container start, has not ended."""
    attempts = view.attempts()
    settle_ns = to_ns(window + WINDOW_SETTLE)
    pending = []
    # A container that has not ended yet is recorded only by a recorder that
    # reads the runtime; from the API alone its start is the status's, which
    # is early by under a second (the window then ends that much sooner).
    listed: dict[str, LivePod] | None = None
    for worker in view.nodes:
        start = first_start(attempts, pod_name(worker), container)
        if start is None:
            if listed is None:
                listed = {pod.name: pod for pod in view.pods(scenario)}
            pod = listed.get(pod_name(worker))
            start = pod.api_started_ns.get(container) if pod is not None else None
        if start is None or time.time_ns() < start + settle_ns:
            pending.append(f"{scenario} window on {worker}")
    return pending
