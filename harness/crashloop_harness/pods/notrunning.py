"""Why a pod's container never ran, read from the pod's status: none of the kubelet's back-off.

A pod bound to a node that never runs its container was stopped before any
restart could happen: the scheduler or the node refused it (a taint, no room
for another pod, another OS or architecture), or its image could not be
pulled. None of that is the back-off under test, so a check names the cause
and calls the worker an error, never the kubelet's failure. A pod whose
container is being created, or that has no status yet, gives no cause: it
may still run.
"""

from __future__ import annotations

from typing import Any, Final

# A container waiting for one of these never started for a reason outside the back-off:
# its image (ErrImagePull, ImagePullBackOff, InvalidImageName, ErrImageNeverPull) or its
# configuration (a missing ConfigMap or Secret).
_WAITING_CAUSES: Final = frozenset(
    {
        "ErrImagePull",
        "ImagePullBackOff",
        "InvalidImageName",
        "ErrImageNeverPull",
        "CreateContainerConfigError",
    }
)


# How a cause begins when the node's admission refused the pod: final, it never runs.
REFUSED: Final = "the node refused the pod"


def is_refusal(cause: str) -> bool:
    """Whether a cause (:func:`not_running_cause`) is the node's refusal, which is final."""
    return cause.startswith(REFUSED)


def not_running_cause(pod: Any) -> str | None:
    """Why the pod's containers cannot run, in the words the API gave; None when nothing
    says they cannot (running, ran, or still being set up)."""
    status = pod.status
    if status is None:
        return None
    reason = status.reason or ""
    message = status.message or ""
    if status.phase == "Failed" and not _ran(status):
        # The node's admission refused it (OutOfpods, OutOfcpu, NodeAffinity, a node of
        # another OS or architecture) or it was evicted before it ran.
        return _words(REFUSED, reason or "Failed", message)
    for condition in status.conditions or []:
        if condition.type == "PodScheduled" and condition.status == "False":
            return _words("not scheduled", condition.reason or "", condition.message or "")
    for container in [*(status.init_container_statuses or []), *(status.container_statuses or [])]:
        waiting = container.state.waiting if container.state else None
        if waiting is not None and waiting.reason in _WAITING_CAUSES:
            return _words(f"container {container.name}", waiting.reason, waiting.message or "")
    return None


def _ran(status: Any) -> bool:
    """Whether any container of the pod has started once (a status with a start).

    A container terminated with no start never ran: a pod deleted by a NoExecute taint's
    eviction before its node admitted it ends "ContainerStatusUnknown" with no startedAt
    (2026-12-07, run 20261207T164149Z-check-quick-92c7)."""
    for container in status.container_statuses or []:
        state = container.state
        if state is None:
            continue
        terminated = state.terminated
        if state.running is not None or (terminated is not None and terminated.started_at):
            return True
    return False


def _words(what: str, reason: str, message: str) -> str:
    detail = f": {message.strip()}" if message.strip() else ""
    return f"{what}: {reason}{detail}"
