"""Rendering the kind cluster config (crashloop_harness.cluster.kindconfig)."""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

from crashloop_harness.cluster.kindconfig import (
    PATCH_FILE_NAME,
    PATCHES_MOUNT,
    config_hash_label,
    render_kind_config,
    render_kind_config_yaml,
    worker_patch_dir,
    write_worker_patches,
)
from crashloop_harness.cluster.profiles import ClusterSpec, load_cluster_spec
from crashloop_harness.core.conventions import CONFIG_HASH_LABEL, PROFILE_LABEL, WORKER_LABEL
from crashloop_harness.core.resources import CLUSTERS_DIR

CLUSTERS = CLUSTERS_DIR
ROOT = PurePosixPath("/var/tmp/crashloop/patches")


@pytest.fixture
def spec() -> ClusterSpec:
    return load_cluster_spec(CLUSTERS / "crashloop.yaml")


def workers(config: dict[str, Any]) -> list[dict[str, Any]]:
    return [node for node in config["nodes"] if node["role"] == "worker"]


def test_top_level_fields(spec: ClusterSpec) -> None:
    config = render_kind_config(spec, ROOT)
    assert config["kind"] == "Cluster"
    assert config["apiVersion"] == "kind.x-k8s.io/v1alpha4"
    assert config["name"] == "crashloop"
    assert config["networking"] == {"apiServerAddress": "127.0.0.1"}
    assert "kubeadmConfigPatches" not in config


def test_one_control_plane_then_workers_in_spec_order(spec: ClusterSpec) -> None:
    config = render_kind_config(spec, ROOT)
    assert [node["role"] for node in config["nodes"]] == [
        "control-plane",
        "worker",
        "worker",
        "worker",
    ]
    assert [node["labels"][WORKER_LABEL] for node in workers(config)] == [
        "fast",
        "reduced",
        "default",
    ]


def test_every_node_carries_the_short_config_hash(spec: ClusterSpec) -> None:
    config = render_kind_config(spec, ROOT)
    expected = spec.config_hash[:16]
    assert config_hash_label(spec) == expected
    assert [node["labels"][CONFIG_HASH_LABEL] for node in config["nodes"]] == [expected] * 4
    assert len(expected) <= 63


def test_worker_labels_name_the_profile(spec: ClusterSpec) -> None:
    labels = [node["labels"] for node in workers(render_kind_config(spec, ROOT))]
    assert [label[PROFILE_LABEL] for label in labels] == ["fast", "reduced", "default"]
    assert PROFILE_LABEL == "crashloop.harness/profile"


def test_control_plane_has_no_profile_mount_or_patch(spec: ClusterSpec) -> None:
    control_plane = render_kind_config(spec, ROOT)["nodes"][0]
    assert set(control_plane) == {"role", "labels"}
    assert PROFILE_LABEL not in control_plane["labels"]


def test_each_worker_mounts_its_own_patch_dir_read_only(spec: ClusterSpec) -> None:
    mounts = [node["extraMounts"] for node in workers(render_kind_config(spec, ROOT))]
    assert mounts == [
        [{"hostPath": f"{ROOT}/{name}", "containerPath": "/kind-patches", "readOnly": True}]
        for name in ("fast", "reduced", "default")
    ]
    assert PATCHES_MOUNT == "/kind-patches"


def test_each_worker_join_points_kubeadm_at_the_mount(spec: ClusterSpec) -> None:
    for node in workers(render_kind_config(spec, ROOT)):
        (patch,) = node["kubeadmConfigPatches"]
        assert isinstance(patch, str)
        assert yaml.safe_load(patch) == {
            "apiVersion": "kubeadm.k8s.io/v1beta3",
            "kind": "JoinConfiguration",
            "patches": {"directory": "/kind-patches"},
        }


def test_cgroup_v1_adds_the_cluster_kubelet_patch(spec: ClusterSpec) -> None:
    config = render_kind_config(spec, ROOT, cgroup_v1=True)
    (patch,) = config["kubeadmConfigPatches"]
    assert yaml.safe_load(patch) == {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "failCgroupV1": False,
    }


def test_relative_patches_root_is_refused(spec: ClusterSpec) -> None:
    with pytest.raises(ValueError, match="absolute path, got 'patches'"):
        render_kind_config(spec, PurePosixPath("patches"))


def test_rendering_is_pure_and_repeatable(spec: ClusterSpec) -> None:
    assert render_kind_config(spec, ROOT) == render_kind_config(spec, ROOT)
    assert render_kind_config_yaml(spec, ROOT) == render_kind_config_yaml(spec, ROOT)


@pytest.mark.parametrize("cgroup_v1", [False, True])
def test_yaml_text_is_the_rendered_dict(spec: ClusterSpec, cgroup_v1: bool) -> None:
    text = render_kind_config_yaml(spec, ROOT, cgroup_v1=cgroup_v1)
    assert yaml.safe_load(text) == render_kind_config(spec, ROOT, cgroup_v1=cgroup_v1)
    assert text.startswith("kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\n")
    # Embedded patches are literal blocks, readable as in the kind docs.
    assert "  - |\n    apiVersion: kubeadm.k8s.io/v1beta3\n" in text


def test_worker_patch_dir() -> None:
    assert worker_patch_dir(ROOT, "fast") == ROOT / "fast"


def test_write_worker_patches_writes_each_profile_patch(tmp_path: Path, spec: ClusterSpec) -> None:
    written = write_worker_patches(spec, tmp_path)
    assert written == [tmp_path / name / PATCH_FILE_NAME for name in ("fast", "reduced", "default")]
    assert PATCH_FILE_NAME == "kubeletconfiguration+strategic.yaml"
    for worker, path in zip(spec.workers, written, strict=True):
        assert yaml.safe_load(path.read_text(encoding="utf-8")) == worker.profile.patch()
    fast = yaml.safe_load(written[0].read_text(encoding="utf-8"))
    assert fast["crashLoopBackOff"] == {"maxContainerRestartPeriod": "2s"}


def test_write_worker_patches_replaces_stale_files(tmp_path: Path, spec: ClusterSpec) -> None:
    stale = tmp_path / "fast" / PATCH_FILE_NAME
    stale.parent.mkdir()
    stale.write_text("stale: true\n", encoding="utf-8")
    write_worker_patches(spec, tmp_path)
    assert "stale" not in stale.read_text(encoding="utf-8")


def test_mounts_and_written_files_agree(tmp_path: Path, spec: ClusterSpec) -> None:
    written = write_worker_patches(spec, tmp_path)
    host_dirs = [
        node["extraMounts"][0]["hostPath"] for node in workers(render_kind_config(spec, tmp_path))
    ]
    assert host_dirs == [str(path.parent) for path in written]
