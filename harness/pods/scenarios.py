"""Pod manifests of the three scenarios, one pod per worker (pure: plain dicts).

Everything goes through :mod:`harness.pods.skeleton`, so every pod keeps the
`restricted` Pod Security level, requests and limits, ``imagePullPolicy:
Never``, the records emptyDir and the worker's nodeSelector. The workload's
knobs are constants here because the metrics' expectations depend on them.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Final

from harness.pods.skeleton import MAIN_CONTAINER, RECORD_DIR, pod_for_worker, workload_container
from harness.scenarios import CRITICAL_SIDECAR, FAST_RESTART, TASK_ISOLATION
from harness.substrate.workloadimage import BINARY

# Task isolation: one session is a few seconds of work, then exit 0.
SESSION_RUN_FOR: Final = timedelta(seconds=3)
FRESH_ROLE: Final = f"{TASK_ISOLATION}-fresh"

# Fast restart: fail this many times, each after a short piece of work, then recover.
FAIL_TIMES: Final = 3
TRANSIENT_RUN_FOR: Final = timedelta(seconds=1)
TRANSIENT_EXIT_CODE: Final = 1
# A readiness probe every second (the minimum): the probe's period is the
# resolution of "Ready", and the metric's slack allows for it.
READY_PROBE_PERIOD_S: Final = 1

# Critical sidecar: a proxy on localhost, OOMKilled by its own memory limit
# after some seconds of service, and an app asking it ten times a second.
PROXY_CONTAINER: Final = "proxy"
PROXY_ADDRESS: Final = "127.0.0.1:8080"
PROXY_MEMORY_LIMIT: Final = "32Mi"
# 2 MiB every 0.5s: the Go runtime plus about 14 chunks reach 32Mi in ~7s.
PROXY_GROW_MB: Final = 2
PROXY_GROW_EVERY: Final = timedelta(milliseconds=500)
CLIENT_INTERVAL: Final = timedelta(milliseconds=100)
CLIENT_LOG: Final = "client.log"
READY_PROBE_LOG: Final = "ready-probe.log"

_PROXY_RESOURCES: Final = {
    "requests": {"cpu": "10m", "memory": "16Mi"},
    "limits": {"cpu": "100m", "memory": PROXY_MEMORY_LIMIT},
}


# Pod names per scenario: the runner finds a worker's records by them.
_POD_PREFIX: Final = {
    TASK_ISOLATION: "session",
    FAST_RESTART: "transient",
    CRITICAL_SIDECAR: "sidecar",
}


def pod_name(scenario: str, worker: str) -> str:
    """The name of ``scenario``'s pod on ``worker``."""
    if scenario not in _POD_PREFIX:
        raise ValueError(
            f"unknown scenario {scenario!r}: want {TASK_ISOLATION}, {FAST_RESTART} "
            f"or {CRITICAL_SIDECAR}"
        )
    return f"{_POD_PREFIX[scenario]}-{worker}"


def _go_duration(value: timedelta) -> str:
    """Whole milliseconds as Go duration text (e.g. "500ms"); the workload parses it."""
    return f"{value // timedelta(milliseconds=1)}ms"


def session_pod(worker: str, run_id: str, image: str) -> dict[str, Any]:
    """Task isolation in place: a session, exit 0, reset by ``restartPolicy: Always``."""
    args = _args("session", "--run-for", _go_duration(SESSION_RUN_FOR), "--exit-code", "0")
    return pod_for_worker(
        name=pod_name(TASK_ISOLATION, worker),
        worker=worker,
        run_id=run_id,
        role=TASK_ISOLATION,
        containers=[workload_container(MAIN_CONTAINER, image, args)],
    )


def fresh_session_pod(worker: str, run_id: str, image: str, index: int) -> dict[str, Any]:
    """The baseline: the same session in a pod of its own, never restarted.

    A new pod (new UID) is what a pod-per-task controller creates; comparing
    its start with an in-place reset shows what rescheduling costs.
    """
    args = _args("session", "--run-for", _go_duration(SESSION_RUN_FOR), "--exit-code", "0")
    return pod_for_worker(
        name=f"fresh-{worker}-{index}",
        worker=worker,
        run_id=run_id,
        role=FRESH_ROLE,
        containers=[workload_container(MAIN_CONTAINER, image, args)],
        restart_policy="Never",
    )


def transient_pod(worker: str, run_id: str, image: str) -> dict[str, Any]:
    """Fast restart: FAIL_TIMES transient failures, then healthy and Ready."""
    args = _args(
        "transient",
        "--fail-times",
        str(FAIL_TIMES),
        "--run-for",
        _go_duration(TRANSIENT_RUN_FOR),
        "--exit-code",
        str(TRANSIENT_EXIT_CODE),
    )
    container = workload_container(MAIN_CONTAINER, image, args)
    # An exec probe of the workload binary itself: the image is FROM scratch,
    # with no shell, and an exec probe needs no port or privilege.
    container["readinessProbe"] = {
        "exec": {"command": [BINARY, "--mode", "ready-check", "--record-dir", RECORD_DIR]},
        "periodSeconds": READY_PROBE_PERIOD_S,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": 1,
    }
    return pod_for_worker(
        name=pod_name(FAST_RESTART, worker),
        worker=worker,
        run_id=run_id,
        role=FAST_RESTART,
        containers=[container],
    )


def sidecar_pod(worker: str, run_id: str, image: str) -> dict[str, Any]:
    """Critical sidecar: a leaking proxy (restartable init container) and its client app."""
    proxy = workload_container(
        PROXY_CONTAINER,
        image,
        _args(
            "proxy",
            "--listen",
            PROXY_ADDRESS,
            "--grow-mb",
            str(PROXY_GROW_MB),
            "--grow-every",
            _go_duration(PROXY_GROW_EVERY),
        ),
        resources=_PROXY_RESOURCES,
    )
    # restartPolicy on an init container makes it a sidecar: it runs beside
    # the app for the pod's life and is restarted (with back-off) on its own.
    proxy["restartPolicy"] = "Always"
    app = workload_container(
        MAIN_CONTAINER,
        image,
        _args("client", "--target", PROXY_ADDRESS, "--interval", _go_duration(CLIENT_INTERVAL)),
    )
    return pod_for_worker(
        name=pod_name(CRITICAL_SIDECAR, worker),
        worker=worker,
        run_id=run_id,
        role=CRITICAL_SIDECAR,
        containers=[app],
        init_containers=[proxy],
    )


def scenario_pods(scenario: str, worker: str, run_id: str, image: str) -> list[dict[str, Any]]:
    """The long-lived pods of ``scenario`` on ``worker`` (the fresh-pod baseline is not one)."""
    pod_name(scenario, worker)  # refuses an unknown scenario
    render = {
        TASK_ISOLATION: session_pod,
        FAST_RESTART: transient_pod,
        CRITICAL_SIDECAR: sidecar_pod,
    }[scenario]
    return [render(worker, run_id, image)]


def _args(mode: str, *extra: str) -> list[str]:
    return ["--mode", mode, *extra, "--record-dir", RECORD_DIR]
