"""The nightly's Helm chart: linted, and rendered to exactly what `crashloop cronjob` prints.

Two ways to install one nightly must not drift apart: the chart (charts/crashloop-nightly,
for Helm users) and the CLI's manifests (for `kubectl apply`). helm, built from its Go
module at the pinned version, renders the chart for several values; each rendering's
objects must equal the CLI's for the same values.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic import DynamicClient

from crashloop_harness.cluster.kube import create_namespace, delete_namespace
from crashloop_harness.cluster.rbac import rbac_yaml
from crashloop_harness.core import timeouts
from crashloop_harness.pods.nightly import NAMESPACE, NightlySpec, cronjob
from crashloop_harness.substrate.helmbin import ensure_helm

pytestmark = pytest.mark.e2e

CHART = Path(__file__).resolve().parents[2] / "charts" / "crashloop-nightly"


@pytest.fixture(scope="module")
def helm() -> Path:
    return ensure_helm()


def _helm(helm: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(helm), *argv],
        check=False,
        capture_output=True,
        text=True,
        timeout=timeouts.TOOL_QUERY,
    )


def _objects(text: str) -> list[dict[str, Any]]:
    return sorted(
        (d for d in yaml.safe_load_all(text) if d),
        key=lambda d: (d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]),
    )


def test_the_chart_lints_clean(helm: Path) -> None:
    linted = _helm(helm, "lint", "--strict", str(CHART))
    assert linted.returncode == 0, linted.stdout + linted.stderr
    assert "0 chart(s) failed" in linted.stdout


@pytest.mark.parametrize(
    "spec",
    [
        NightlySpec(
            image="crashloop.local/harness:0.1.0",
            workload_image="crashloop.local/workload:v1",
            node_selector="crashloop.harness/profile",
        ),
        NightlySpec(
            image="registry.example/crashloop-harness:7",
            workload_image="registry.example/crashloop-workload:7",
            node_selector="pool=canary, example.com/tier",
            schedule="30 1 * * 1-5",
            profile="full",
            kubelet_ca_configmap="kubelet-serving-cas",
            node_proxy=True,
        ),
        NightlySpec(
            image="registry.example/crashloop-harness:7",
            workload_image="registry.example/crashloop-workload:7",
            per_group=2,
            expect=("node.kubernetes.io/pool=canary:max=60s", "tier=batch:max=5m,initial=10s"),
        ),
    ],
    ids=["defaults", "a pool of one's own", "the fleet's plan"],
)
def test_the_chart_renders_what_the_cli_prints(helm: Path, spec: NightlySpec) -> None:
    rendered = _helm(
        helm,
        "template",
        "nightly",
        str(CHART),
        "--set-string",
        f"image={spec.image},workloadImage={spec.workload_image},schedule={spec.schedule},"
        f"profile={spec.profile},kubeletCAConfigMap={spec.kubelet_ca_configmap or ''}",
        "--set",
        f"nodeProxy={str(spec.node_proxy).lower()},perGroup={spec.per_group or 0}",
        "--set-json",
        f"expect={json.dumps(list(spec.expect))}",
        "--set-string",
        # Commas inside one value are escaped for --set.
        f"nodeSelector={spec.node_selector.replace(',', chr(92) + ',')}",
    )
    assert rendered.returncode == 0, rendered.stderr
    printed = rbac_yaml(node_proxy=spec.node_proxy) + "---\n" + yaml.safe_dump(cronjob(spec))
    assert _objects(rendered.stdout) == _objects(printed)


def test_a_selector_the_api_server_would_refuse_is_refused_by_the_chart(helm: Path) -> None:
    rendered = _helm(helm, "template", "nightly", str(CHART), "--set-string", "nodeSelector=a b")
    assert rendered.returncode != 0
    assert "nodeSelector: name the nodes to check by label" in rendered.stderr


def test_an_expectation_without_the_fleet_s_plan_is_refused_by_the_chart(helm: Path) -> None:
    rendered = _helm(
        helm, "template", "nightly", str(CHART), "--set-json", 'expect=["pool=a:max=60s"]'
    )
    assert rendered.returncode != 0
    assert "expect judges the fleet's plan: set perGroup too" in rendered.stderr


def test_every_rendered_object_is_valid_to_the_cluster_s_own_schema(
    helm: Path, crashloop_api: client.ApiClient
) -> None:
    """Each object of the fleet-mode rendering (its node proxy and CA options on) applied
    server-side as a dry run: the API server types it against its own OpenAPI schema, a
    field the schema does not declare refused. The check's namespace is stood for by one
    made for the test (a dry-run Namespace is not there for the next object)."""
    rendered = _helm(
        helm,
        "template",
        "nightly",
        str(CHART),
        "--set",
        "perGroup=2,nodeProxy=true",
        "--set-string",
        "kubeletCAConfigMap=kubelet-cas",
        "--set-json",
        'expect=["pool=a:max=60s"]',
    )
    assert rendered.returncode == 0, rendered.stderr
    objects = _objects(rendered.stdout)
    namespace = create_namespace(crashloop_api, "chart-schema")
    dynamic = DynamicClient(crashloop_api)

    def apply(document: dict[str, Any]) -> None:
        resource = dynamic.resources.get(api_version=document["apiVersion"], kind=document["kind"])
        dynamic.server_side_apply(
            resource,
            body=document,
            namespace=document["metadata"].get("namespace"),
            field_manager="crashloop-chart-test",
            force_conflicts=True,
            dry_run="All",
        )

    try:
        for document in objects:
            if document["metadata"].get("namespace") == NAMESPACE:
                document["metadata"]["namespace"] = namespace
            for subject in document.get("subjects", []):
                if subject.get("namespace") == NAMESPACE:
                    subject["namespace"] = namespace
            apply(document)
        assert {d["kind"] for d in objects} >= {"CronJob", "ClusterRole", "Role", "Namespace"}
        # The check is the server's: a field its schema does not declare is refused.
        (cronjob_object,) = [d for d in objects if d["kind"] == "CronJob"]
        cronjob_object["spec"]["jobTemplate"]["spec"]["retries"] = 1
        with pytest.raises(ApiException, match="retries"):
            apply(cronjob_object)
    finally:
        delete_namespace(crashloop_api, namespace)


def test_a_kubelet_ca_configmap_the_api_server_would_refuse_is_refused_by_the_chart(
    helm: Path,
) -> None:
    rendered = _helm(
        helm, "template", "nightly", str(CHART), "--set-string", "kubeletCAConfigMap=Kubelet CAs"
    )
    assert rendered.returncode != 0
    assert 'kubeletCAConfigMap: "Kubelet CAs" is not a ConfigMap name' in rendered.stderr
