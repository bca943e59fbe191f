"""The nightly CronJob: what its pod runs, where, and under which Pod Security level."""

from __future__ import annotations

import dataclasses

import pytest
import yaml

from crashloop_harness.cli.app import build_parser
from crashloop_harness.cluster.rbac import rbac_yaml
from crashloop_harness.core.conventions import KUBELET_CA_VARIABLE, PROGRESS_VARIABLE
from crashloop_harness.pods.nightly import (
    NightlySpec,
    away_from_checked,
    check_args,
    cronjob,
    schedule_problem,
    selector_problem,
)

SPEC = NightlySpec(
    image="registry.example/crashloop-harness:1",
    workload_image="registry.example/crashloop-workload:1",
    node_selector="pool=canary,crashloop.harness/profile",
)


def test_the_pod_runs_a_check_the_cli_accepts_in_its_namespace() -> None:
    args = build_parser().parse_args(check_args(SPEC))
    assert args.command == "check"
    assert args.profile == "quick"
    assert args.namespace == "crashloop-check"
    assert args.node_selector == SPEC.node_selector
    assert args.workload_image == SPEC.workload_image
    # No kubeconfig: in its pod the ServiceAccount is the identity.
    assert args.kubeconfig is None


def test_the_pod_meets_the_restricted_pod_security_level() -> None:
    pod = cronjob(SPEC)["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    (container,) = pod["containers"]
    context = container["securityContext"]
    assert context["allowPrivilegeEscalation"] is False
    assert context["capabilities"] == {"drop": ["ALL"]}
    assert context["readOnlyRootFilesystem"] is True
    # What it writes goes to an emptyDir at the image's scratch directory.
    assert container["volumeMounts"] == [{"name": "scratch", "mountPath": "/tmp"}]
    assert not any("hostPath" in volume for volume in pod["volumes"])


def test_a_job_is_never_retried_and_never_overlaps_another() -> None:
    document = cronjob(SPEC)
    assert document["spec"]["concurrencyPolicy"] == "Forbid"
    job = document["spec"]["jobTemplate"]["spec"]
    assert job["backoffLimit"] == 0
    assert job["template"]["spec"]["restartPolicy"] == "Never"


def test_the_pod_prefers_a_node_the_check_does_not_measure() -> None:
    terms = away_from_checked("pool=canary,crashloop.harness/profile")["nodeAffinity"][
        "preferredDuringSchedulingIgnoredDuringExecution"
    ]
    expressions = [term["preference"]["matchExpressions"] for term in terms]
    assert expressions == [
        [{"key": "pool", "operator": "NotIn", "values": ["canary"]}],
        [{"key": "crashloop.harness/profile", "operator": "DoesNotExist"}],
    ]


@pytest.mark.parametrize(
    "selector", ["crashloop.harness/profile", "pool=canary", "a=b,c", "example.com/pool=x-1"]
)
def test_a_sound_selector_is_taken(selector: str) -> None:
    assert selector_problem(selector) is None


@pytest.mark.parametrize("selector", ["a b", "pool==x", "", "pool=canary,", "-pool", "pool=x y"])
def test_a_selector_the_api_server_would_refuse_is_named(selector: str) -> None:
    problem = selector_problem(selector)
    assert problem is not None
    assert "is not a label key or key=value" in problem


@pytest.mark.parametrize("schedule", ["0 3 * * *", "*/15 1-5 * * MON-FRI", "@daily"])
def test_a_schedule_the_controller_reads_is_taken(schedule: str) -> None:
    assert schedule_problem(schedule) is None


@pytest.mark.parametrize("schedule", ["0 3 * *", "daily", "0 3 * * * *", "0 3 * * ;rm"])
def test_a_schedule_not_of_cron_s_shape_is_named(schedule: str) -> None:
    problem = schedule_problem(schedule)
    assert problem is not None
    assert "is not five cron fields" in problem


def test_the_kubelets_cas_are_mounted_and_named_to_the_check_when_given() -> None:
    spec = dataclasses.replace(SPEC, kubelet_ca_configmap="kubelet-cas")
    pod = cronjob(spec)["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    (env,) = [e for e in container["env"] if e["name"] == KUBELET_CA_VARIABLE]
    mount = next(m for m in container["volumeMounts"] if m["name"] == "kubelet-ca")
    assert env["value"] == f"{mount['mountPath']}/ca.crt"
    assert mount["readOnly"] is True
    volume = next(v for v in pod["volumes"] if v["name"] == "kubelet-ca")
    assert volume["configMap"] == {"name": "kubelet-cas"}
    # Not given: the cluster's CA alone, nothing mounted.
    (plain,) = cronjob(SPEC)["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert [e["name"] for e in plain["env"]] == [PROGRESS_VARIABLE]
    assert not any(m["name"] == "kubelet-ca" for m in plain["volumeMounts"])


def test_the_in_cluster_roles_grant_no_node_proxy_and_no_exec() -> None:
    rules = [
        (resource, verb)
        for document in yaml.safe_load_all(rbac_yaml(node_proxy=False))
        if document and document["kind"] in ("ClusterRole", "Role")
        for rule in document["rules"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    ]
    assert ("nodes/configz", "get") in rules
    assert not any(resource in ("nodes/proxy", "pods/exec") for resource, _ in rules)
    outside = yaml.safe_load_all(rbac_yaml(node_proxy=True))
    assert any(
        "nodes/proxy" in rule["resources"]
        for document in outside
        if document and document["kind"] == "ClusterRole"
        for rule in document["rules"]
    )


def test_over_the_fleet_s_plan_the_pod_runs_a_fleet_the_cli_accepts_and_prefers_no_node() -> None:
    spec = NightlySpec(
        image="i",
        workload_image="w",
        per_group=2,
        expect=("pool=a:max=60s", "pool=b:max=5m"),
    )
    args = build_parser().parse_args(check_args(spec))
    assert args.command == "fleet"
    assert args.per_group == 2
    assert args.expect == ["pool=a:max=60s", "pool=b:max=5m"]
    assert args.namespace == "crashloop-check"
    assert args.keep_in_cluster is True
    assert args.kubeconfig is None
    pod = cronjob(spec)["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert "affinity" not in pod
