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

from crashloop_harness.cluster.rbac import rbac_yaml
from crashloop_harness.core import timeouts
from crashloop_harness.pods.nightly import NightlySpec, cronjob
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
