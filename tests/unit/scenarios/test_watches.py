"""The scenario protocol: each scenario's watch driven by a fake run, no cluster.

A watch decides what its scenario still waits for, what it reads from the pods
before they go and what it measures; the run only calls it. The fake run
below is the whole of what a scenario may ask (crashloop_harness.scenarios.common.RunView).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

import pytest

from crashloop_harness.cluster.kubeletstate import KubeletProcess, KubeletRestart
from crashloop_harness.core.conventions import ROLE_LABEL
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.model.durations import NS_PER_S, to_ns
from crashloop_harness.pods.skeleton import MAIN_CONTAINER
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.scenarios import KUBELET_RESTART_SIDECAR, REGISTRY, SCENARIOS
from crashloop_harness.scenarios import critical_sidecar as cs
from crashloop_harness.scenarios import fast_restart as fr
from crashloop_harness.scenarios import kubelet_restart_sidecar as kr
from crashloop_harness.scenarios import task_isolation as ti
from crashloop_harness.scenarios.common import LivePod, RunView, Scenario, Subject, Watch
from crashloop_harness.scenarios.observing import READY_PROBE_LOG
from tests.unit.factories import attempts

NODES = {"fast": "crashloop-worker", "reduced": "crashloop-worker2"}
CURVE = BackoffCurve(initial=timedelta(seconds=1), maximum=timedelta(seconds=2))


def _attempt(pod: str, attempt: int, started_ns: int, run_s: float | None = 1.0) -> AttemptRecord:
    return AttemptRecord(
        run_id="run-1",
        worker=pod.rsplit("-", 1)[-1],
        node="n",
        namespace="ns",
        pod=pod,
        pod_uid=f"uid-{pod}",
        container=MAIN_CONTAINER,
        attempt=attempt,
        container_id=f"{pod}-{attempt}",
        started_at_ns=started_ns,
        finished_at_ns=None if run_s is None else started_ns + int(run_s * NS_PER_S),
        exit_code=None if run_s is None else 0,
    )


@dataclass
class FakeRun:
    """A run as a scenario sees it: attempts, pods and their files, in memory."""

    run_id: str = "run-1"
    image: str = "crashloop.local/workload:test"
    nodes: Mapping[str, str] = field(default_factory=lambda: dict(NODES))
    stopping: threading.Event = field(default_factory=threading.Event)
    kubelet_versions: dict[str, str] = field(default_factory=dict)
    recorded: list[AttemptRecord] = field(default_factory=list)
    live: dict[str, list[LivePod]] = field(default_factory=dict)  # role -> pods
    files: dict[tuple[str, str], str] = field(default_factory=dict)  # (pod uid, file) -> text
    created: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    refuse_creates: bool = False
    kubelet_restarts: list[str] = field(default_factory=list)  # workers, in order
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def attempts(self) -> list[AttemptRecord]:
        with self._lock:
            return list(self.recorded)

    def wait_for_change(self, timeout: float) -> None:
        self.stopping.wait(min(timeout, 0.01))

    def pods(self, role: str) -> list[LivePod]:
        return list(self.live.get(role, []))

    def read_pod_file(self, pod: LivePod, file: str) -> str | None:
        text = self.files.get((pod.uid, file))
        if text is None:
            self.problem(f"{file} of {pod.name}: no such file")
        return text

    def create_object(self, pod: dict[str, Any]) -> None:
        """A created pod runs one session at once, as a fast kubelet would."""
        if self.refuse_creates:
            raise HarnessError("creating pod: 403 Forbidden", "grant create on pods")
        name = pod["metadata"]["name"]
        assert pod["metadata"]["labels"][ROLE_LABEL] == ti.FRESH_ROLE
        with self._lock:
            self.created.append(name)
            self.recorded.append(_attempt(name, 0, time.time_ns(), run_s=0.001))

    def delete_pod(self, name: str) -> int:
        self.deleted.append(name)
        return time.time_ns()

    def delete_statefulset(self, name: str) -> None:
        self.deleted.append(name)

    def restart_kubelet(self, worker: str) -> KubeletRestart:
        """Restarted at once, and answering at once."""
        self.kubelet_restarts.append(worker)
        now = time.time_ns()
        old, new = KubeletProcess(100, 1), KubeletProcess(200, 2)
        return KubeletRestart(self.nodes[worker], old, new, now, now, now)

    def problem(self, text: str) -> None:
        self.problems.append(text)


def _pod(name: str, worker: str, *, ready: bool = False, app_restarts: int = 0) -> LivePod:
    return LivePod(
        name=name,
        uid=f"uid-{name}",
        worker=worker,
        ready=ready,
        restart_counts={MAIN_CONTAINER: app_restarts},
    )


def _log(*events: tuple[str, int]) -> str:
    return "".join(json.dumps({"event": e, "unix_ns": t}) + "\n" for e, t in events)


def _long_ago(window: timedelta) -> int:
    """A start so long ago that the window (and its settling time) has ended."""
    return time.time_ns() - to_ns(window) - 10 * NS_PER_S


def test_every_registered_scenario_keeps_the_protocol() -> None:
    run: RunView = FakeRun()
    for name in SCENARIOS:
        scenario: Scenario = REGISTRY[name]
        assert scenario.name == name
        watch: Watch = scenario.watch(run)
        assert watch.pending(), f"{name} waits for nothing before anything ran"
        for worker in NODES:
            manifests = scenario.manifests(worker, "run-1", "img")
            assert manifests
            assert {m["metadata"]["labels"][ROLE_LABEL] for m in manifests} == {name}


def test_fast_restart_waits_until_every_worker_is_ready_and_reads_the_first_probe() -> None:
    run = FakeRun()
    watch = fr.FAST_RESTART.watch(run)
    assert watch.pending() == [f"{fr.NAME} Ready on fast", f"{fr.NAME} Ready on reduced"]

    # Ready on one worker: its probe log's first line is the Ready time.
    fast = _pod(fr.pod_name("fast"), "fast", ready=True)
    run.live[fr.NAME] = [fast, _pod(fr.pod_name("reduced"), "reduced")]
    run.files[(fast.uid, READY_PROBE_LOG)] = _log(("ready", 5_000), ("ready", 6_000))
    assert watch.pending() == [f"{fr.NAME} Ready on reduced"]
    assert watch.ready_ns == {"fast": 5_000}


def test_fast_restart_collects_a_probe_that_came_after_the_last_look() -> None:
    run = FakeRun()
    watch = fr.FAST_RESTART.watch(run)
    late = _pod(fr.pod_name("reduced"), "reduced", ready=False)
    run.live[fr.NAME] = [late]
    run.files[(late.uid, READY_PROBE_LOG)] = _log(("ready", 7_000))
    assert "reduced" not in watch.ready_ns
    watch.collect()
    assert watch.ready_ns == {"reduced": 7_000}
    result = watch.measure(Subject("reduced", "n", CURVE), [])
    assert result.metric("time_to_ready_s").detail  # unmeasured: no attempts, says why
    assert not result.passed


def test_critical_sidecar_waits_out_each_workers_window_from_its_first_start() -> None:
    run = FakeRun()
    watch = cs.CRITICAL_SIDECAR.watch(run)
    assert watch.pending() == [f"{cs.NAME} window on fast", f"{cs.NAME} window on reduced"]
    run.recorded = [
        _attempt(cs.pod_name("fast"), 0, _long_ago(cs.WINDOW), run_s=None),
        _attempt(cs.pod_name("reduced"), 0, time.time_ns(), run_s=None),
    ]
    assert watch.pending() == [f"{cs.NAME} window on reduced"]


def test_critical_sidecar_collects_the_apps_log_and_restart_count() -> None:
    run = FakeRun()
    watch = cs.CRITICAL_SIDECAR.watch(run)
    pod = _pod(cs.pod_name("fast"), "fast", app_restarts=2)
    run.live[cs.NAME] = [pod, _pod(cs.pod_name("reduced"), "reduced")]
    run.files[(pod.uid, cs.CLIENT_LOG)] = _log(("connected", 1_000))
    watch.collect()
    assert watch.client_logs == {"fast": _log(("connected", 1_000)), "reduced": ""}
    assert watch.app_restarts == {"fast": 2, "reduced": 0}
    assert run.problems == [f"{cs.CLIENT_LOG} of {cs.pod_name('reduced')}: no such file"]

    result = watch.measure(Subject("fast", "n", CURVE), [])
    assert not result.passed
    assert result.metric("app_restart_count").measured == 2


def test_critical_sidecar_reports_a_torn_client_log_and_measures_without_it() -> None:
    run = FakeRun()
    watch = cs.CRITICAL_SIDECAR.watch(run)
    pod = _pod(cs.pod_name("fast"), "fast")
    run.live[cs.NAME] = [pod]
    run.files[(pod.uid, cs.CLIENT_LOG)] = "not json\n" + _log(("connected", 1))
    watch.collect()
    result = watch.measure(Subject("fast", "n", CURVE), [])
    assert any("client.log: line 1" in p for p in run.problems), run.problems
    assert not result.passed


def test_task_isolation_runs_its_fresh_pod_baseline_only_after_every_window() -> None:
    run = FakeRun()
    watch = ti.TASK_ISOLATION.watch(run)
    run.recorded = [
        _attempt(ti.pod_name("fast"), 0, _long_ago(ti.WINDOW)),
        _attempt(ti.pod_name("reduced"), 0, time.time_ns()),
    ]
    assert watch.pending() == [f"{ti.NAME} window on reduced"]
    assert run.created == [], "the baseline started while a window was still open"

    run.recorded[1] = replace(run.recorded[1], started_at_ns=_long_ago(ti.WINDOW))
    deadline = time.monotonic() + 10
    while watch.pending() and time.monotonic() < deadline:
        run.stopping.wait(0.01)
    assert watch.pending() == []
    watch.stop()
    per_worker = ti.FRESH_PODS
    assert len(run.created) == per_worker * len(NODES)
    assert len(run.deleted) == (per_worker - 1) * len(NODES)
    assert {w: len(v) for w, v in watch.fresh_ns.items()} == dict.fromkeys(NODES, per_worker - 1)


def test_task_isolation_baseline_ends_on_a_refused_create_without_ending_the_run() -> None:
    run = FakeRun(refuse_creates=True)
    watch = ti.TASK_ISOLATION.watch(run)
    run.recorded = [_attempt(ti.pod_name(w), 0, _long_ago(ti.WINDOW)) for w in NODES]
    deadline = time.monotonic() + 10
    while watch.pending() and time.monotonic() < deadline:
        run.stopping.wait(0.01)
    watch.stop()
    assert watch.fresh_ns == {"fast": [], "reduced": []}
    assert sorted(run.problems) == [
        f"fresh pods on {w}: creating pod: 403 Forbidden" for w in sorted(NODES)
    ]


@pytest.mark.parametrize(
    ("name", "pod", "container"),
    [
        (ti.NAME, ti.pod_name("fast"), MAIN_CONTAINER),
        (fr.NAME, fr.pod_name("fast"), MAIN_CONTAINER),
        (cs.NAME, cs.pod_name("fast"), cs.PROXY_CONTAINER),
    ],
)
def test_each_headline_names_a_metric_its_scenario_measures(
    name: str, pod: str, container: str
) -> None:
    restarts = [
        replace(record, pod=pod, container=container) for record in attempts([1.0, 2.0, 2.0, 2.0])
    ]
    scenario = REGISTRY[name]
    result = scenario.watch(FakeRun()).measure(Subject("fast", "n", CURVE), restarts)
    assert scenario.headline.metric in {m.name for m in result.metrics}


def test_without_a_recorded_start_the_window_runs_from_the_api_s_start() -> None:
    # From the API alone a running app has no record until it ends: its window
    # is counted from the start its pod status gives.
    run = FakeRun()
    watch = cs.CRITICAL_SIDECAR.watch(run)
    run.live[cs.NAME] = [
        LivePod(
            name=cs.pod_name("fast"),
            uid="u1",
            worker="fast",
            ready=True,
            api_started_ns={MAIN_CONTAINER: _long_ago(cs.WINDOW)},
        ),
        LivePod(
            name=cs.pod_name("reduced"),
            uid="u2",
            worker="reduced",
            ready=True,
            api_started_ns={MAIN_CONTAINER: time.time_ns()},
        ),
    ]
    assert watch.pending() == [f"{cs.NAME} window on reduced"]


def test_a_kubelet_is_restarted_in_the_app_s_fresh_attempt_then_its_restarts_awaited() -> None:
    now = time.time_ns()
    fast, reduced = kr.pod_name("fast"), kr.pod_name("reduced")
    run = FakeRun()
    run.recorded = [
        _attempt(fast, 0, now - 90 * NS_PER_S, run_s=30.0),
        _attempt(fast, 1, now - 60 * NS_PER_S, run_s=30.0),
        _attempt(fast, 2, now - NS_PER_S, run_s=None),  # fresh: due
        _attempt(reduced, 0, now - 90 * NS_PER_S, run_s=30.0),
        _attempt(reduced, 1, now - 60 * NS_PER_S, run_s=30.0),
        _attempt(reduced, 2, now - 25 * NS_PER_S, run_s=None),  # too late in its run
    ]
    watch = REGISTRY[KUBELET_RESTART_SIDECAR].watch(run)
    assert watch.pending() == [
        f"{KUBELET_RESTART_SIDECAR} {kr.AFTER} app restarts after fast's kubelet restart",
        f"{KUBELET_RESTART_SIDECAR} app restart {kr.BEFORE} on reduced, then its kubelet's",
    ]
    assert run.kubelet_restarts == ["fast"]
    watch.pending()
    assert run.kubelet_restarts == ["fast"]  # once per worker
    later = time.time_ns()
    run.recorded += [
        _attempt(fast, 3, later, run_s=30.0),
        _attempt(fast, 4, later + NS_PER_S, run_s=None),
        _attempt(reduced, 3, later, run_s=None),  # a fresh attempt: due now
    ]
    assert watch.pending() == [
        f"{KUBELET_RESTART_SIDECAR} {kr.AFTER} app restarts after reduced's kubelet restart"
    ]
    assert run.kubelet_restarts == ["fast", "reduced"]
