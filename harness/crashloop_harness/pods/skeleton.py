"""Workload manifests, rendered per worker (pure: plain dicts for the API).

Every pod passes the `restricted` Pod Security level (non-root, no privilege
escalation, all capabilities dropped, RuntimeDefault seccomp), has requests and
limits, never pulls its image, and is pinned to one worker by its label; on an
existing cluster it is bound to a node by name and may pull (:func:`on_existing_node`).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Final

from crashloop_harness.core.conventions import ROLE_LABEL, RUN_LABEL, WORKER_LABEL
from crashloop_harness.substrate.workloadimage import BINARY, RUN_AS_USER

MAIN_CONTAINER: Final = "app"
RECORD_DIR: Final = "/records"

_RESOURCES: Final = {
    "requests": {"cpu": "10m", "memory": "16Mi"},
    "limits": {"cpu": "100m", "memory": "32Mi"},
}
# No CPU limit: a limit is a CFS quota, and a node held to less than it (a kind node
# given `--cpus 0.2`) cannot start a container whose quota exceeds its own (cgroup v1:
# "cpu.cfs_quota_us: invalid argument"); the pace pod never ran there, its node went
# unmeasured, and a sound kubelet was failed (2026-12-07, run
# 20261207T174047Z-check-quick-75f7). Its bursts are a few ms every 5 s.
_PACE_RESOURCES: Final = {
    "requests": {"cpu": "10m", "memory": "16Mi"},
    "limits": {"memory": "32Mi"},
}


def container_security() -> dict[str, Any]:
    return {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": True,
        "runAsUser": RUN_AS_USER,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def workload_container(
    name: str, image: str, args: list[str], resources: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        "name": name,
        "image": image,
        "imagePullPolicy": "Never",
        "args": args,
        "resources": resources or _RESOURCES,
        "securityContext": container_security(),
        # Each attempt's termination message carries the attempts before it,
        # kept in the record dir under the container's name: the API-only
        # recorder finds there the ones the pod status skipped.
        "env": [{"name": "WORKLOAD_HISTORY", "value": name}],
        "volumeMounts": [{"name": "records", "mountPath": RECORD_DIR}],
    }


def pod_for_worker(
    *,
    name: str,
    worker: str,
    run_id: str,
    role: str,
    containers: list[dict[str, Any]],
    init_containers: list[dict[str, Any]] | None = None,
    restart_policy: str = "Always",
) -> dict[str, Any]:
    """A pod on ``worker`` (a node label of the harness's own cluster), labelled
    with the run and its role in it; :func:`on_existing_node` moves it elsewhere."""
    spec: dict[str, Any] = {
        "nodeSelector": {WORKER_LABEL: worker},
        "restartPolicy": restart_policy,
        # The harness deletes its pods; no need to wait for a graceful stop.
        "terminationGracePeriodSeconds": 1,
        "securityContext": {
            "runAsNonRoot": True,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": containers,
        # An emptyDir outlives container restarts: the workload's own timeline.
        "volumes": [{"name": "records", "emptyDir": {"sizeLimit": "1Mi"}}],
    }
    if init_containers:
        spec["initContainers"] = init_containers
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "labels": {RUN_LABEL: run_id, ROLE_LABEL: role, WORKER_LABEL: worker},
        },
        "spec": spec,
    }


def crashing_pod_name(worker: str) -> str:
    """The name of a worker's bare crash-looping pod (its subject in a check)."""
    return f"crash-{worker}"


def crashing_pod(worker: str, run_id: str, image: str, exit_code: int = 1) -> dict[str, Any]:
    """The bare conformance workload: a container that exits at once, forever."""
    args = ["--mode", "exit", "--exit-code", str(exit_code)]
    return conformance_pod(crashing_pod_name(worker), worker, run_id, image, args)


def on_existing_node(manifest: dict[str, Any], node: str) -> dict[str, Any]:
    """A Pod or StatefulSet ``manifest`` for a cluster the harness did not make: its
    pods bound to ``node`` by name.

    Its nodes carry no worker label, and the workload image comes from a
    registry the user named, so it may be pulled (once, before the first
    attempt: a pull is never part of a restart the kubelet decides).
    """
    if manifest.get("kind") == "StatefulSet":
        spec = manifest["spec"]
        return {**manifest, "spec": {**spec, "template": on_existing_node(spec["template"], node)}}
    spec = {key: value for key, value in manifest["spec"].items() if key != "nodeSelector"}
    spec["nodeName"] = node
    for kind in ("initContainers", "containers"):
        if kind in spec:
            spec[kind] = [{**c, "imagePullPolicy": "IfNotPresent"} for c in spec[kind]]
    return {**manifest, "spec": spec}


def conformance_pod(
    name: str, worker: str, run_id: str, image: str, args: list[str]
) -> dict[str, Any]:
    """A conformance pod: the workload with ``args`` (plus its record dir) as its one container."""
    return pod_for_worker(
        name=name,
        worker=worker,
        run_id=run_id,
        role="conformance",
        containers=[workload_container(MAIN_CONTAINER, image, [*args, "--record-dir", RECORD_DIR])],
    )


def probe_pod(worker: str, index: int, run_id: str, image: str) -> dict[str, Any]:
    """A restart-cost probe: its container fails once, then runs until the run ends.

    Its one restart waits no back-off (the kubelet creates the back-off entry
    on the first restart), so its delay is the node's cost of a restart alone:
    crashloop_harness.verdict.nodecost measures the node with it, through the run.
    """
    args = workload_args("transient", "--fail-times", "1")
    return pod_for_worker(
        name=f"probe-{worker}-{index}",
        worker=worker,
        run_id=run_id,
        role="probe",
        containers=[workload_container(MAIN_CONTAINER, image, args)],
    )


def pace_pod(worker: str, name: str, run_id: str, image: str, every: timedelta) -> dict[str, Any]:
    """A pace pod: the workload's timed burst of CPU every ``every`` on ``worker``'s node, one
    line each on its log, until the run ends (crashloop_harness.recording.podpace).

    It has no CPU limit (see _PACE_RESOURCES): no quota of its own slows a burst, so what
    slows it is the node's CPU.
    """
    args = workload_args("pace", "--every", go_duration(every))
    return pod_for_worker(
        name=name,
        worker=worker,
        run_id=run_id,
        role="pace",
        containers=[workload_container(MAIN_CONTAINER, image, args, _PACE_RESOURCES)],
    )


def workload_args(mode: str, *extra: str) -> list[str]:
    """The workload binary's arguments for ``mode``, writing its logs to the records dir."""
    return ["--mode", mode, *extra, "--record-dir", RECORD_DIR]


def go_duration(value: timedelta) -> str:
    """Whole milliseconds as Go duration text (e.g. "500ms"); the workload parses it."""
    return f"{value // timedelta(milliseconds=1)}ms"


def ready_probe(period_s: int) -> dict[str, Any]:
    """An exec readiness probe of the workload binary: Ready once its marker exists.

    The image is FROM scratch, with no shell, and an exec probe needs no port
    or privilege; its first success logs its own time (ready-probe.log).
    """
    return {
        "exec": {"command": [BINARY, "--mode", "ready-check", "--record-dir", RECORD_DIR]},
        "periodSeconds": period_s,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": 1,
    }


def pod_names(manifest: dict[str, Any]) -> list[str]:
    """The pods a Pod or StatefulSet manifest makes, by name (a StatefulSet's ordinals)."""
    name = manifest["metadata"]["name"]
    if manifest["kind"] == "StatefulSet":
        return [f"{name}-{ordinal}" for ordinal in range(manifest["spec"]["replicas"])]
    return [name]
