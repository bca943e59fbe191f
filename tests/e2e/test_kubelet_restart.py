"""A kubelet restarted under an app crash-looping beside a sidecar, on a real cluster (slow).

kubernetes/kubernetes#136969: after a kubelet restart, an app beside a
sidecar with a startupProbe was never restarted again (fixed by #137146, in
v1.35.8). The scenario restarts every worker's kubelet mid-run: on v1.35.8
every worker's app goes on restarting, the first restart after the return at
once (a fresh back-off); with the fix reverted (the kept mutant
``sidecar-fix-reverted``) in one worker, that worker's app stops and the
scenario fails there, the other workers as controls.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from crashloop_harness.cluster.kube import worker_nodes
from crashloop_harness.cluster.kubeletput import put_image_kubelet_back, put_kubelet
from crashloop_harness.cluster.kubeletswap import read_node_kubelet
from crashloop_harness.cluster.lifecycle import Cluster
from crashloop_harness.runs.scenarios import ScenarioRun, run_scenarios
from crashloop_harness.scenarios import KUBELET_RESTART_SIDECAR
from crashloop_harness.scenarios import kubelet_restart_sidecar as kr
from crashloop_harness.substrate.kubeletbuild import kubelet_from_patch
from crashloop_harness.substrate.mutantset import mutant_set

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.conformance,
    pytest.mark.crashloop_disruptive,
    pytest.mark.slow,
]

WORKERS = ("fast", "reduced", "default")
MUTANT = "sidecar-fix-reverted"


def _say(message: str) -> None:
    print(f"[kubelet-restart] {message}")


def _run(cluster: Cluster) -> ScenarioRun:
    run = run_scenarios(cluster, _say, [KUBELET_RESTART_SIDECAR])
    for worker, result in run.results[KUBELET_RESTART_SIDECAR].items():
        for note in result.notes:
            _say(f"{worker}: {note}")
        for metric in result.metrics:
            _say(
                f"{worker} {metric.name}: measured {metric.measured} expected {metric.expected} "
                f"[{metric.lower}, {metric.upper}] {'ok' if metric.passed else 'FAIL'}"
            )
    _say(f"run {run.run_dir.name}: {run.status} {run.reason}")
    return run


def test_the_app_goes_on_restarting_after_every_worker_s_kubelet_restart(
    crashloop_cluster: Cluster,
) -> None:
    run = _run(crashloop_cluster)
    assert run.status == "passed", f"{run.status}: {run.reason}; {run.failures}"
    by_worker = run.results[KUBELET_RESTART_SIDECAR]
    assert set(by_worker) == set(WORKERS)
    for worker, result in by_worker.items():
        assert result.metric("kubelet_restarted").measured == 1, worker
        after = result.metric(kr.HEADLINE.metric).measured
        assert after is not None, worker
        assert after >= kr.AFTER, (worker, after)
        first = result.metric("after_return_restart_1_s")
        assert first.expected == 0, (worker, first)
        assert first.passed, (worker, first)
    # The run restarted every kubelet itself: that is no error of the run's ending.
    assert len(run.kubelets_restarted_by_run) == len(WORKERS)


@pytest.fixture
def reverted_fix_node(crashloop_cluster: Cluster) -> Iterator[str]:
    """The mutant's target worker running the kubelet with #137146 reverted; the image's
    kubelet back after the test, whatever happened."""
    pin = crashloop_cluster.spec.kubernetes
    (mutant,) = [m for m in mutant_set(pin) if m.name == MUTANT]
    node = worker_nodes(crashloop_cluster.api())[mutant.target]
    assert read_node_kubelet(node).swapped is None, f"{node} runs another kubelet already"
    kubelet = kubelet_from_patch(mutant.patch, pin)
    try:
        running = put_kubelet(crashloop_cluster, node, kubelet, _say)
        assert running.sha256 == kubelet.sha256
        yield mutant.target
    finally:
        back = put_image_kubelet_back(crashloop_cluster, node, _say)
        assert back.swapped is None


def test_with_the_fix_reverted_the_app_is_never_restarted_after_the_kubelet_restart(
    crashloop_cluster: Cluster, reverted_fix_node: str
) -> None:
    target = reverted_fix_node
    run = _run(crashloop_cluster)
    assert run.status == "failed", f"{run.status}: {run.reason}"
    by_worker = run.results[KUBELET_RESTART_SIDECAR]
    mutant = by_worker[target]
    assert not mutant.passed
    # Its kubelet was restarted under a running sidecar, the app had restarted before ...
    assert mutant.metric("kubelet_restarted").passed
    assert mutant.metric("sidecar_restarts").passed
    assert mutant.metric("app_restarts_before_kubelet_restart").passed
    # ... and after it, the app's exit is never followed by a restart.
    assert mutant.metric(kr.HEADLINE.metric).measured == 0, mutant.failures
    assert mutant.metric("after_return_restart_1_s").measured is None
    for worker in WORKERS:
        if worker != target:
            assert by_worker[worker].passed, by_worker[worker].failures
