"""The pod every workload runs in: restricted, limited, pinned, labelled; moved to a named node."""

from __future__ import annotations

from datetime import timedelta

from crashloop_harness.core.conventions import ROLE_LABEL, RUN_LABEL, WORKER_LABEL
from crashloop_harness.pods.skeleton import (
    MAIN_CONTAINER,
    RECORD_DIR,
    crashing_pod,
    go_duration,
    on_existing_node,
    pace_pod,
    pod_names,
    workload_args,
)

IMAGE = "crashloop.local/workload:v1"


def test_the_crashing_pod_exits_at_once_and_records_into_its_dir() -> None:
    pod = crashing_pod("fast", "run-1", IMAGE, exit_code=3)
    (container,) = pod["spec"]["containers"]
    assert container["name"] == MAIN_CONTAINER
    assert container["args"] == ["--mode", "exit", "--exit-code", "3", "--record-dir", RECORD_DIR]
    assert container["imagePullPolicy"] == "Never"
    assert pod["metadata"]["name"] == "crash-fast"


def test_a_pod_is_restricted_limited_pinned_and_labelled() -> None:
    pod = crashing_pod("reduced", "run-1", IMAGE)
    spec = pod["spec"]
    (container,) = spec["containers"]
    security = container["securityContext"]
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert security["runAsNonRoot"] is True
    assert security["seccompProfile"] == {"type": "RuntimeDefault"}
    assert set(container["resources"]) == {"requests", "limits"}
    assert spec["nodeSelector"] == {WORKER_LABEL: "reduced"}
    assert pod["metadata"]["labels"] == {
        RUN_LABEL: "run-1",
        ROLE_LABEL: "conformance",
        WORKER_LABEL: "reduced",
    }


def test_on_an_existing_cluster_a_pod_is_bound_by_name_and_may_pull() -> None:
    pod = crashing_pod("fast", "run-1", IMAGE)
    moved = on_existing_node(pod, "node-a")
    assert moved["spec"]["nodeName"] == "node-a"
    assert "nodeSelector" not in moved["spec"]
    assert moved["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    # The original is left as it was: manifests are values.
    assert pod["spec"]["nodeSelector"] == {WORKER_LABEL: "fast"}
    assert pod["spec"]["containers"][0]["imagePullPolicy"] == "Never"


def test_a_statefulset_on_an_existing_cluster_binds_its_template() -> None:
    template = crashing_pod("fast", "run-1", IMAGE)
    statefulset = {
        "kind": "StatefulSet",
        "metadata": {"name": "ordinal-fast"},
        "spec": {"replicas": 3, "template": template},
    }
    moved = on_existing_node(statefulset, "node-b")
    assert moved["spec"]["template"]["spec"]["nodeName"] == "node-b"
    assert pod_names(moved) == ["ordinal-fast-0", "ordinal-fast-1", "ordinal-fast-2"]
    assert pod_names(template) == ["crash-fast"]


def test_durations_are_whole_milliseconds_as_go_reads_them() -> None:
    assert go_duration(timedelta(milliseconds=500)) == "500ms"
    assert go_duration(timedelta(seconds=2, microseconds=999)) == "2000ms"
    assert workload_args("transient", "--fail-times", "3") == [
        "--mode",
        "transient",
        "--fail-times",
        "3",
        "--record-dir",
        RECORD_DIR,
    ]


def test_the_pace_pod_has_no_cpu_quota_a_node_held_below_a_core_would_refuse() -> None:
    """A limit is a CFS quota; a node held to 0.2 of a core could not start a container whose
    quota was a whole core, and went unmeasured (2026-12-07)."""
    pod = pace_pod("fast", "pace-fast", "run-1", IMAGE, timedelta(seconds=5))
    (container,) = pod["spec"]["containers"]
    assert "cpu" not in container["resources"]["limits"]
    assert container["resources"]["requests"]["cpu"]
