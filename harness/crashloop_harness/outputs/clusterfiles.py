"""The checkout's clusters/: each built-in spec as plain files kind and kubeadm take as they are.

For a reader who wants the clusters without the tool: a kind config per
spec, and each worker's KubeletConfiguration patch, which the config mounts
into its node for kubeadm's patches directory. They are rendered from the
same code the harness creates its clusters with; the mounts are relative to
the checkout's root, where ``kind create cluster --config`` must be run.
A unit test fails when the committed files drift from this rendering.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Final

from crashloop_harness.cluster.kindconfig import (
    PATCH_FILE_NAME,
    render_kind_config_yaml,
    worker_patch_dir,
    worker_patch_yaml,
)
from crashloop_harness.cluster.profiles import load_cluster_spec
from crashloop_harness.core.resources import CLUSTERS_DIR, builtin_specs

CLUSTERS_FOLDER: Final = "clusters"
KIND_CONFIG_FILE: Final = "kind-config.yaml"


def cluster_files(names: Iterable[str] | None = None) -> dict[str, str]:
    """Path under clusters/ -> text, for each built-in spec (all of them by default)."""
    files: dict[str, str] = {}
    for name in names if names is not None else builtin_specs():
        source = CLUSTERS_DIR / f"{name}.yaml"
        spec = load_cluster_spec(source)
        patches = PurePosixPath(CLUSTERS_FOLDER) / name / "patches"
        header = (
            f"# The {name} cluster (Kubernetes {spec.kubernetes.version}), rendered from the "
            f"harness's spec {name}.yaml by `crashloop manifests`.\n"
            f"# From the checkout's root: kind create cluster --config "
            f"{CLUSTERS_FOLDER}/{name}/{KIND_CONFIG_FILE} --image <a kind node image of "
            f"{spec.kubernetes.version}>\n"
            "# (each worker mounts its kubelet patch from a path relative to that directory).\n"
        )
        # failCgroupV1: false lets a v1.35 kubelet start on a cgroup v1 host; on v2 it is moot.
        config = render_kind_config_yaml(spec, patches, cgroup_v1=True, from_working_directory=True)
        files[f"{name}/{KIND_CONFIG_FILE}"] = header + config
        for worker in spec.workers:
            patch = PurePosixPath(name) / worker_patch_dir(PurePosixPath("patches"), worker.name)
            files[str(patch / PATCH_FILE_NAME)] = (
                f"# Worker {worker.name}, profile {worker.profile.name}: KubeletConfiguration "
                "fields kubeadm merges into this node's kubelet config.\n"
                + worker_patch_yaml(worker)
            )
    return files


def write_cluster_files(root: Path) -> list[Path]:
    """Write every built-in spec's files under ``root`` (the checkout's clusters/)."""
    written = []
    for relative, text in cluster_files().items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written
