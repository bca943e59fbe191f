"""Run the scenarios on every worker at once and write the run directory.

Like the conformance check (:mod:`harness.runs.check`): one namespace at the
`restricted` level, one :class:`~harness.recording.recorder.Recorder` for every
container attempt in it, waits on conditions (records arriving, pods turning
Ready) under named timeouts, then per-worker metrics against each node's live
curve. All requested scenarios share the namespace and the observation, so
the whole run takes about as long as its longest scenario.

The workload's own logs live in each pod's emptyDir; they are read from the
node's disk (``docker exec <node> cat /var/lib/kubelet/pods/<uid>/volumes/
kubernetes.io~empty-dir/records/<file>``) before the namespace is deleted,
so nothing needs ``kubectl exec`` into a shell-less image.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from kubernetes import client

from harness.cluster import kubeletstate
from harness.core import pins, timeouts
from harness.model.backoff import BackoffCurve
from harness.cluster.lifecycle import Cluster
from harness.core.errors import HarnessError
from harness.outputs.junit import write_junit
from harness.pods.skeleton import MAIN_CONTAINER, ROLE_LABEL
from harness.core.proc import run
from harness.recording.recorder import Recorder
from harness.recording.records import AttemptRecord
from harness.runs.lifecycle import RunEnding, RunState, apply_ending, clean_up, gather_evidence, prepare_run, run_ending, stop_reason
from harness.scenarios import CRITICAL_SIDECAR, FAST_RESTART, SCENARIOS, TASK_ISOLATION, metrics
from harness.pods import scenarios as sm
from harness.outputs.summary import KIND_SCENARIO_PREFIX, ClusterInfo, MetricSummary, RunSummary, outcome_of, summarize, write_summary

Progress = Callable[[str], None]


# Observation windows, counted from each worker's first start of the scenario.
# 120s shows the task-isolation difference (about 24 sessions on a 2s worker,
# 4 on the default curve); 150s lets the default curve's 40s and the reduced
# curve's 32s sidecar restarts complete with a ~7s proxy life in between.
TASK_WINDOW: Final = timedelta(seconds=120)
SIDECAR_WINDOW: Final = timedelta(seconds=150)
# Fresh-pod baseline: this many pods in a row per worker, i.e. one fewer
# delete-to-started latencies. It runs after the in-place window, not during
# it: on a small machine pod churn beside the measured pod delays the very
# restarts being judged (a 1s back-off measured at 4.8s while three workers
# replaced pods at once).
FRESH_PODS: Final = 4

# Timeouts: harness/core/timeouts.py (SCENARIOS, FRESH_POD).
# After a window ends, the recorder samples every 0.5s: give it this long to
# see an attempt that ended right at the edge.
SETTLE: Final = 2.0
# How often the wait loop re-checks pods when no record arrives.
POLL: Final = 1.0

_EMPTY_DIR: Final = "/var/lib/kubelet/pods/{uid}/volumes/kubernetes.io~empty-dir/records/{file}"
_NS_PER_S: Final = 1_000_000_000


@dataclass(kw_only=True)
class ScenarioRun(RunState):
    """What a scenario run observed and concluded."""

    scenarios: tuple[str, ...]
    curves: dict[str, BackoffCurve]  # worker -> curve of its live kubelet config
    nodes: dict[str, str]  # worker -> node
    results: dict[str, dict[str, metrics.WorkerResult]] = field(default_factory=dict)

    @property
    def failures(self) -> list[str]:
        return [f for by in self.results.values() for r in by.values() for f in r.failures]

    def result(self, scenario: str, worker: str) -> metrics.WorkerResult:
        try:
            return self.results[scenario][worker]
        except KeyError:
            raise KeyError(
                f"no {scenario} result for worker {worker} (run {self.status}: {self.reason})"
            ) from None


@dataclass
class _Observation:
    """What the wait loop gathers besides the recorder's attempts."""

    ready_ns: dict[str, int] = field(default_factory=dict)  # worker -> first Ready probe
    fresh_ns: dict[str, list[int]] = field(default_factory=dict)  # worker -> latencies
    client_logs: dict[str, str] = field(default_factory=dict)  # worker -> client.log
    app_restarts: dict[str, int] = field(default_factory=dict)  # worker -> restartCount
    window_end_ns: dict[str, int] = field(default_factory=dict)  # worker -> sidecar window end
    errors: list[str] = field(default_factory=list)


@dataclass
class _Live:
    """What the observation threads share about the running scenarios."""

    core: client.CoreV1Api
    namespace: str
    run_id: str
    image: str
    nodes: dict[str, str]
    recorder: Recorder
    seen: _Observation = field(default_factory=_Observation)
    # Ends the baseline threads when the run ends (this run's own).
    stop: threading.Event = field(default_factory=threading.Event)
    # Set by the caller to end the whole observation early (never set here).
    interrupt: threading.Event = field(default_factory=threading.Event)


def run_scenarios(
    cluster: Cluster,
    progress: Progress,
    scenarios: Iterable[str] = SCENARIOS,
    stop: threading.Event | None = None,
) -> ScenarioRun:
    """Run ``scenarios`` on every worker at once; never raises on a failed metric.

    ``stop`` ends the observation early from another thread (the demo's Ctrl-C):
    what was measured is kept and the run is marked interrupted.
    """
    wanted = tuple(s for s in SCENARIOS if s in set(scenarios))
    unknown = set(scenarios) - set(SCENARIOS)
    if unknown or not wanted:
        raise HarnessError(
            f"unknown scenarios {sorted(unknown)}" if unknown else "no scenario to run",
            f"choose from {', '.join(SCENARIOS)}",
        )
    setup = prepare_run(cluster, "scenarios", progress)
    api, nodes, namespace, recorder = setup.api, setup.nodes, setup.namespace, setup.recorder
    run_id, run_dir, image = setup.run_id, setup.run_dir, setup.image
    result = ScenarioRun(
        run_id=run_id, run_dir=run_dir, scenarios=wanted, curves=setup.curves, nodes=nodes
    )
    progress(f"scenarios: {', '.join(wanted)}")
    core = client.CoreV1Api(api)
    live = _Live(core, namespace, run_id, image, nodes, recorder)
    if stop is not None:
        live.interrupt = stop
    baselines: list[threading.Thread] = []
    kubelets_before = kubeletstate.snapshot(list(nodes.values()))
    try:
        recorder.start()
        for scenario in wanted:
            for worker in nodes:
                for pod in sm.scenario_pods(scenario, worker, run_id, image):
                    core.create_namespaced_pod(namespace, pod)
        if TASK_ISOLATION in wanted:
            baselines = [
                threading.Thread(
                    target=_fresh_pods,
                    args=(live, worker),
                    name=f"fresh-{worker}",
                    daemon=True,
                )
                for worker in nodes
            ]
        result.status, result.reason = _observe(live, wanted, baselines, progress)
    except KeyboardInterrupt:
        result.status = "interrupted"
        result.reason = "interrupted (a signal) before every scenario was observed"
    except Exception as error:
        result.status = "error"
        result.reason = f"{type(error).__name__}: {error}"
        raise
    finally:
        live.stop.set()
        for thread in baselines:
            if thread.ident is not None:  # started
                thread.join(timeout=timeouts.API_REQUEST)
        ending = _finish(result, live, cluster, progress, kubelets_before)
        clean_up(api, namespace, ending.engine_gone)
    return result


def _finish(
    result: ScenarioRun,
    live: _Live,
    cluster: Cluster,
    progress: Progress,
    kubelets_before: Mapping[str, kubeletstate.KubeletProcess | None],
) -> RunEnding:
    """Stop recording, compute and conclude every metric, write the outputs and evidence.

    The same ending as a check's: a kubelet that restarted or an engine that
    went away makes the run an error, a kubelet that stopped a failure.
    """
    live.recorder.stop()
    result.observer = live.recorder.cost
    ending = run_ending(kubelets_before)
    engine_gone = ending.engine_gone
    if engine_gone is None:
        _collect_logs(live.core, live.namespace, result.scenarios, live.nodes, live.seen)
    result.recorder_errors = list(live.recorder.errors.messages) + live.seen.errors
    attempts = live.recorder.attempts()
    result.results = compute(result.scenarios, result.curves, live.nodes, attempts, live.seen)
    _conclude(result)
    apply_ending(result, ending)
    result.finished_at = datetime.now(UTC)
    write_outputs(result, cluster)
    gather_evidence(live.core.api_client, cluster, live.namespace, result, ending)
    if result.observer is not None:
        progress(result.observer.headline())
    progress(f"run {result.run_id}: {result.status}; outputs in {result.run_dir}")
    return ending


# --- observation --------------------------------------------------------------------------


def _observe(
    live: _Live, wanted: tuple[str, ...], baselines: list[threading.Thread], progress: Progress
) -> tuple[str, str]:
    """Wait until every scenario has shown what it needs, or the timeout."""
    nodes, seen, recorder = live.nodes, live.seen, live.recorder
    deadline = time.monotonic() + timeouts.SCENARIOS
    last = ""
    while True:
        attempts = recorder.attempts()
        pending: list[str] = []
        if TASK_ISOLATION in wanted:
            in_window = _window_pending(attempts, TASK_ISOLATION, nodes, TASK_WINDOW)
            if not in_window:
                _start_once(baselines)
            pending += in_window
            pending += [f"baseline {t.name}" for t in baselines if _unfinished(t)]
        if FAST_RESTART in wanted:
            _note_ready(live.core, live.namespace, nodes, seen)
            pending += [f"{FAST_RESTART} Ready on {w}" for w in nodes if w not in seen.ready_ns]
        if CRITICAL_SIDECAR in wanted:
            pending += _window_pending(attempts, CRITICAL_SIDECAR, nodes, SIDECAR_WINDOW)
        if not pending:
            return "observed", ""
        must_end = stop_reason(recorder)
        if must_end is not None:
            return "error", must_end
        if live.interrupt.is_set():
            return "interrupted", f"stopped while waiting for: {'; '.join(pending[:3])}"
        if time.monotonic() > deadline:
            return "timeout", f"still waiting after {timeouts.SCENARIOS:.0f}s: {'; '.join(pending)}"
        # Say what is awaited whenever that changes, not every poll.
        waiting = "; ".join(pending[:3]) + (f" (+{len(pending) - 3})" if len(pending) > 3 else "")
        if waiting != last:
            last = waiting
            progress(f"waiting: {waiting}")
        recorder.wait_for_change(timeout=POLL)


def _start_once(threads: list[threading.Thread]) -> None:
    for thread in threads:
        if thread.ident is None:
            thread.start()


def _unfinished(thread: threading.Thread) -> bool:
    """Not yet started, or still running."""
    return thread.ident is None or thread.is_alive()


def _window_pending(
    attempts: list[AttemptRecord],
    scenario: str,
    nodes: Mapping[str, str],
    window: timedelta,
) -> list[str]:
    """Workers whose window (from the scenario's first container start) has not ended."""
    pending = []
    for worker in nodes:
        start = _first_start(attempts, sm.pod_name(scenario, worker))
        end = None if start is None else start + _ns(window) + int(SETTLE * _NS_PER_S)
        if end is None or time.time_ns() < end:
            pending.append(f"{scenario} window on {worker}")
    return pending


def _first_start(attempts: list[AttemptRecord], pod: str) -> int | None:
    """The first container start of ``pod``'s main container (runtime ns)."""
    starts = [a.started_at_ns for a in attempts if a.pod == pod and a.container == MAIN_CONTAINER]
    return min(starts, default=None)


def _note_ready(
    core: client.CoreV1Api, namespace: str, nodes: Mapping[str, str], seen: _Observation
) -> None:
    """For each transient pod that turned Ready, read the first probe's own time."""
    pods = core.list_namespaced_pod(
        namespace,
        label_selector=f"{ROLE_LABEL}={FAST_RESTART}",
        _request_timeout=timeouts.API_REQUEST,
    ).items
    for pod in pods:
        worker = _worker_of(pod, nodes)
        if worker is None or worker in seen.ready_ns or not _is_ready(pod):
            continue
        text = _read_record(nodes[worker], pod.metadata.uid, sm.READY_PROBE_LOG, seen)
        events = metrics.parse_events(text or "")
        if events:
            seen.ready_ns[worker] = events[0].unix_ns


def _is_ready(pod: Any) -> bool:
    conditions = pod.status.conditions or []
    return any(c.type == "Ready" and c.status == "True" for c in conditions)


def _worker_of(pod: Any, nodes: Mapping[str, str]) -> str | None:
    return next((w for w, n in nodes.items() if n == pod.spec.node_name), None)


def _read_record(node: str, uid: str, file: str, seen: _Observation) -> str | None:
    """A file of the pod's records emptyDir, read from the node; None if absent."""
    try:
        return run(
            ["docker", "exec", node, "cat", _EMPTY_DIR.format(uid=uid, file=file)],
            timeout=timeouts.API_REQUEST,
        )
    except HarnessError as error:
        seen.errors.append(
            f"reading {file} of pod {uid} on {node}: {error.problem.splitlines()[0]}"
        )
        return None


def _fresh_pods(live: _Live, worker: str) -> None:
    """The baseline: a session per fresh pod, the next created as the last is deleted.

    The latency runs from the delete request (host clock, which the kind
    nodes share) to the new pod's container start (runtime clock).
    """
    core, namespace, recorder, stop = live.core, live.namespace, live.recorder, live.stop
    latencies: list[int] = []
    previous: str | None = None
    try:
        for index in range(FRESH_PODS):
            pod = sm.fresh_session_pod(worker, live.run_id, live.image, index)
            name = pod["metadata"]["name"]
            deleted_at = None
            if previous is not None:
                deleted_at = time.time_ns()
                core.delete_namespaced_pod(previous, namespace, grace_period_seconds=0)
            core.create_namespaced_pod(namespace, pod)
            started = _wait_attempt(recorder, name, stop, finished=False)
            if started is None:
                return
            if deleted_at is not None:
                latencies.append(started.started_at_ns - deleted_at)
            if _wait_attempt(recorder, name, stop, finished=True) is None:
                return
            previous = name
    except client.ApiException as error:
        live.seen.errors.append(f"fresh pods on {worker}: {error.status} {error.reason}")
    finally:
        live.seen.fresh_ns[worker] = latencies


def _wait_attempt(
    recorder: Recorder, pod: str, stop: threading.Event, *, finished: bool
) -> AttemptRecord | None:
    """The pod's first attempt once started (or finished); None on timeout or stop."""
    deadline = time.monotonic() + timeouts.FRESH_POD
    while not stop.is_set() and time.monotonic() < deadline:
        for record in recorder.attempts():
            if record.pod == pod and (not finished or record.finished_at_ns is not None):
                return record
        recorder.wait_for_change(timeout=POLL)
    return None


def _collect_logs(
    core: client.CoreV1Api,
    namespace: str,
    wanted: tuple[str, ...],
    nodes: Mapping[str, str],
    seen: _Observation,
) -> None:
    """Read what only the pods know, before the namespace goes."""
    try:
        pods = core.list_namespaced_pod(namespace, _request_timeout=timeouts.API_REQUEST).items
    except client.ApiException as error:
        seen.errors.append(f"listing pods for their logs: {error.status} {error.reason}")
        return
    for pod in pods:
        worker = _worker_of(pod, nodes)
        role = (pod.metadata.labels or {}).get(ROLE_LABEL)
        if worker is None:
            continue
        if role == CRITICAL_SIDECAR and CRITICAL_SIDECAR in wanted:
            text = _read_record(nodes[worker], pod.metadata.uid, sm.CLIENT_LOG, seen)
            seen.client_logs[worker] = text or ""
            statuses = pod.status.container_statuses or []
            app = next((s for s in statuses if s.name == MAIN_CONTAINER), None)
            if app is not None:
                seen.app_restarts[worker] = int(app.restart_count or 0)
        if role == FAST_RESTART and worker not in seen.ready_ns:
            text = _read_record(nodes[worker], pod.metadata.uid, sm.READY_PROBE_LOG, seen)
            events = metrics.parse_events(text or "")
            if events:
                seen.ready_ns[worker] = events[0].unix_ns


# --- metrics ------------------------------------------------------------------------------


def compute(
    wanted: Iterable[str],
    curves: Mapping[str, BackoffCurve],
    nodes: Mapping[str, str],
    attempts: list[AttemptRecord],
    seen: _Observation,
) -> dict[str, dict[str, metrics.WorkerResult]]:
    """Every scenario's metrics per worker, from what was recorded and read."""
    results: dict[str, dict[str, metrics.WorkerResult]] = {}
    for scenario in wanted:
        results[scenario] = {}
        for worker, curve in curves.items():
            node = nodes.get(worker, "")
            results[scenario][worker] = _compute_one(
                scenario, worker=worker, node=node, curve=curve, attempts=attempts, seen=seen
            )
    return results


def _compute_one(
    scenario: str,
    *,
    worker: str,
    node: str,
    curve: BackoffCurve,
    attempts: list[AttemptRecord],
    seen: _Observation,
) -> metrics.WorkerResult:
    def of(pod: str, container: str = MAIN_CONTAINER) -> list[AttemptRecord]:
        return [a for a in attempts if a.pod == pod and a.container == container]

    if scenario == TASK_ISOLATION:
        return metrics.task_isolation(
            worker=worker,
            node=node,
            curve=curve,
            attempts=of(sm.pod_name(TASK_ISOLATION, worker)),
            window=TASK_WINDOW,
            session=sm.SESSION_RUN_FOR,
            fresh_pod_ns=seen.fresh_ns.get(worker, []),
        )
    if scenario == FAST_RESTART:
        return metrics.fast_restart(
            worker=worker,
            node=node,
            curve=curve,
            attempts=of(sm.pod_name(FAST_RESTART, worker)),
            fail_times=sm.FAIL_TIMES,
            ready_ns=seen.ready_ns.get(worker),
        )
    pod = sm.pod_name(CRITICAL_SIDECAR, worker)
    app = of(pod)
    start = min((a.started_at_ns for a in app), default=0)
    try:
        events = metrics.parse_events(seen.client_logs.get(worker, ""))
    except ValueError as error:
        seen.errors.append(f"{worker} client.log: {error}")
        events = []
    return metrics.critical_sidecar(
        worker=worker,
        node=node,
        curve=curve,
        sidecar_attempts=of(pod, sm.PROXY_CONTAINER),
        app_attempts=app,
        app_restart_count=seen.app_restarts.get(worker),
        client_events=events,
        window_end_ns=start + _ns(SIDECAR_WINDOW) if start else time.time_ns(),
    )


def _conclude(result: ScenarioRun) -> None:
    if result.status in ("interrupted", "error"):
        return
    all_passed = all(r.passed for by in result.results.values() for r in by.values())
    if result.status == "observed":
        result.status = "passed" if all_passed else "failed"
        if not all_passed:
            result.reason = f"{len(result.failures)} metric(s) outside the model's tolerance"
    else:
        result.status = "failed"


# --- outputs ------------------------------------------------------------------------------


def summary_of(result: ScenarioRun, cluster: Cluster) -> RunSummary:
    """summary.json in the model every run writes: each metric per scenario and worker."""
    return summarize(
        run_id=result.run_id,
        kind=f"{KIND_SCENARIO_PREFIX}{'+'.join(result.scenarios)}",
        profile="scenarios",
        started_at=result.started_at,
        finished_at=result.finished_at or datetime.now(UTC),
        cluster=ClusterInfo(
            name=cluster.name, node_image=cluster.image, kubernetes_version=pins.KUBERNETES_VERSION
        ),
        verdicts=[],
        configs=[],
        attempts_recorded={},
        outcome=outcome_of(result.status),
        reason="; ".join(filter(None, [result.reason, *result.recorder_errors[:3]])),
        observer=result.observer,
        metrics=[
            MetricSummary(
                scenario=scenario,
                worker=worker,
                node=worker_result.node,
                name=metric.name,
                unit=metric.unit,
                expected=metric.expected,
                measured=metric.measured,
                lower=metric.lower,
                upper=metric.upper,
                passed=metric.passed,
                detail=metric.detail,
                message=worker_result.message(metric),
            )
            for scenario, by_worker in result.results.items()
            for worker, worker_result in by_worker.items()
            for metric in worker_result.metrics
        ],
    )


def write_outputs(result: ScenarioRun, cluster: Cluster) -> RunSummary:
    """summary.json and junit.xml, as a check writes them (attempts.jsonl is already there)."""
    summary = summary_of(result, cluster)
    write_summary(result.run_dir, summary)
    write_junit(result.run_dir, summary)
    return summary


def _ns(value: timedelta) -> int:
    return value // timedelta(microseconds=1) * 1_000
