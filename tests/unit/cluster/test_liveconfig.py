"""Each node's live kubelet config against its profile, on the node's own release."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import yaml

from crashloop_harness.cluster.liveconfig import row_for
from crashloop_harness.cluster.profiles import load_cluster_spec
from crashloop_harness.core.conventions import PROFILE_LABEL, WORKER_LABEL
from crashloop_harness.core.resources import CLUSTERS_DIR
from crashloop_harness.model.releases import AT_EXPIRY, EVERY_10_15S

SPEC = load_cluster_spec(CLUSTERS_DIR / "crashloop.yaml")
LABELS = {WORKER_LABEL: "fast", PROFILE_LABEL: "fast"}


def _configz(profile: str, **overrides: Any) -> dict[str, Any]:
    doc = yaml.safe_load((CLUSTERS_DIR / "profiles" / f"{profile}.yaml").read_text())
    return {"kubeletconfig": {**doc, **overrides}}


@pytest.mark.parametrize(
    ("version", "requeue"), [("v1.34.11", EVERY_10_15S), ("v1.35.8", AT_EXPIRY), ("", AT_EXPIRY)]
)
def test_the_curve_is_the_nodes_own_release(version: str, requeue: str) -> None:
    row = row_for("n1", LABELS, _configz("fast"), SPEC, version)
    assert row.matches, row.mismatches
    assert row.curve.maximum == timedelta(seconds=2)
    assert row.curve.requeue == requeue
    assert row.kubelet_version == version


def test_a_kubelet_version_the_model_does_not_know_is_a_mismatch() -> None:
    row = row_for("n1", LABELS, _configz("fast"), SPEC, "v1.39.0")
    assert any("v1.39.0" in m and "it knows 1.33" in m for m in row.mismatches), row.mismatches


def test_a_live_field_off_profile_is_named() -> None:
    live = _configz("fast", crashLoopBackOff={"maxContainerRestartPeriod": "3s"})
    (mismatch,) = row_for("n1", LABELS, live, SPEC, "v1.35.8").mismatches
    assert "maxContainerRestartPeriod is 3s live, the profile asks for 2s" in mismatch


def test_the_max_gate_off_live_is_named_on_134() -> None:
    """On 1.34 the gate is off by default: a kubelet without it runs the default curve."""
    live = {"kubeletconfig": {"kind": "KubeletConfiguration"}}
    mismatches = row_for("n1", LABELS, live, SPEC, "v1.34.11").mismatches
    assert any("featureGates.KubeletCrashLoopBackOffMax is False live" in m for m in mismatches)
