"""The YAML in workloads/ is what the harness deploys; it must never drift from the code."""

from __future__ import annotations

from pathlib import Path

import yaml

from crashloop_harness.cluster.profiles import load_cluster_spec
from crashloop_harness.core.resources import CLUSTERS_DIR
from crashloop_harness.outputs.workloads import NAMESPACE, replay_manifests, write_manifests
from crashloop_harness.scenarios import SCENARIOS
from crashloop_harness.substrate.workloadimage import STABLE_TAG

# The manifests committed at the top of the checkout.
WORKLOADS = Path(__file__).resolve().parents[3] / "workloads"
WORKERS = [w.name for w in load_cluster_spec(CLUSTERS_DIR / "crashloop.yaml").workers]


def test_the_committed_yaml_is_what_the_code_writes() -> None:
    for name, text in replay_manifests(WORKERS).items():
        committed = WORKLOADS / name
        assert committed.is_file(), f"workloads/{name} is missing: run `make manifests`"
        assert committed.read_text() == text, f"workloads/{name} drifted: run `make manifests`"


def test_every_pod_runs_in_the_replay_namespace_on_the_stable_image() -> None:
    files = replay_manifests(WORKERS)
    assert set(files) == {"namespace.yaml", "conformance.yaml", *(f"{s}.yaml" for s in SCENARIOS)}
    (namespace,) = yaml.safe_load_all(files["namespace.yaml"])
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    for name, text in files.items():
        if name == "namespace.yaml":
            continue
        pods = list(yaml.safe_load_all(text))
        assert len(pods) >= len(WORKERS), name
        for pod in pods:
            assert pod["metadata"]["namespace"] == NAMESPACE
            spec = pod["spec"]["template"]["spec"] if pod["kind"] == "StatefulSet" else pod["spec"]
            workers = {spec["nodeSelector"]["crashloop.harness/worker"]}
            assert workers <= set(WORKERS)
            containers = spec["containers"] + spec.get("initContainers", [])
            assert {c["image"] for c in containers} == {STABLE_TAG}
            assert {c["imagePullPolicy"] for c in containers} == {"Never"}


def test_manifests_are_written_where_asked(tmp_path: Path) -> None:
    written = write_manifests(tmp_path / "out", ["w1"])
    assert sorted(p.name for p in written) == sorted(replay_manifests(["w1"]))
    conformance = list(yaml.safe_load_all((tmp_path / "out" / "conformance.yaml").read_text()))
    assert [pod["metadata"]["name"] for pod in conformance] == ["crash-w1"]
