"""Scenario pods: restricted Pod Security, resources, pinning, and the workload's flags."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from crashloop_harness.core.conventions import ROLE_LABEL, RUN_LABEL, WORKER_LABEL
from crashloop_harness.pods.skeleton import MAIN_CONTAINER, RECORD_DIR, on_existing_node
from crashloop_harness.runs.liverun import echoed_lines
from crashloop_harness.scenarios import (
    CRITICAL_SIDECAR,
    FAST_RESTART,
    KUBELET_RESTART_SIDECAR,
    LIVENESS_KILL,
    REGISTRY,
    RESTART_ALL,
    RESTART_RULES,
    SCENARIOS,
    STATEFULSET_ORDINAL,
    TASK_ISOLATION,
    ZOMBIE_REAPING,
    scenario_named,
    sized_registry,
)
from crashloop_harness.scenarios import critical_sidecar as cs
from crashloop_harness.scenarios import fast_restart as fr
from crashloop_harness.scenarios import kubelet_restart_sidecar as kr
from crashloop_harness.scenarios import liveness_kill as lk
from crashloop_harness.scenarios import restart_all as ra
from crashloop_harness.scenarios import restart_rules as rr
from crashloop_harness.scenarios import statefulset_ordinal as so
from crashloop_harness.scenarios import task_isolation as ti
from crashloop_harness.scenarios import zombie_reaping as zr
from crashloop_harness.substrate.workloadimage import BINARY, RUN_AS_USER

IMAGE = "crashloop.local/workload:test"
WORKERS = ("fast", "reduced", "default")
POD_NAMES: dict[str, Callable[[str], list[str]]] = {
    TASK_ISOLATION: lambda w: [ti.pod_name(w)],
    FAST_RESTART: lambda w: [fr.pod_name(w)],
    CRITICAL_SIDECAR: lambda w: [cs.pod_name(w)],
    STATEFULSET_ORDINAL: lambda w: [so.set_name(w)],
    LIVENESS_KILL: lambda w: [lk.pod_name(w)],
    RESTART_RULES: lambda w: [rr.pod_name(w)],
    RESTART_ALL: lambda w: [ra.single_pod_name(w), ra.pair_pod_name(w)],
    KUBELET_RESTART_SIDECAR: lambda w: [kr.pod_name(w)],
    ZOMBIE_REAPING: lambda w: [zr.pod_name(w), zr.init_pod_name(w)],
}


def _as_pod(manifest: dict[str, Any]) -> dict[str, Any]:
    """A Pod as it is; a StatefulSet as the pod its template makes, under the set's name."""
    if manifest["kind"] == "StatefulSet":
        return {"metadata": manifest["metadata"], "spec": manifest["spec"]["template"]["spec"]}
    return manifest


def _all_pods() -> list[dict[str, Any]]:
    pods = [
        _as_pod(manifest)
        for scenario in SCENARIOS
        for worker in WORKERS
        for manifest in REGISTRY[scenario].manifests(worker, "run-1", IMAGE)
    ]
    return pods + [ti.fresh_session_pod(w, "run-1", IMAGE, 0) for w in WORKERS]


def _containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    return [*pod["spec"].get("initContainers", []), *pod["spec"]["containers"]]


def _flag(container: dict[str, Any], name: str) -> str:
    args: list[str] = container["args"]
    return args[args.index(name) + 1]


@pytest.mark.parametrize("pod", _all_pods(), ids=lambda p: p["metadata"]["name"])
def test_every_pod_is_restricted_and_limited(pod: dict[str, Any]) -> None:
    spec = pod["spec"]
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    for container in _containers(pod):
        security = container["securityContext"]
        assert security["allowPrivilegeEscalation"] is False
        assert security["capabilities"] == {"drop": ["ALL"]}
        assert security["runAsUser"] == RUN_AS_USER
        assert container["imagePullPolicy"] == "Never"
        assert container["image"] == IMAGE
        assert {"cpu", "memory"} <= set(container["resources"]["requests"])
        assert {"cpu", "memory"} <= set(container["resources"]["limits"])
        assert _flag(container, "--record-dir") == RECORD_DIR
        assert {"name": "records", "mountPath": RECORD_DIR} in container["volumeMounts"]
    assert {v["name"] for v in spec["volumes"]} == {"records"}


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("worker", WORKERS)
def test_pods_are_pinned_and_labelled(scenario: str, worker: str) -> None:
    manifests = REGISTRY[scenario].manifests(worker, "run-7", IMAGE)
    names = []
    for pod in map(_as_pod, manifests):
        assert pod["spec"]["nodeSelector"] == {WORKER_LABEL: worker}
        labels = pod["metadata"]["labels"]
        assert labels == {RUN_LABEL: "run-7", ROLE_LABEL: scenario, WORKER_LABEL: worker}
        names.append(pod["metadata"]["name"])
    assert names == POD_NAMES[scenario](worker)


def test_pod_names_are_unique_across_scenarios_and_workers() -> None:
    names = [p["metadata"]["name"] for p in _all_pods()]
    assert len(names) == len(set(names))


def test_unknown_scenario_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match=r"unknown scenario 'nope'.*task-isolation"):
        scenario_named("nope")


def test_session_pod_exits_zero_after_its_session_and_restarts_in_place() -> None:
    pod = ti.session_pod("fast", "run", IMAGE)
    (app,) = pod["spec"]["containers"]
    assert pod["spec"]["restartPolicy"] == "Always"
    assert app["name"] == MAIN_CONTAINER
    assert _flag(app, "--mode") == "session"
    assert _flag(app, "--exit-code") == "0"
    assert _flag(app, "--run-for") == "3000ms"


def test_fresh_session_pod_is_the_same_session_never_restarted() -> None:
    first = ti.fresh_session_pod("reduced", "run", IMAGE, 0)
    second = ti.fresh_session_pod("reduced", "run", IMAGE, 1)
    assert first["metadata"]["name"] != second["metadata"]["name"]
    assert first["spec"]["restartPolicy"] == "Never"
    assert first["metadata"]["labels"][ROLE_LABEL] == ti.FRESH_ROLE
    assert (
        first["spec"]["containers"][0]["args"]
        == (ti.session_pod("reduced", "run", IMAGE)["spec"]["containers"][0]["args"])
    )


def test_transient_pod_fails_n_times_and_probes_readiness_with_the_binary() -> None:
    (app,) = fr.transient_pod("default", "run", IMAGE)["spec"]["containers"]
    assert _flag(app, "--mode") == "transient"
    assert _flag(app, "--fail-times") == str(fr.FAIL_TIMES) == "3"
    assert _flag(app, "--exit-code") == str(fr.TRANSIENT_EXIT_CODE)
    assert _flag(app, "--run-for") == "1000ms"
    probe = app["readinessProbe"]
    # FROM scratch: no shell, so the probe runs the workload binary itself.
    command = probe["exec"]["command"]
    assert command[0] == BINARY
    assert command[command.index("--mode") + 1] == "ready-check"
    assert command[command.index("--record-dir") + 1] == RECORD_DIR
    assert probe["periodSeconds"] == fr.READY_PROBE_PERIOD_S == 1
    assert probe["failureThreshold"] == 1


def test_sidecar_pod_has_a_restartable_proxy_with_a_memory_limit() -> None:
    pod = cs.sidecar_pod("fast", "run", IMAGE)
    (proxy,) = pod["spec"]["initContainers"]
    (app,) = pod["spec"]["containers"]
    assert proxy["name"] == cs.PROXY_CONTAINER
    # Only this makes an init container a sidecar.
    assert proxy["restartPolicy"] == "Always"
    assert proxy["resources"]["limits"]["memory"] == cs.PROXY_MEMORY_LIMIT
    assert _flag(proxy, "--mode") == "proxy"
    assert _flag(proxy, "--listen") == cs.PROXY_ADDRESS
    assert _flag(proxy, "--grow-mb") == str(cs.PROXY_GROW_MB)
    assert _flag(proxy, "--grow-every") == "500ms"
    assert app["name"] == MAIN_CONTAINER
    assert "restartPolicy" not in app
    assert _flag(app, "--mode") == "client"
    assert _flag(app, "--target") == cs.PROXY_ADDRESS
    assert _flag(app, "--interval") == "100ms"
    assert pod["spec"]["restartPolicy"] == "Always"


def test_proxy_leaks_past_its_limit_within_seconds() -> None:
    # The scenario needs the OOM kill after "a few seconds of serving".
    limit_mib = int(cs.PROXY_MEMORY_LIMIT.removesuffix("Mi"))
    steps = limit_mib // cs.PROXY_GROW_MB
    seconds = steps * cs.PROXY_GROW_EVERY.total_seconds()
    assert 3 <= seconds <= 20


def test_manifests_are_pure_and_fresh_each_call() -> None:
    first = cs.sidecar_pod("fast", "run", IMAGE)
    first["spec"]["initContainers"][0]["args"].append("--mutated")
    assert (
        "--mutated" not in cs.sidecar_pod("fast", "run", IMAGE)["spec"]["initContainers"][0]["args"]
    )


@pytest.mark.parametrize(
    ("scenario", "prefix"),
    [(TASK_ISOLATION, "session"), (FAST_RESTART, "transient"), (CRITICAL_SIDECAR, "sidecar")],
)
def test_pod_name_prefixes(scenario: str, prefix: str) -> None:
    assert POD_NAMES[scenario]("reduced") == [f"{prefix}-reduced"]


def test_on_an_existing_cluster_a_pod_is_bound_to_its_node_and_may_pull() -> None:
    pod = cs.sidecar_pod("node-a", "run-1", IMAGE)
    moved = on_existing_node(pod, "node-a")
    assert moved["spec"]["nodeName"] == "node-a"
    assert "nodeSelector" not in moved["spec"]  # its nodes carry no worker label
    assert {c["imagePullPolicy"] for c in _containers(moved)} == {"IfNotPresent"}
    # The harness's own pod is untouched: pinned by label, never pulled.
    assert pod["spec"]["nodeSelector"] == {WORKER_LABEL: "node-a"}
    assert {c["imagePullPolicy"] for c in _containers(pod)} == {"Never"}


def test_echoed_lines_are_the_file_s_own_lines() -> None:
    log = "\n".join(
        [
            '{"file":"client.log","event":"connected","unix_ns":5}',
            "workload: a line on stderr",
            '{"file":"ready-probe.log","event":"ready","unix_ns":6}',
            '{"file":"client.log","event":"cut","unix_ns":7}',
        ]
    )
    assert echoed_lines(log, "client.log") == [
        '{"event": "connected", "unix_ns": 5}',
        '{"event": "cut", "unix_ns": 7}',
    ]
    assert echoed_lines(log, "absent.log") == []


# --- the scenarios beyond the talk's -------------------------------------------------------


def test_statefulset_is_ordered_and_only_ordinal_1_fails() -> None:
    (sts,) = REGISTRY[STATEFULSET_ORDINAL].manifests("fast", "run-1", IMAGE)
    spec = sts["spec"]
    assert sts["kind"] == "StatefulSet"
    assert spec["podManagementPolicy"] == "OrderedReady"
    assert spec["replicas"] == so.REPLICAS == 4
    template = spec["template"]
    assert spec["selector"]["matchLabels"].items() <= template["metadata"]["labels"].items()
    (app,) = template["spec"]["containers"]
    assert _flag(app, "--mode") == "transient"
    assert _flag(app, "--fail-times") == str(so.DEFAULT_FAIL_TIMES) == "5"
    assert _flag(app, "--fail-host-suffix") == "-1"
    assert so.ordinal_pod("fast", 1).endswith("-1")
    assert app["readinessProbe"]["exec"]["command"][0] == BINARY


def test_ordinal_failures_size_the_statefulset_only() -> None:
    sized = sized_registry(ordinal_failures=2)
    (sts,) = sized[STATEFULSET_ORDINAL].manifests("fast", "run-1", IMAGE)
    (app,) = sts["spec"]["template"]["spec"]["containers"]
    assert _flag(app, "--fail-times") == "2"
    assert sized[LIVENESS_KILL] is REGISTRY[LIVENESS_KILL]
    assert sized_registry() is REGISTRY
    with pytest.raises(ValueError, match="at least once"):
        sized_registry(ordinal_failures=0)


def test_liveness_pod_sleeps_and_its_probe_can_never_pass() -> None:
    (pod,) = REGISTRY[LIVENESS_KILL].manifests("fast", "run-1", IMAGE)
    (app,) = pod["spec"]["containers"]
    assert _flag(app, "--mode") == "sleep"
    probe = app["livenessProbe"]
    assert probe["failureThreshold"] == 1
    assert probe["periodSeconds"] == lk.PROBE_PERIOD_S
    command = probe["exec"]["command"]
    assert command[0] == BINARY
    assert command[command.index("--mode") + 1] == "ready-check"
    # The marker it looks for is one nothing writes.
    assert command[command.index("--ready-file") + 1] == lk.NEVER_READY
    assert "readinessProbe" not in app


def test_rules_pod_never_restarts_except_on_the_retriable_exit() -> None:
    (pod,) = REGISTRY[RESTART_RULES].manifests("fast", "run-1", IMAGE)
    (app,) = pod["spec"]["containers"]
    assert pod["spec"]["restartPolicy"] == "Never"
    assert app["restartPolicy"] == "Never"
    assert app["restartPolicyRules"] == [
        {"action": "Restart", "exitCodes": {"operator": "In", "values": [42]}}
    ]
    assert _flag(app, "--mode") == "retriable"
    assert _flag(app, "--exit-code") == "42"
    assert _flag(app, "--final-exit-code") == "1"
    assert _flag(app, "--fail-times") == str(rr.RETRIES)


def test_a_statefulset_on_an_existing_cluster_binds_its_template() -> None:
    (sts,) = REGISTRY[STATEFULSET_ORDINAL].manifests("fast", "run-1", IMAGE)
    bound = on_existing_node(sts, "node-a")
    spec = bound["spec"]["template"]["spec"]
    assert spec["nodeName"] == "node-a"
    assert "nodeSelector" not in spec
    assert {c["imagePullPolicy"] for c in spec["containers"]} == {"IfNotPresent"}


def test_restart_all_pods_reset_on_the_trigger_exit_only() -> None:
    single, pair = REGISTRY[RESTART_ALL].manifests("fast", "run-1", IMAGE)
    (alone,) = single["spec"]["containers"]
    app, watcher = pair["spec"]["containers"]
    assert _flag(app, "--mode") == "sleep"
    assert "restartPolicyRules" not in app
    for trigger in (alone, watcher):
        assert _flag(trigger, "--mode") == "trigger"
        assert _flag(trigger, "--final-exit-code") == str(ra.TRIGGER_EXIT_CODE)
        assert _flag(trigger, "--fail-times") == str(ra.TRIGGER_AFTER)
        assert trigger["restartPolicyRules"] == [
            {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [88]}}
        ]
