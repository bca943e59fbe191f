"""The crashloop cluster: every worker's kubelet really runs its profile."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from crashloop_harness.cluster import lifecycle, liveconfig, nodecontainers
from crashloop_harness.cluster.kube import api_client, node_statuses
from crashloop_harness.cluster.profiles import load_cluster_spec
from crashloop_harness.core import timeouts
from crashloop_harness.core.conventions import WORKER_LABEL
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.model.backoff import curve_for
from crashloop_harness.model.kubeletconfig import KubeletBackoffConfig

pytestmark = pytest.mark.e2e

# What each profile must show in the live /configz, independent of the model.
EXPECTED_LIVE = {
    "fast": ("2s", None),
    "reduced": ("1m0s", True),
    "default": ("5m0s", None),
}


def test_every_worker_runs_its_profile(
    crashloop_cluster: lifecycle.Cluster, crashloop_node_configs: dict[str, dict[str, Any]]
) -> None:
    rows = liveconfig.live_config_rows(crashloop_cluster.api(), crashloop_cluster.spec)
    assert [row.mismatches for row in rows if not row.matches] == []
    workers = {
        status.labels[WORKER_LABEL]: status.name
        for status in node_statuses(crashloop_cluster.api())
        if WORKER_LABEL in status.labels
    }
    assert sorted(workers) == sorted(w.name for w in crashloop_cluster.spec.workers)
    for worker in crashloop_cluster.spec.workers:
        live = crashloop_node_configs[workers[worker.name]]["kubeletconfig"]
        period, reduced_gate = EXPECTED_LIVE[worker.profile.name]
        assert live["crashLoopBackOff"]["maxContainerRestartPeriod"] == period, worker.name
        assert live.get("featureGates", {}).get("ReduceDefaultCrashLoopBackOffDecay") == (
            reduced_gate
        ), worker.name
        assert curve_for(
            KubeletBackoffConfig.from_configz(crashloop_node_configs[workers[worker.name]])
        ) == (worker.curve)


def test_a_changed_profile_is_never_silently_reused(
    crashloop_cluster: lifecycle.Cluster, tmp_path: Path
) -> None:
    changed = tmp_path / "clusters"
    shutil.copytree(crashloop_cluster.spec.path.parent, changed)
    fast = changed / "profiles" / "fast.yaml"
    fast.write_text(fast.read_text().replace("2s", "5s"))
    spec = load_cluster_spec(changed / crashloop_cluster.spec.path.name)
    spec = type(spec)(name=crashloop_cluster.name, path=spec.path, workers=spec.workers)

    with pytest.raises(HarnessError, match="different config") as raised:
        lifecycle.up(
            spec,
            lambda _message: None,
            image=crashloop_cluster.image,
            kind_bin=crashloop_cluster.kind_bin,
            kubeconfig=crashloop_cluster.kubeconfig,
        )
    assert "--recreate" in raised.value.fix
    # The refused cluster is untouched.
    assert nodecontainers.node_containers(crashloop_cluster.name)
    assert all(s.ready for s in node_statuses(crashloop_cluster.api()))


@pytest.mark.slow
def test_the_checkout_s_plain_cluster_files_make_the_same_kubelets(
    crashloop_cluster: lifecycle.Cluster, tmp_path: Path
) -> None:
    """clusters/crashloop/, taken by kind as it is from the checkout's root, no harness code."""
    root = Path(__file__).resolve().parents[2]
    name = "crashloop-plain"
    kubeconfig = tmp_path / "kubeconfig"
    kind = [str(crashloop_cluster.kind_bin)]
    try:
        subprocess.run(
            [
                *kind,
                "create",
                "cluster",
                "--config",
                "clusters/crashloop/kind-config.yaml",
                "--image",
                crashloop_cluster.image,
                "--name",
                name,
                "--kubeconfig",
                str(kubeconfig),
                "--wait",
                f"{timeouts.NODES_READY:.0f}s",
            ],
            cwd=root,
            check=True,
            timeout=timeouts.CLUSTER_CREATE,
        )
        api = api_client(kubeconfig)
        rows = liveconfig.live_config_rows(api, crashloop_cluster.spec)
        workers = {row.worker: row for row in rows if row.worker is not None}
        assert sorted(workers) == sorted(w.name for w in crashloop_cluster.spec.workers)
        assert [row.mismatches for row in rows if not row.matches] == []
        for worker in crashloop_cluster.spec.workers:
            assert workers[worker.name].curve == worker.curve, worker.name
    finally:
        subprocess.run([*kind, "delete", "cluster", "--name", name], check=False)
