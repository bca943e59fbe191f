"""What the CLI reads before it runs: specs, an existing cluster; `config`, `kubeconfig`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import shtab
import yaml

from harness.cli.args import build_parser
from harness.cluster import lifecycle
from harness.cluster.kindconfig import render_kind_config_yaml
from harness.cluster.profiles import ClusterSpec, load_cluster_spec
from harness.cluster.remote import RemoteCluster, connect
from harness.core import pins
from harness.core.errors import HarnessError
from harness.core.paths import state_dir
from harness.core.resources import RESOURCES, spec_path
from harness.substrate.nodeselect import check_kubernetes_version
from harness.substrate.workloadimage import image_tag


def spec_of(args: argparse.Namespace) -> ClusterSpec:
    """The cluster spec of --config for the --kubernetes release (refused before anything runs)."""
    return load_cluster_spec(spec_path(args.config), check_kubernetes_version(args.kubernetes))


def existing_cluster(args: argparse.Namespace) -> RemoteCluster:
    """The existing cluster the options name, its nodes chosen and Ready; nothing created."""
    return connect(
        Path(args.kubeconfig),
        context=args.context,
        nodes=[n.strip() for n in (args.nodes or "").split(",") if n.strip()],
        selector=args.node_selector,
        workload_image=args.workload_image or image_tag(),
        namespace=args.namespace,
    )


def config_text(spec: ClusterSpec, *, cgroup_v1: bool) -> str:
    """The kind config, then each worker's KubeletConfiguration patch, as one YAML stream."""
    patches_root = (state_dir() / "patches" / spec.name).resolve()
    documents = [
        f"# kind cluster config for {spec.name} (Kubernetes {spec.kubernetes.version}); each "
        f"worker mounts its patch from {patches_root}/<worker>\n"
        + render_kind_config_yaml(spec, patches_root, cgroup_v1=cgroup_v1)
    ]
    for worker in spec.workers:
        delays = ", ".join(f"{d.total_seconds():g}" for d in worker.curve.delays(8))
        documents.append(
            f"# worker {worker.name}, profile {worker.profile.name}: the kubelet patch "
            f"(KubeletConfiguration fields to merge into your node's kubelet config);\n"
            f"# expected delays before restarts 1-8: {delays} s\n"
            + yaml.safe_dump(worker.profile.patch(), sort_keys=False)
        )
    return "---\n".join(documents)


def cmd_config(args: argparse.Namespace) -> int:
    sys.stdout.write(config_text(spec_of(args), cgroup_v1=lifecycle.host_is_cgroup_v1()))
    return 0


def cmd_kubeconfig(args: argparse.Namespace) -> int:
    spec = spec_of(args)
    path = lifecycle.kubeconfig_path(spec.name)
    if not path.is_file():
        flag = (
            "" if spec.kubernetes == pins.DEFAULT_KUBERNETES else f" --kubernetes {args.kubernetes}"
        )
        raise HarnessError(
            f"no kubeconfig for cluster {spec.name} at {path}", f"run `crashloop up{flag}`"
        )
    print(path)
    return 0


def cmd_rbac(_args: argparse.Namespace) -> int:
    sys.stdout.write((RESOURCES / "rbac" / "crashloop-check.yaml").read_text())
    return 0


def cmd_completion(args: argparse.Namespace) -> int:
    print(shtab.complete(build_parser(), shell=args.shell))
    return 0
