"""The cluster substrate: a kind cluster from the chosen v1.35 node image works.

One control-plane and one worker are created from the built-in spec substrate,
checked (versions, Ready nodes, every kube-system pod Running and Ready, a pod
running on the worker) and deleted.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from kubernetes import client
from tenacity import Retrying, retry_if_result, stop_after_delay, wait_fixed

from crashloop_harness.cluster import lifecycle, nodecontainers
from crashloop_harness.cluster.kube import (
    create_namespace,
    delete_namespace,
    node_statuses,
    unready_system_pods,
)
from crashloop_harness.core import pins, timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.resources import CLUSTERS_DIR
from crashloop_harness.plugin import ClusterOptions, read_cluster_options, session_cluster

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SUBSTRATE_SPEC = CLUSTERS_DIR / "substrate.yaml"


@pytest.fixture(scope="module")
def substrate_options(pytestconfig: pytest.Config) -> ClusterOptions:
    return read_cluster_options(pytestconfig, str(SUBSTRATE_SPEC))


@pytest.fixture(scope="module")
def substrate(
    request: pytest.FixtureRequest, substrate_options: ClusterOptions
) -> Iterator[lifecycle.Cluster]:
    yield from session_cluster(request, substrate_options)


def test_every_node_runs_the_pinned_kubernetes(substrate: lifecycle.Cluster) -> None:
    statuses = node_statuses(substrate.api())
    assert len(statuses) == 2
    assert {status.kubelet_version for status in statuses} == {pins.KUBERNETES_VERSION}
    assert all(status.ready for status in statuses), statuses


def test_every_system_pod_is_running_and_ready(substrate: lifecycle.Cluster) -> None:
    assert unready_system_pods(substrate.api()) == []
    pods = client.CoreV1Api(substrate.api()).list_namespaced_pod("kube-system").items
    names = {pod.metadata.name.rsplit("-", 2)[0] for pod in pods}
    assert "coredns" in names


def test_a_pod_runs_on_the_worker(substrate: lifecycle.Cluster) -> None:
    api = substrate.api()
    core = client.CoreV1Api(api)
    worker = next(s.name for s in node_statuses(api) if "control-plane" not in s.name)
    namespace = create_namespace(api, "substrate")
    try:
        pod = client.V1Pod(
            metadata=client.V1ObjectMeta(name="hello"),
            spec=client.V1PodSpec(
                node_name=worker,
                restart_policy="Never",
                security_context=client.V1PodSecurityContext(
                    run_as_non_root=True,
                    run_as_user=65535,
                    seccomp_profile=client.V1SeccompProfile(type="RuntimeDefault"),
                ),
                containers=[
                    client.V1Container(
                        name="pause",
                        image=f"registry.k8s.io/pause:{pins.PAUSE_IMAGE_TAG}",
                        image_pull_policy="Never",
                        security_context=client.V1SecurityContext(
                            allow_privilege_escalation=False,
                            capabilities=client.V1Capabilities(drop=["ALL"]),
                        ),
                    )
                ],
            ),
        )
        core.create_namespaced_pod(namespace, pod)

        def phase() -> str:
            return str(core.read_namespaced_pod("hello", namespace).status.phase)

        final = Retrying(
            stop=stop_after_delay(timeouts.POD_RUNNING),
            wait=wait_fixed(1),
            retry=retry_if_result(lambda current: current != "Running"),
            retry_error_callback=lambda state: state.outcome.result() if state.outcome else "?",
        )(phase)
        assert final == "Running"
        placed = core.read_namespaced_pod("hello", namespace)
        assert placed.spec.node_name == worker
        assert placed.status.pod_ip, "the pod got no IP: pod networking is broken"
    finally:
        delete_namespace(api, namespace)


def test_a_missing_node_image_is_refused_before_anything_is_created(
    substrate_options: ClusterOptions,
) -> None:
    spec = replace(substrate_options.spec, name="crashloop-missing-image")
    with pytest.raises(
        HarnessError, match=r"'crashloop\.local/node:does-not-exist' does not exist"
    ):
        lifecycle.up(spec, lambda _message: None, image="crashloop.local/node:does-not-exist")
    assert nodecontainers.node_containers(spec.name) == {}
