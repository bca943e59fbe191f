"""Why a pod's container never ran, read from real pod statuses (the client's own models)."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from crashloop_harness.pods.notrunning import not_running_cause


def _pod(**status: Any) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name="crashloop-fast", uid="u1"),
        status=client.V1PodStatus(**status),
    )


def _main_in(state: client.V1ContainerState) -> list[client.V1ContainerStatus]:
    """The pod's one container's status, in ``state``."""
    return [
        client.V1ContainerStatus(
            name="main", image="img", image_id="", ready=False, restart_count=0, state=state
        )
    ]


def _waiting(reason: str, message: str = "") -> list[client.V1ContainerStatus]:
    waiting = client.V1ContainerStateWaiting(reason=reason, message=message)
    return _main_in(client.V1ContainerState(waiting=waiting))


@pytest.mark.parametrize(
    ("pod", "cause"),
    [
        (
            _pod(
                phase="Pending",
                conditions=[
                    client.V1PodCondition(
                        type="PodScheduled",
                        status="False",
                        reason="Unschedulable",
                        message="0/4 nodes are available: 1 node(s) had untolerated taint",
                    )
                ],
            ),
            "not scheduled: Unschedulable: 0/4 nodes are available: 1 node(s) had untolerated "
            "taint",
        ),
        (
            _pod(phase="Failed", reason="OutOfpods", message="Node didn't have enough resource"),
            "the node refused the pod: OutOfpods: Node didn't have enough resource",
        ),
        (
            _pod(phase="Pending", container_statuses=_waiting("ImagePullBackOff", "Back-off")),
            "container main: ImagePullBackOff: Back-off",
        ),
        (
            _pod(phase="Failed", reason="NodeAffinity", message="node(s) didn't match"),
            "the node refused the pod: NodeAffinity: node(s) didn't match",
        ),
    ],
)
def test_a_pod_stopped_before_its_container_ran_names_why(pod: client.V1Pod, cause: str) -> None:
    assert not_running_cause(pod) == cause


@pytest.mark.parametrize(
    "pod",
    [
        _pod(phase="Pending"),
        _pod(phase="Pending", container_statuses=_waiting("ContainerCreating")),
        # The kubelet's own back-off is what the check judges, never a cause.
        _pod(phase="Running", container_statuses=_waiting("CrashLoopBackOff", "back-off 10s")),
        client.V1Pod(metadata=client.V1ObjectMeta(name="p", uid="u")),
    ],
)
def test_a_pod_that_may_still_run_gives_no_cause(pod: client.V1Pod) -> None:
    assert not_running_cause(pod) is None


def _terminated(started: bool) -> list[client.V1ContainerStatus]:
    ended = client.V1ContainerStateTerminated(
        exit_code=137,
        reason="ContainerStatusUnknown",
        started_at="2026-12-07T16:41:50Z" if started else None,
    )
    return _main_in(client.V1ContainerState(terminated=ended))


def test_a_container_terminated_with_no_start_never_ran() -> None:
    """A NoExecute taint's eviction deleted the pod before its node admitted it: Failed,
    its container "terminated" with no start (a live drill's status, 2026-12-07)."""
    evicted = _pod(phase="Failed", container_statuses=_terminated(started=False))
    assert not_running_cause(evicted) == "the node refused the pod: Failed"
    assert not_running_cause(_pod(phase="Failed", container_statuses=_terminated(True))) is None
