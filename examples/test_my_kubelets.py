"""Example: is every kubelet on its backoff curve, and does a crashing container restart on it?

Run with ``pytest examples/`` from anywhere crashloop-harness is installed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubernetes import client
from tenacity import Retrying, retry_if_result, stop_after_delay, wait_fixed

from crashloop_harness.cluster.lifecycle import Cluster
from crashloop_harness.model.backoff import curve_for
from crashloop_harness.model.kubeletconfig import KubeletBackoffConfig
from crashloop_harness.model.releases import release_of
from crashloop_harness.pods.skeleton import crashing_pod

# The 2 s worker restarts at 0, 2, 2, 2 s: three restarts well inside this.
THREE_RESTARTS_WITHIN_S = 60


def test_every_worker_runs_its_profile_s_curve(
    crashloop_cluster: Cluster, crashloop_node_configs: dict[str, dict[str, Any]]
) -> None:
    nodes = {
        node.metadata.labels.get("crashloop.harness/worker"): node.metadata.name
        for node in client.CoreV1Api(crashloop_cluster.api()).list_node().items
    }
    for worker in crashloop_cluster.spec.workers:
        live = KubeletBackoffConfig.from_configz(crashloop_node_configs[nodes[worker.name]])
        release = release_of(crashloop_cluster.spec.kubernetes.version)
        assert curve_for(live, release) == worker.curve, worker.name


def test_the_fast_worker_restarts_a_crashing_container_again_and_again(
    crashloop_api: client.ApiClient,
    crashloop_namespace: str,
    crashloop_workload_image: str,
    crashloop_progress: Callable[[str], None],
) -> None:
    core = client.CoreV1Api(crashloop_api)
    pod = crashing_pod("fast", "example", crashloop_workload_image)
    core.create_namespaced_pod(crashloop_namespace, pod)

    def restarts() -> int:
        status = core.read_namespaced_pod(pod["metadata"]["name"], crashloop_namespace).status
        return sum(c.restart_count for c in status.container_statuses or [])

    count = Retrying(
        stop=stop_after_delay(THREE_RESTARTS_WITHIN_S),
        wait=wait_fixed(1),
        retry=retry_if_result(lambda n: n < 3),
        reraise=True,
    )(restarts)
    crashloop_progress(f"the fast worker restarted the container {count} times")
    assert count >= 3
