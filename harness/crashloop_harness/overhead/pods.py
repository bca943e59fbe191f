"""One pod of an overhead cell: the bare crash, or the baseline that runs and never crashes."""

from __future__ import annotations

from typing import Any, Final

from crashloop_harness.core.conventions import SAMPLED_LABEL
from crashloop_harness.pods.skeleton import MAIN_CONTAINER, pod_for_worker, workload_container

ROLE: Final = "overhead"
# Pods per cell whose attempts are recorded: enough for the overshoot's spread,
# few enough that watching them costs the machine nothing it measures.
SAMPLED_PODS: Final = 3


def overhead_pod(
    worker: str, run_id: str, image: str, index: int, *, crashing: bool
) -> dict[str, Any]:
    """One pod of a cell: the bare crash, or (baseline) a container that runs and never crashes.

    The baseline writes no termination message: its heartbeat would load the
    node with writes the crashing pods do not make.
    """
    args = (
        ["--mode", "exit", "--exit-code", "1"]
        if crashing
        else ["--mode", "sleep", "--termination-log", ""]
    )
    pod = pod_for_worker(
        name=f"{'crash' if crashing else 'idle'}-{worker}-{index}",
        worker=worker,
        run_id=run_id,
        role=ROLE,
        containers=[workload_container(MAIN_CONTAINER, image, args)],
    )
    if index < SAMPLED_PODS:
        pod["metadata"]["labels"][SAMPLED_LABEL] = "true"
    return pod
