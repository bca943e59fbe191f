"""Render the kind (v1alpha4) cluster config for a validated ClusterSpec.

Per-worker kubelet settings cannot go through kind's cluster-wide
``KubeletConfiguration`` patch: kubeadm shares that config with every node. So
each worker mounts its own host directory at ``/kind-patches`` and its
``JoinConfiguration`` points kubeadm's ``patches.directory`` there; kubeadm then
applies ``kubeletconfiguration+strategic.yaml`` to that node's kubelet config
only.

Rendering is pure (spec + paths + flags -> dict); :func:`write_worker_patches`
is the one function that writes files, the patches the mounts point at.
"""

from __future__ import annotations

from pathlib import Path, PurePath
from typing import Any, Final

import yaml

from crashloop_harness.cluster.profiles import ClusterSpec, Worker
from crashloop_harness.core.conventions import (
    CONFIG_HASH_LABEL,
    CONFIG_HASH_LABEL_LENGTH,
    PROFILE_LABEL,
    WORKER_LABEL,
)

KIND_API_VERSION: Final = "kind.x-k8s.io/v1alpha4"
# kind v0.33.0 generates kubeadm v1beta3 documents for Kubernetes < 1.36 and
# v1beta4 from 1.36 (pkg/cluster/internal/kubeadm/config.go), and applies a
# patch only when its apiVersion matches: the patch follows the node version.
KUBEADM_V1BETA3: Final = "kubeadm.k8s.io/v1beta3"
KUBEADM_V1BETA4: Final = "kubeadm.k8s.io/v1beta4"
_FIRST_V1BETA4_MINOR: Final = 36
KUBELET_CONFIG_API_VERSION: Final = "kubelet.config.k8s.io/v1beta1"

PATCHES_MOUNT: Final = "/kind-patches"
# kubeadm's patch file naming: <target>[suffix][+<patch type>].<extension>.
PATCH_FILE_NAME: Final = "kubeletconfiguration+strategic.yaml"

# Label values are limited to 63 characters; 16 hex digits (64 bits) are
# plenty to tell configs apart.

LOOPBACK: Final = "127.0.0.1"


def kubeadm_api_version(spec: ClusterSpec) -> str:
    """The kubeadm config API kind writes for the spec's Kubernetes release."""
    minor = int(spec.kubernetes.minor.split(".")[1])
    return KUBEADM_V1BETA3 if minor < _FIRST_V1BETA4_MINOR else KUBEADM_V1BETA4


def config_hash_label(spec: ClusterSpec) -> str:
    """The config-hash label value every node of the cluster carries."""
    return spec.config_hash[:CONFIG_HASH_LABEL_LENGTH]


def worker_patch_dir(patches_root: PurePath, worker_name: str) -> PurePath:
    """The host directory mounted into one worker at PATCHES_MOUNT."""
    return patches_root / worker_name


def render_kind_config(
    spec: ClusterSpec,
    patches_root: PurePath,
    cgroup_v1: bool = False,
    *,
    from_working_directory: bool = False,
) -> dict[str, Any]:
    """The kind cluster config: one control-plane, then the workers in spec order.

    ``patches_root`` must be absolute: kind resolves a relative host path
    against its own working directory (filepath.Abs, its docker provider's
    provision.go), not ours. Only a config meant to be run by hand from a
    known directory (``from_working_directory``: the checkout's clusters/)
    may name a relative one. ``cgroup_v1`` lets a v1.35 kubelet start on a
    cgroup v1 host, which it otherwise refuses.
    """
    if not patches_root.is_absolute() and not from_working_directory:
        raise ValueError(f"patches_root must be an absolute path, got {str(patches_root)!r}")
    hash_label = config_hash_label(spec)
    nodes: list[dict[str, Any]] = [
        {"role": "control-plane", "labels": {CONFIG_HASH_LABEL: hash_label}}
    ]
    for worker in spec.workers:
        nodes.append(
            {
                "role": "worker",
                "labels": {
                    PROFILE_LABEL: worker.profile.name,
                    WORKER_LABEL: worker.name,
                    CONFIG_HASH_LABEL: hash_label,
                },
                "extraMounts": [
                    {
                        "hostPath": str(worker_patch_dir(patches_root, worker.name)),
                        "containerPath": PATCHES_MOUNT,
                        "readOnly": True,
                    }
                ],
                "kubeadmConfigPatches": [
                    _yaml_document(
                        {
                            "apiVersion": kubeadm_api_version(spec),
                            "kind": "JoinConfiguration",
                            "patches": {"directory": PATCHES_MOUNT},
                        }
                    )
                ],
            }
        )
    config: dict[str, Any] = {
        "kind": "Cluster",
        "apiVersion": KIND_API_VERSION,
        "name": spec.name,
        "networking": {"apiServerAddress": LOOPBACK},
        "nodes": nodes,
    }
    if spec.feature_gates:
        # kind passes these to every component: the apiserver must accept the
        # fields they guard, and the kubelets act on them.
        config["featureGates"] = spec.feature_gates
    if cgroup_v1:
        config["kubeadmConfigPatches"] = [
            _yaml_document(
                {
                    "apiVersion": KUBELET_CONFIG_API_VERSION,
                    "kind": "KubeletConfiguration",
                    "failCgroupV1": False,
                }
            )
        ]
    return config


def render_kind_config_yaml(
    spec: ClusterSpec,
    patches_root: PurePath,
    cgroup_v1: bool = False,
    *,
    from_working_directory: bool = False,
) -> str:
    """render_kind_config as YAML text for ``kind create cluster --config``."""
    config = render_kind_config(
        spec, patches_root, cgroup_v1=cgroup_v1, from_working_directory=from_working_directory
    )
    return _yaml_document(config)


def worker_patch_yaml(worker: Worker) -> str:
    """One worker's kubelet patch as the file kubeadm reads from its patches directory."""
    return _yaml_document(worker.profile.patch())


def write_worker_patches(spec: ClusterSpec, patches_root: Path) -> list[Path]:
    """Write each worker's kubelet patch where its mount expects it; return the files.

    The files are rewritten every time so a stale patch from an older spec can
    never be picked up.
    """
    written = []
    for worker in spec.workers:
        directory = Path(worker_patch_dir(patches_root, worker.name))
        directory.mkdir(parents=True, exist_ok=True)
        target = directory / PATCH_FILE_NAME
        target.write_text(worker_patch_yaml(worker), encoding="utf-8")
        written.append(target)
    return written


class _BlockDumper(yaml.SafeDumper):
    """SafeDumper writing multi-line strings (the embedded kubeadm patches) as
    literal blocks, so the rendered config reads like the kind docs."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _represent_str)


def _yaml_document(value: dict[str, Any]) -> str:
    # Keep key order as built: it reads like the kind and kubeadm docs.
    return yaml.dump(value, Dumper=_BlockDumper, sort_keys=False, default_flow_style=False)
