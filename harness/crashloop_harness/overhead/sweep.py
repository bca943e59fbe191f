"""The overhead sweep: what N crash-looping pods cost one worker, per back-off config.

For each worker and pod count, N bare crashing containers run on that worker
alone (the other workers idle), and once per pod count N pods that run and
never crash stand as the baseline. Each cell: its worker's runtime is seen
rid of the cells before it, the pods are created, every one is seen started,
crashing pods climb their curve until every one waits the cap (a defined
place: one restart per pod per cap, however fast they started), every other
worker's runtime is seen rid of the cells before it (their teardown runs
beside the climb, not the window), a warm-up passes and the kubelet's onset
events drain, then a measured window; the pods are deleted at once before the
next cell (the waits: waits.py).
Around the window the node's processes are read (``/proc``, through ``docker
exec`` into the kind node), and during it the kubelet's own request counters
(``/metrics`` through the node proxy) every REQUEST_SAMPLE_S. A few pods per
cell are watched for their attempts (the workload's own reports, from the API)
to see whether the kubelet keeps its curve.

Every bad input is refused before anything is created: an unknown worker, a
pod count that does not fit the node, a window too short to see one capped
restart.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from kubernetes import client

from crashloop_harness.cluster.kube import force_delete_pods
from crashloop_harness.cluster.lifecycle import Cluster
from crashloop_harness.cluster.target import RunEnding, RunTarget
from crashloop_harness.core.conventions import SAMPLED_LABEL
from crashloop_harness.core.progress import Progress
from crashloop_harness.overhead.analysis import (
    EVENT_BACKLOG_QPS,
    KUBELET,
    PEAK_INTERVALS,
    RUNTIME,
    Cell,
    ProcessTimes,
    RequestSample,
    Restart,
    UsageSample,
    allowed_restarts,
    cpu_between,
    overshoot,
    request_rates,
    rss_of,
)
from crashloop_harness.overhead.nodeusage import kubelet_requests, read_processes
from crashloop_harness.overhead.output import write_overhead
from crashloop_harness.overhead.plan import BASELINE_WINDOW_S, OverheadPlan, WorkerTarget
from crashloop_harness.overhead.pods import ROLE, SAMPLED_PODS, overhead_pod
from crashloop_harness.overhead.waits import (
    REQUEST_SAMPLE_S,
    restart_counts,
    wait_all_started,
    wait_at_cap,
    wait_events_drained,
    wait_nodes_cleared,
    wait_pods_gone,
)
from crashloop_harness.recording.apirecorder import ApiRecorder
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.recording.scope import RecordingScope
from crashloop_harness.runs.ending import apply_ending
from crashloop_harness.runs.execute import execute
from crashloop_harness.runs.lifecycle import RunSetup, RunState, prepare_run


@dataclass(kw_only=True)
class OverheadRun(RunState):
    """A sweep's plan, its cells as measured, and where it was written.

    ``status`` ends "measured" when every cell was; "interrupted" or "error" (a
    kubelet restarted or stopped, the engine gone) as any run.
    """

    plan: OverheadPlan
    cells: list[Cell] = field(default_factory=list)


@dataclass(frozen=True)
class _Sweep:
    """What every cell of one sweep shares."""

    api: client.ApiClient
    namespace: str
    run_id: str
    run_dir: Path
    image: str
    plan: OverheadPlan
    stop: threading.Event
    progress: Progress


def run_overhead(
    cluster: Cluster,
    plan: OverheadPlan,
    progress: Progress,
    *,
    stop: threading.Event | None = None,
    on_cell: Callable[[OverheadRun], object] | None = None,
) -> OverheadRun:
    """Measure every cell of ``plan``; each finished cell is handed to ``on_cell`` at once.

    The sweep goes through the one run lifecycle: its cluster's leftovers
    cleared first, its kubelets and engine read at both ends (a kubelet
    restarted mid-sweep makes it an error), evidence of a failure gathered.
    """
    setup = prepare_run(cluster, ROLE, progress, observer=None)
    result = OverheadRun(run_id=setup.run_id, run_dir=setup.run_dir, plan=plan)
    sweep = _Sweep(
        setup.api,
        setup.namespace,
        setup.run_id,
        setup.run_dir,
        setup.image,
        plan,
        stop or threading.Event(),
        progress,
    )
    return execute(cluster, setup, result, _SweepSteps(sweep, on_cell))


class _SweepSteps:
    """The sweep's steps in the lifecycle: its cells, one after another, are its observation."""

    interrupted_reason = "interrupted (a signal) before every cell"

    def __init__(self, sweep: _Sweep, on_cell: Callable[[OverheadRun], object] | None) -> None:
        self.sweep = sweep
        self.on_cell = on_cell

    def deploy(self, setup: RunSetup, result: OverheadRun) -> None:
        del setup, result  # each cell creates its own pods

    def observe(self, setup: RunSetup, result: OverheadRun) -> None:
        del setup
        for target, pods, crashing in self.sweep.plan.cells():
            if self.sweep.stop.is_set():
                result.status, result.reason = "interrupted", "stopped before every cell"
                return
            kind = "crashing" if crashing else "running (baseline)"
            self.sweep.progress(f"{target.worker}: {pods} {kind} pods")
            result.cells.append(_measure_cell(self.sweep, target, pods=pods, crashing=crashing))
            if self.on_cell is not None:
                self.on_cell(result)
        result.status = "measured"

    def stop(self, setup: RunSetup, result: OverheadRun) -> None:
        del result  # each cell stopped its own recorder
        setup.recorder.stop()

    def conclude(self, setup: RunSetup, result: OverheadRun, ending: RunEnding) -> None:
        del setup
        # A cell measured across a kubelet's restart reads two processes as one.
        apply_ending(result, ending)

    def write(self, setup: RunSetup, result: OverheadRun, cluster: RunTarget) -> None:
        del setup, cluster
        write_overhead_run(result)


@dataclass(frozen=True)
class _Window:
    """What was read around and during one cell's window."""

    start_ns: int
    end_ns: int
    levels_before: dict[str, int]  # pod -> restarts so far
    levels_after: dict[str, int]
    procs_before: list[ProcessTimes]
    procs_after: list[ProcessTimes]
    requests: list[RequestSample]  # from the window's start
    usage: list[UsageSample]

    @property
    def seconds(self) -> float:
        return (self.end_ns - self.start_ns) / 1e9


def _measure_cell(sweep: _Sweep, target: WorkerTarget, *, pods: int, crashing: bool) -> Cell:
    core = client.CoreV1Api(sweep.api)
    kind = "crashing" if crashing else "baseline"
    cell_dir = sweep.run_dir / "cells" / f"{target.worker}-{pods}-{kind}"
    cell_dir.mkdir(parents=True)
    recorder = ApiRecorder(
        RecordingScope(
            sweep.api, sweep.namespace, sweep.run_id, cell_dir, {target.node: target.worker}
        ),
        label_selector=f"{SAMPLED_LABEL}=true",
        keep_trace=False,
    )
    # This cell's own node rid of the cells before, before its first pod: once
    # its pods are there, a sandbox on it no longer tells whose it is. (With three
    # workers the plan puts no cell after one on its own node, so this is at once.)
    wait_nodes_cleared([target.node], sweep.stop)
    recorder.start()
    try:
        began = time.monotonic()
        for index in range(pods):
            manifest = overhead_pod(
                target.worker, sweep.run_id, sweep.image, index, crashing=crashing
            )
            core.create_namespaced_pod(sweep.namespace, manifest)
        wait_all_started(core, sweep.namespace, pods)
        sweep.progress(f"  every pod started after {time.monotonic() - began:.0f}s")
        at_cap, climb_s = (
            wait_at_cap(core, sweep.namespace, target.curve, sweep.stop)
            if crashing
            else (None, None)
        )
        if climb_s is not None:
            sweep.progress(f"  {'at' if at_cap else 'NOT at'} the cap after {climb_s:.0f}s more")
        # Every other worker's runtime rid of the cells before too (their teardown
        # is load on the shared cores): it ran while this cell's pods started and
        # climbed, which nothing measures, and it is over before the warm-up.
        others = [t.node for t in sweep.plan.targets if t.node != target.node]
        wait_nodes_cleared(others, sweep.stop)
        sweep.progress(f"  every other worker clear after {time.monotonic() - began:.0f}s")
        # A settling period the cell measures nothing in, and then the pods' onset
        # events sent: the window reads the steady cost, not the start.
        drained = wait_events_drained(
            core, target.node, not_before_s=time.monotonic() + sweep.plan.warmup_s, stop=sweep.stop
        )
        sweep.progress(
            f"  events {'drained' if drained.drained else 'NOT drained'} after "
            f"{drained.at_s - began:.0f}s; the window opens"
        )
        window_s = sweep.plan.windows_s[target.worker] if crashing else BASELINE_WINDOW_S
        window = _read_window(core, sweep, target.node, window_s)
    finally:
        recorder.stop()
        recorder.trace.close()
        force_delete_pods(sweep.api, sweep.namespace)
        wait_pods_gone(core, sweep.namespace)
    span = timedelta(seconds=window.seconds)
    before, after = window.levels_before, window.levels_after
    allowed = (
        sum(allowed_restarts(target.curve, n, span) for n in before.values()) if crashing else 0
    )
    return Cell(
        worker=target.worker,
        pods=pods,
        crashing=crashing,
        window_s=window.seconds,
        kubelet_cpu_s=cpu_between(window.procs_before, window.procs_after, [KUBELET]),
        runtime_cpu_s=cpu_between(window.procs_before, window.procs_after, RUNTIME),
        kubelet_rss_bytes=rss_of(window.procs_after, KUBELET),
        requests=request_rates(window.requests),
        restarts=sum(max(after.get(pod, 0) - n, 0) for pod, n in before.items()),
        restarts_allowed=allowed if crashing else 0,
        overshoot=overshoot(
            target.curve, _restarts_in(recorder.attempts(), window.start_ns, window.end_ns)
        ),
        request_samples=tuple(window.requests),
        usage_samples=tuple(window.usage),
        at_cap=at_cap,
        climb_s=climb_s,
        events_drained=drained.drained,
        drained_s=drained.at_s - began,
    )


def _read_window(core: client.CoreV1Api, sweep: _Sweep, node: str, window_s: float) -> _Window:
    """The node's processes and the pods' restart counts around the window; every
    REQUEST_SAMPLE_S in it (a sample period, not a wait on anything) the kubelet's
    request counters and the processes' CPU so far, kept as the cell's series."""
    levels_before = restart_counts(core, sweep.namespace)
    procs_before = read_processes(node)
    start_ns, start_s = time.time_ns(), time.monotonic()
    requests = [kubelet_requests(core, node)]
    usage: list[UsageSample] = []

    def used(reading: list[ProcessTimes]) -> UsageSample:
        return UsageSample(
            time.monotonic() - start_s,
            cpu_between(procs_before, reading, [KUBELET]),
            cpu_between(procs_before, reading, RUNTIME),
        )

    window_end = start_s + window_s
    while not sweep.stop.is_set() and (now := time.monotonic()) < window_end:
        # On a fixed beat from the window's start, however long the last reads took
        # (2-5 s on a busy node), so the readings stay REQUEST_SAMPLE_S apart.
        beats = math.floor((now - start_s) / REQUEST_SAMPLE_S) + 1
        sweep.stop.wait(min(start_s + beats * REQUEST_SAMPLE_S, window_end) - now)
        requests.append(kubelet_requests(core, node))
        if time.monotonic() < window_end:  # the last one is the reading after the window
            usage.append(used(read_processes(node)))
    procs_after = read_processes(node)
    usage.append(used(procs_after))
    end_ns = time.time_ns()
    return _Window(
        start_ns=start_ns,
        end_ns=end_ns,
        levels_before=levels_before,
        levels_after=restart_counts(core, sweep.namespace),
        procs_before=procs_before,
        procs_after=procs_after,
        requests=[
            RequestSample(sample.at_s - start_s, sample.counts)
            for sample in requests
            if sample is not None
        ],
        usage=usage,
    )


def _restarts_in(records: Sequence[AttemptRecord], start_ns: int, end_ns: int) -> list[Restart]:
    """Every restart of a sampled pod that started inside the window, with its delay."""
    by_attempt = {(r.pod, r.container, r.attempt): r for r in records}
    found = []
    for (pod, container, attempt), record in by_attempt.items():
        previous = by_attempt.get((pod, container, attempt - 1))
        if attempt < 1 or previous is None or previous.finished_at_ns is None:
            continue
        if start_ns <= record.started_at_ns <= end_ns:
            delay_s = (record.started_at_ns - previous.finished_at_ns) / 1e9
            found.append(Restart(attempt, delay_s))
    return found


def plan_document(plan: OverheadPlan) -> dict[str, Any]:
    """The plan as overhead.json keeps it."""
    return {
        "workers": {
            t.worker: {
                "node": t.node,
                "max_pods": t.max_pods,
                "pods_there": t.pods_there,
                "cap_s": t.curve.maximum.total_seconds(),
                "window_s": plan.windows_s[t.worker],
            }
            for t in plan.targets
        },
        "pods": list(plan.pods),
        "warmup_s": plan.warmup_s,
        "baseline_worker": plan.baseline_worker,
        "baseline_window_s": BASELINE_WINDOW_S,
        "sampled_pods": SAMPLED_PODS,
        "request_sample_s": REQUEST_SAMPLE_S,
        "peak_intervals": PEAK_INTERVALS,
        "event_backlog_qps": EVENT_BACKLOG_QPS,
    }


def write_overhead_run(run: OverheadRun) -> Path:
    """The run's outputs as measured so far (after every cell, and at the end)."""
    return write_overhead(
        run.run_dir,
        run_id=run.run_id,
        status=run.status,
        reason=run.reason,
        plan=plan_document(run.plan),
        cells=run.cells,
    )
