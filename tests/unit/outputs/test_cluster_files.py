"""The checkout's clusters/ is what the harness creates; it must never drift from the code."""

from __future__ import annotations

from pathlib import Path

import yaml

from crashloop_harness.cluster.kindconfig import PATCHES_MOUNT, render_kind_config
from crashloop_harness.cluster.profiles import load_cluster_spec
from crashloop_harness.core.resources import CLUSTERS_DIR, builtin_specs
from crashloop_harness.outputs.clusterfiles import cluster_files, write_cluster_files

CLUSTERS = Path(__file__).resolve().parents[3] / "clusters"


def test_the_committed_files_are_what_the_code_writes() -> None:
    rendered = cluster_files()
    committed = {str(p.relative_to(CLUSTERS)): p.read_text() for p in CLUSTERS.rglob("*.yaml")}
    assert set(committed) == set(rendered), "clusters/ drifted: run `make manifests`"
    for name, text in rendered.items():
        assert committed[name] == text, f"clusters/{name} drifted: run `make manifests`"


def test_each_kind_config_is_the_harness_s_own_with_mounts_from_the_checkout() -> None:
    files = cluster_files()
    for name in builtin_specs():
        spec = load_cluster_spec(CLUSTERS_DIR / f"{name}.yaml")
        committed = yaml.safe_load(files[f"{name}/kind-config.yaml"])
        own = render_kind_config(spec, Path("/anywhere"), cgroup_v1=True)
        for ours, theirs in zip(committed["nodes"], own["nodes"], strict=True):
            mounts = ours.pop("extraMounts", [])
            theirs.pop("extraMounts", None)
            assert ours == theirs
            for mount in mounts:
                assert mount["containerPath"] == PATCHES_MOUNT
                patch_dir = Path(mount["hostPath"])
                assert not patch_dir.is_absolute()
                # Every mount names a patch the checkout holds.
                assert (CLUSTERS.parent / patch_dir).is_dir(), patch_dir
        assert {k: v for k, v in committed.items() if k != "nodes"} == {
            k: v for k, v in own.items() if k != "nodes"
        }


def test_each_worker_s_patch_holds_its_profile_s_fields() -> None:
    spec = load_cluster_spec(CLUSTERS_DIR / "crashloop.yaml")
    for worker in spec.workers:
        text = cluster_files(["crashloop"])[
            f"crashloop/patches/{worker.name}/kubeletconfiguration+strategic.yaml"
        ]
        assert yaml.safe_load(text) == worker.profile.patch()


def test_they_are_written_where_asked(tmp_path: Path) -> None:
    written = write_cluster_files(tmp_path)
    assert sorted(str(p.relative_to(tmp_path)) for p in written) == sorted(cluster_files())
