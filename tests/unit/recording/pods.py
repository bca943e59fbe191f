"""Pod statuses as the API gives them, for the watch's and the recorders' tests."""

from __future__ import annotations

from kubernetes import client


def app_status(
    restarts: int,
    state: client.V1ContainerState | None = None,
    last: client.V1ContainerStateTerminated | None = None,
) -> client.V1ContainerStatus:
    """The ``app`` container's status: its restart count, its state, its last state."""
    return client.V1ContainerStatus(
        name="app",
        image="crashloop.local/workload:x",
        image_id="",
        ready=False,
        restart_count=restarts,
        state=state,
        last_state=client.V1ContainerState(terminated=last),
    )


def backing_off(backoff: str, pod: str = "crash-fast") -> client.V1ContainerState:
    """Waiting out a back-off, with the message the kubelet posts for it."""
    return client.V1ContainerState(
        waiting=client.V1ContainerStateWaiting(
            reason="CrashLoopBackOff",
            message=f"back-off {backoff} restarting failed container=app pod={pod}_ns(uid-1)",
        )
    )
