"""The overhead sweep: what N crash-looping pods cost one worker, per back-off config.

For each worker and pod count, N bare crashing containers run on that worker
alone (the other workers idle), and once per pod count N pods that run and
never crash stand as the baseline. Each cell: the pods are created, every one
is seen started, a warm-up passes, then a measured window; the pods are
deleted at once before the next cell. Around the window the node's processes
are read (``/proc``, through ``docker exec`` into the kind node), and during it
the kubelet's own request counters (``/metrics`` through the node proxy) every
REQUEST_SAMPLE_S. A few pods per cell are watched for their attempts (the
workload's own reports, from the API) to see whether the kubelet keeps its curve.

Every bad input is refused before anything is created: an unknown worker, a
pod count that does not fit the node, a window too short to see one capped
restart.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

import urllib3
from kubernetes import client
from tenacity import RetryError, Retrying, retry_if_result, stop_after_delay, wait_fixed

from harness.cluster.kube import create_namespace, delete_namespace, force_delete_pods, node_configz
from harness.cluster.lifecycle import Cluster, live_config_rows
from harness.core import timeouts
from harness.core.errors import HarnessError
from harness.core.proc import run
from harness.model.backoff import BackoffCurve
from harness.model.overhead import (
    KUBELET,
    RUNTIME,
    Cell,
    ProcessTimes,
    RequestSample,
    Restart,
    allowed_restarts,
    cpu_between,
    overshoot,
    parse_proc_stats,
    parse_request_counts,
    request_rates,
    rss_of,
)
from harness.outputs.overheadout import write_overhead
from harness.pods.skeleton import (
    MAIN_CONTAINER,
    pod_for_worker,
    workload_container,
)
from harness.profiles import ClusterSpec
from harness.recording.apirecorder import ApiRecorder
from harness.recording.records import AttemptRecord
from harness.runs import leftovers
from harness.runs.lifecycle import new_run_dir, worker_nodes
from harness.substrate.workloadimage import ensure_image, load_into

Progress = Callable[[str], None]

ROLE: Final = "overhead"
SAMPLED_LABEL: Final = "crashloop.harness/sampled"
# Pods per cell whose attempts are recorded: enough for the overshoot's spread,
# few enough that watching them costs the machine nothing it measures.
SAMPLED_PODS: Final = 3
# How often the kubelet's request counters are read in a window: each read
# makes the kubelet render its /metrics, so not more often than needed for a peak.
REQUEST_SAMPLE_S: Final = 10.0
# The shortest window, and the share of a cap a window adds beyond it so that
# one capped restart fits.
MIN_WINDOW_S: Final = 60.0
CAP_MARGIN: Final = 1.1
DEFAULT_WARMUP_S: Final = 30.0
DEFAULT_PODS: Final = "0,10,30,60,full"
FULL: Final = "full"
DEFAULT_MAX_PODS: Final = 110
# /proc is read through one `cat`: Linux's clock ticks and page size (kind nodes).
_TICKS_PER_S: Final = 100
_PAGE_BYTES: Final = 4096
_PROC_STATS: Final = "cat /proc/[0-9]*/stat 2>/dev/null; true"


@dataclass(frozen=True)
class WorkerTarget:
    """One worker of the sweep: its node, its live curve, and how many pods still fit."""

    worker: str
    node: str
    curve: BackoffCurve
    max_pods: int
    pods_there: int

    @property
    def room(self) -> int:
        return max(self.max_pods - self.pods_there, 0)


@dataclass(frozen=True)
class OverheadPlan:
    """What the sweep will do, checked before anything is created."""

    targets: tuple[WorkerTarget, ...]
    pods: tuple[int, ...]
    warmup_s: float
    windows_s: Mapping[str, float]  # worker -> its window
    baseline_worker: str

    def cells(self) -> list[tuple[WorkerTarget, int, bool]]:
        """(target, pods, crashing), baselines first; no crashing cell of zero pods."""
        base = next(t for t in self.targets if t.worker == self.baseline_worker)
        order = [(base, n, False) for n in self.pods]
        order += [(t, n, True) for t in self.targets for n in self.pods if n > 0]
        return order


def window_for(curve: BackoffCurve, duration_s: float | None) -> float:
    """The window of one cell: given, or one cap plus a margin (at least MIN_WINDOW_S)."""
    needed = curve.maximum.total_seconds() * CAP_MARGIN
    if duration_s is None:
        return max(MIN_WINDOW_S, needed)
    if duration_s < needed:
        raise HarnessError(
            f"--duration {duration_s:g}s is too short to see one capped restart on a worker "
            f"whose back-off caps at {curve.maximum.total_seconds():g}s",
            f"use --duration {needed:.0f} or more, or leave it out (each worker's window is "
            f"then its cap plus {CAP_MARGIN - 1:.0%}, at least {MIN_WINDOW_S:.0f}s)",
        )
    return duration_s


def parse_pod_counts(text: str) -> list[int | None]:
    """``0,10,30,full`` -> [0, 10, 30, None] (None: as many as the node takes)."""
    counts: list[int | None] = []
    for item in (part.strip() for part in text.split(",")):
        if item == FULL:
            counts.append(None)
            continue
        try:
            value = int(item)
        except ValueError:
            value = -1
        if value < 0:
            raise HarnessError(
                f"--pods {text!r}: {item!r} is not a pod count",
                f"give counts such as {DEFAULT_PODS} (whole numbers, or {FULL!r}: as many "
                "as the node takes)",
            )
        counts.append(value)
    if not counts:
        raise HarnessError("--pods is empty", f"give counts such as {DEFAULT_PODS}")
    return counts


@dataclass(frozen=True)
class OverheadRequest:
    """The sweep asked for, checked against the cluster spec alone (nothing exists yet)."""

    workers: tuple[str, ...]
    counts: tuple[int | None, ...]  # None: as many as fit
    duration_s: float | None
    warmup_s: float


def check_overhead_request(
    spec: ClusterSpec,
    *,
    workers: Sequence[str],
    pods: str,
    duration_s: float | None,
    warmup_s: float,
) -> OverheadRequest:
    """Every refusal that needs no cluster: before one is created or a pod made."""
    known = [w.name for w in spec.workers]
    unknown = [w for w in workers if w not in known]
    if unknown or not workers:
        raise HarnessError(
            f"unknown worker(s) {unknown}" if unknown else "no worker to measure",
            f"choose from {', '.join(known)} (--workers fast,reduced,default)",
        )
    if warmup_s < 0:
        raise HarnessError(f"--warmup {warmup_s:g}s is negative", "give 0 or more seconds")
    counts = parse_pod_counts(pods)
    for count in counts:
        if count is not None and count > DEFAULT_MAX_PODS:
            raise HarnessError(
                f"{count} pods do not fit one node (the kubelet's maxPods is {DEFAULT_MAX_PODS}, "
                "and its node's own pods take some)",
                f"use at most {DEFAULT_MAX_PODS}, or {FULL!r} for as many as fit",
            )
    for worker in workers:
        window_for(spec.worker(worker).curve, duration_s)
    return OverheadRequest(tuple(workers), tuple(counts), duration_s, warmup_s)


def plan_overhead(
    api: client.ApiClient, cluster: Cluster, request: OverheadRequest
) -> OverheadPlan:
    """The sweep on the live nodes, or a HarnessError: a count that does not fit a node."""
    rows = {row.worker: row for row in live_config_rows(api, cluster.spec) if row.worker}
    nodes = worker_nodes(api)
    targets = tuple(_target(api, w, nodes[w], rows[w].curve) for w in request.workers)
    least_room = min(t.room for t in targets)
    for target in targets:
        for count in request.counts:
            if count is not None and count > target.room:
                raise HarnessError(
                    f"{count} pods do not fit worker {target.worker} (node {target.node}: "
                    f"maxPods {target.max_pods}, {target.pods_there} pods there already)",
                    f"use at most {target.room}, or {FULL!r} for as many as fit",
                )
    resolved = tuple(sorted({least_room if c is None else c for c in request.counts}))
    windows = {t.worker: window_for(t.curve, request.duration_s) for t in targets}
    return OverheadPlan(
        targets=targets,
        pods=resolved,
        warmup_s=request.warmup_s,
        windows_s=windows,
        baseline_worker=targets[0].worker,
    )


def _target(api: client.ApiClient, worker: str, node: str, curve: BackoffCurve) -> WorkerTarget:
    config = node_configz(api, node).get("kubeletconfig", {})
    max_pods = int(config.get("maxPods", DEFAULT_MAX_PODS))
    there = client.CoreV1Api(api).list_pod_for_all_namespaces(
        field_selector=f"spec.nodeName={node},status.phase!=Succeeded,status.phase!=Failed",
        _request_timeout=timeouts.API_REQUEST,
    )
    return WorkerTarget(worker, node, curve, max_pods, len(there.items))


def overhead_pod(
    worker: str, run_id: str, image: str, index: int, *, crashing: bool
) -> dict[str, Any]:
    """One pod of a cell: the bare crash, or (baseline) a container that runs and never crashes.

    The baseline writes no termination message: its heartbeat would load the
    node with writes the crashing pods do not make.
    """
    args = (
        ["--mode", "exit", "--exit-code", "1"]
        if crashing
        else ["--mode", "sleep", "--termination-log", ""]
    )
    pod = pod_for_worker(
        name=f"{'crash' if crashing else 'idle'}-{worker}-{index}",
        worker=worker,
        run_id=run_id,
        role=ROLE,
        containers=[workload_container(MAIN_CONTAINER, image, args)],
    )
    if index < SAMPLED_PODS:
        pod["metadata"]["labels"][SAMPLED_LABEL] = "true"
    return pod


@dataclass
class OverheadRun:
    """A sweep's plan, its cells as measured, and where it was written."""

    run_id: str
    run_dir: Path
    plan: OverheadPlan
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    cells: list[Cell] = field(default_factory=list)
    status: str = "running"
    reason: str = ""


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


def run_overhead(
    cluster: Cluster,
    plan: OverheadPlan,
    progress: Progress,
    *,
    stop: threading.Event | None = None,
    on_cell: Callable[[OverheadRun], object] | None = None,
) -> OverheadRun:
    """Measure every cell of ``plan``; each finished cell is handed to ``on_cell`` at once."""
    stop = stop or threading.Event()
    api = cluster.api()
    run_id, run_dir = new_run_dir("overhead")
    result = OverheadRun(run_id, run_dir, plan)
    progress("workload image")
    image = ensure_image()
    load_into(cluster.name, cluster.kind_bin, image)
    namespace = create_namespace(
        api,
        "crashloop-overhead",
        labels=leftovers.run_labels(run_id),
        annotations=leftovers.run_annotations(),
    )
    progress(f"run {run_id}: namespace {namespace}, records in {run_dir}")
    sweep = _Sweep(api, namespace, run_id, run_dir, image, plan, stop)
    try:
        for target, pods, crashing in plan.cells():
            if stop.is_set():
                result.status, result.reason = "interrupted", "stopped before every cell"
                break
            kind = "crashing" if crashing else "running (baseline)"
            progress(f"{target.worker}: {pods} {kind} pods")
            result.cells.append(_measure_cell(sweep, target, pods=pods, crashing=crashing))
            if on_cell is not None:
                on_cell(result)
        else:
            result.status = "measured"
    except KeyboardInterrupt:
        result.status, result.reason = "interrupted", "interrupted (a signal)"
    finally:
        force_delete_pods(api, namespace)
        delete_namespace(api, namespace)
    return result


def _measure_cell(sweep: _Sweep, target: WorkerTarget, *, pods: int, crashing: bool) -> Cell:
    core = client.CoreV1Api(sweep.api)
    namespace, plan, stop = sweep.namespace, sweep.plan, sweep.stop
    window_s = plan.windows_s[target.worker] if crashing else MIN_WINDOW_S
    kind = "crashing" if crashing else "baseline"
    cell_dir = sweep.run_dir / "cells" / f"{target.worker}-{pods}-{kind}"
    cell_dir.mkdir(parents=True)
    recorder = ApiRecorder(
        api=sweep.api,
        namespace=namespace,
        run_id=sweep.run_id,
        run_dir=cell_dir,
        node_workers={target.node: target.worker},
        label_selector=f"{SAMPLED_LABEL}=true",
    )
    recorder.start()
    try:
        for index in range(pods):
            manifest = overhead_pod(
                target.worker, sweep.run_id, sweep.image, index, crashing=crashing
            )
            core.create_namespaced_pod(namespace, manifest)
        _wait_all_started(core, namespace, pods)
        stop.wait(plan.warmup_s)  # a settling period the cell measures nothing in
        levels_before = _restart_counts(core, namespace)
        procs_before = _read_procs(target.node)
        window_start_ns = time.time_ns()
        samples = [_request_sample(core, target.node)]
        window_end = time.monotonic() + window_s
        while not stop.is_set() and time.monotonic() < window_end:
            stop.wait(min(REQUEST_SAMPLE_S, max(window_end - time.monotonic(), 0.0)))
            samples.append(_request_sample(core, target.node))
        procs_after = _read_procs(target.node)
        window_end_ns = time.time_ns()
        levels_after = _restart_counts(core, namespace)
    finally:
        recorder.stop()
        force_delete_pods(sweep.api, namespace)
        _wait_pods_gone(core, namespace)
    measured_s = (window_end_ns - window_start_ns) / 1e9
    window = timedelta(seconds=measured_s)
    allowed = (
        sum(allowed_restarts(target.curve, level, window) for level in levels_before.values())
        if crashing
        else 0
    )
    achieved = sum(max(levels_after.get(p, 0) - level, 0) for p, level in levels_before.items())
    restarts = _restarts_in(recorder.attempts(), window_start_ns, window_end_ns)
    return Cell(
        worker=target.worker,
        pods=pods,
        crashing=crashing,
        window_s=measured_s,
        kubelet_cpu_s=cpu_between(procs_before, procs_after, [KUBELET]),
        runtime_cpu_s=cpu_between(procs_before, procs_after, RUNTIME),
        kubelet_rss_bytes=rss_of(procs_after, KUBELET),
        requests=request_rates([s for s in samples if s is not None]),
        restarts=achieved,
        restarts_allowed=allowed,
        overshoot=overshoot(target.curve, restarts),
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


def _read_procs(node: str) -> list[ProcessTimes]:
    text = run(["docker", "exec", node, "sh", "-c", _PROC_STATS], timeout=timeouts.API_REQUEST)
    return parse_proc_stats(text, ticks_per_s=_TICKS_PER_S, page_bytes=_PAGE_BYTES)


def _request_sample(core: client.CoreV1Api, node: str) -> RequestSample | None:
    """The kubelet's request counters now; None when its /metrics did not answer."""
    try:
        raw = core.connect_get_node_proxy_with_path(
            node, "metrics", _preload_content=False, _request_timeout=timeouts.API_REQUEST
        )
    except (client.ApiException, urllib3.exceptions.HTTPError):
        return None
    return RequestSample(
        time.monotonic(), parse_request_counts(raw.data.decode("utf-8", "replace"))
    )


def _restart_counts(core: client.CoreV1Api, namespace: str) -> dict[str, int]:
    pods = core.list_namespaced_pod(namespace, _request_timeout=timeouts.API_REQUEST).items
    return {
        pod.metadata.name: sum(
            int(s.restart_count or 0) for s in pod.status.container_statuses or []
        )
        for pod in pods
    }


def _listed(core: client.CoreV1Api, namespace: str) -> list[Any]:
    items: list[Any] = core.list_namespaced_pod(
        namespace, _request_timeout=timeouts.API_REQUEST
    ).items
    return items


def _started(pod: Any) -> bool:
    """The pod's container has run at least once (running now, or ended before)."""
    for status in pod.status.container_statuses or []:
        state, last = status.state, status.last_state
        if (state and (state.running or state.terminated)) or (last and last.terminated):
            return True
    return False


def _wait_all_started(core: client.CoreV1Api, namespace: str, pods: int) -> None:
    def started() -> int:
        listed = core.list_namespaced_pod(namespace, _request_timeout=timeouts.API_REQUEST).items
        return sum(_started(pod) for pod in listed)

    try:
        Retrying(
            stop=stop_after_delay(timeouts.OVERHEAD_PODS_STARTED),
            wait=wait_fixed(2),
            retry=retry_if_result(lambda count: count < pods),
        )(started)
    except RetryError as error:
        raise HarnessError(
            f"only {error.last_attempt.result()} of {pods} pods started within "
            f"{timeouts.OVERHEAD_PODS_STARTED:.0f}s",
            "fewer pods (--pods), or CRASHLOOP_TIMEOUT_SCALE=2 on a slow machine",
        ) from error


def _wait_pods_gone(core: client.CoreV1Api, namespace: str) -> None:
    try:
        Retrying(
            stop=stop_after_delay(timeouts.NAMESPACE_GONE),
            wait=wait_fixed(1),
            retry=retry_if_result(lambda left: left > 0),
        )(
            lambda: len(
                core.list_namespaced_pod(namespace, _request_timeout=timeouts.API_REQUEST).items
            )
        )
    except RetryError as error:
        raise HarnessError(
            f"the cell's pods were not gone within {timeouts.NAMESPACE_GONE:.0f}s",
            "see `crashloop status`; the next cell would run beside them",
        ) from error


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
        "baseline_window_s": MIN_WINDOW_S,
        "sampled_pods": SAMPLED_PODS,
        "request_sample_s": REQUEST_SAMPLE_S,
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
