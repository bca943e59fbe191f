"""Zombies under exec probes, on a real kubelet's PID limit (the failure notes' Redis story).

A cluster of its own (the built-in spec crashloop-pids: the crashloop cluster's
three workers with podPidsLimit 64), so slow. On every worker, the server as
PID 1 that does not reap beside the same server under the workload's reaping
init, both under the exec probe that times out every 2 s and leaves two
children behind: the zombies pile up in the first until it cannot fork, and
the kubelet kills it and restarts it on the worker's curve; the second never
fails.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from crashloop_harness.cluster import lifecycle
from crashloop_harness.core.resources import CLUSTERS_DIR
from crashloop_harness.plugin import ClusterOptions, read_cluster_options, session_cluster
from crashloop_harness.recording.records import read_attempts
from crashloop_harness.runs.scenarios import ScenarioRun, run_scenarios
from crashloop_harness.scenarios import zombie_reaping as zr
from crashloop_harness.scenarios.common import WorkerResult

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PIDS_SPEC = CLUSTERS_DIR / "crashloop-pids.yaml"
WORKERS = ("fast", "reduced", "default")


@pytest.fixture(scope="module")
def pids_cluster(
    request: pytest.FixtureRequest, pytestconfig: pytest.Config
) -> Iterator[lifecycle.Cluster]:
    options: ClusterOptions = read_cluster_options(pytestconfig, str(PIDS_SPEC))
    yield from session_cluster(request, options)


@pytest.fixture(scope="module")
def zombie_run(pids_cluster: lifecycle.Cluster) -> ScenarioRun:
    run = run_scenarios(pids_cluster, lambda m: print(f"[zombies] {m}"), [zr.NAME])
    print(f"[zombies] run directory {run.run_dir}")
    for result in run.results.get(zr.NAME, {}).values():
        for metric in result.metrics:
            print(
                f"[zombies] {result.worker} {metric.name}: measured {metric.measured} "
                f"expected {metric.expected} [{metric.lower}, {metric.upper}] {metric.unit} "
                f"{'ok' if metric.passed else 'FAIL'}: {metric.detail}"
            )
    return run


def _result(run: ScenarioRun, worker: str) -> WorkerResult:
    assert run.status in ("passed", "failed"), f"{run.status}: {run.reason}"
    return run.results[zr.NAME][worker]


def _measured(result: WorkerResult, metric: str) -> float:
    value = result.metric(metric).measured
    assert value is not None, f"{result.worker} {metric}: {result.metric(metric).detail}"
    return value


@pytest.mark.parametrize("worker", WORKERS)
def test_without_an_init_zombies_fill_the_limit_and_the_kubelet_kills_it(
    zombie_run: ScenarioRun, worker: str
) -> None:
    result = _result(zombie_run, worker)
    for metric in ("zombies_per_probe", "fork_failure_s", zr.HEADLINE.metric):
        _measured(result, metric)
        assert result.metric(metric).passed, result.message(result.metric(metric))
    assert result.metric("probe_kills").passed, result.metric("probe_kills").detail
    assert result.metric("kills_after_fork_failure").passed, result.metric(
        "kills_after_fork_failure"
    ).detail


@pytest.mark.parametrize("worker", WORKERS)
def test_under_the_reaping_init_the_same_probes_leave_no_zombies(
    zombie_run: ScenarioRun, worker: str
) -> None:
    result = _result(zombie_run, worker)
    for metric in ("init_observed_s", "init_max_zombies", "init_fork_failures", "init_restarts"):
        assert result.metric(metric).passed, result.message(result.metric(metric))
    assert result.metric("init_children_reaped").passed, result.metric(
        "init_children_reaped"
    ).detail


@pytest.mark.parametrize("worker", WORKERS)
def test_every_restart_after_a_kill_was_seen(zombie_run: ScenarioRun, worker: str) -> None:
    result = _result(zombie_run, worker)
    for n in range(1, zr.KILLS + 1):
        _measured(result, f"after_kill_{n}_s")
    assert result.passed, "\n".join(result.failures)


def test_the_kills_ended_the_non_reaping_pods_only(zombie_run: ScenarioRun) -> None:
    attempts = read_attempts(zombie_run.run_dir / "attempts.jsonl")
    init_pods = {zr.init_pod_name(worker) for worker in WORKERS}
    assert all(r.attempt == 0 for r in attempts if r.pod in init_pods)
    killed = [r for r in attempts if r.pod not in init_pods and r.finished_at_ns is not None]
    assert len(killed) >= len(WORKERS) * zr.KILLS
    assert {r.exit_code for r in killed} <= zr.KILL_EXIT_CODES
