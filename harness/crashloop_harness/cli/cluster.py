"""`crashloop up | status | down | config | kubeconfig | rbac | cronjob | manifests`: the
cluster, what it applies, its nightly and its workloads as YAML."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Final

import yaml
from rich.table import Table

from crashloop_harness.cli import common
from crashloop_harness.cli.codes import KUBECONFIG_CODES, SETUP_CODES, STATUS_CODES
from crashloop_harness.cli.nightly import add_cronjob
from crashloop_harness.cli.out import SCREEN, answer, emit
from crashloop_harness.cluster import lifecycle, liveconfig
from crashloop_harness.cluster.kindconfig import render_kind_config, render_kind_config_yaml
from crashloop_harness.cluster.kube import api_client, node_statuses, unready_system_pods
from crashloop_harness.cluster.profiles import ClusterSpec
from crashloop_harness.cluster.rbac import rbac_yaml
from crashloop_harness.core.conventions import PROFILE_LABEL
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.paths import state_dir
from crashloop_harness.outputs.clusterfiles import CLUSTERS_FOLDER, write_cluster_files
from crashloop_harness.outputs.render import config_table
from crashloop_harness.outputs.workloads import write_manifests
from crashloop_harness.substrate.engine import INSTALL_FIX, engine_answers

# `crashloop manifests` writes beside the user, as kubectl users expect.
REPLAY_DIR: Final = "workloads"


def register(commands: common.Commands, parents: common.Parents) -> None:
    _add_lifecycle(commands, parents)
    _add_printers(commands, parents)


def _add_lifecycle(commands: common.Commands, parents: common.Parents) -> None:
    up = common.add_command(
        commands, "up", _cmd_up, codes=SETUP_CODES, parents=(parents.spec_and_image,)
    )
    up.add_argument("--recreate", action="store_true", help="delete an existing cluster first")
    common.output_option(up)
    status = common.add_command(
        commands, "status", _cmd_status, codes=STATUS_CODES, parents=(parents.spec,)
    )
    common.output_option(status)
    down = common.add_command(
        commands, "down", _cmd_down, codes=SETUP_CODES, parents=(parents.spec,)
    )
    common.output_option(down)


def _add_printers(commands: common.Commands, parents: common.Parents) -> None:
    config = common.add_command(
        commands, "config", _cmd_config, codes=SETUP_CODES, parents=(parents.spec,)
    )
    common.output_option(config)
    kubeconfig = common.add_command(
        commands, "kubeconfig", _cmd_kubeconfig, codes=KUBECONFIG_CODES, parents=(parents.spec,)
    )
    common.output_option(kubeconfig)
    rbac = common.add_command(commands, "rbac", _cmd_rbac, codes=SETUP_CODES)
    rbac.add_argument(
        "--in-cluster",
        action="store_true",
        help="only what a check inside the cluster needs (it reads each kubelet directly): "
        "no nodes/proxy",
    )
    add_cronjob(commands)
    manifests = common.add_command(
        commands, "manifests", _cmd_manifests, codes=SETUP_CODES, parents=(parents.spec,)
    )
    manifests.add_argument(
        "--output-dir", default=REPLAY_DIR, help=f"where to write them (default ./{REPLAY_DIR})"
    )
    common.output_option(manifests)
    manifests.add_argument(
        "--clusters-dir",
        metavar="DIR",
        help="also write each built-in cluster as a kind config and its workers' kubelet "
        f"patches there (the checkout's ./{CLUSTERS_FOLDER}), to create by hand with kind",
    )


def _cmd_up(args: argparse.Namespace) -> int:
    """create or reuse the cluster and wait until it is Ready

    Create the cluster of a spec (a control plane, one worker per kubelet profile), or reuse a
    running one made from the same spec; repair one whose containers stopped. Waits until every node
    is Ready and checks each kubelet's live config.
    """
    spec = common.spec_of(args)
    up = lifecycle.up(spec, common.progress, image=args.image, recreate=args.recreate)
    common.progress(f"cluster {up.name} ready; KUBECONFIG={up.kubeconfig}")
    emit(print_status(up.kubeconfig, spec))
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    """show the cluster's nodes and system pods

    Show the cluster's nodes, its system pods and each kubelet's live backoff config (from /configz)
    against its profile.
    """
    spec = common.spec_of(args)
    if shutil.which("docker") is None:
        raise HarnessError(
            "the docker CLI is not installed, so no cluster can be asked", INSTALL_FIX
        )
    if not engine_answers():
        raise HarnessError(
            "the docker engine is not running, so no cluster is either",
            "start it with `crashloop engine`, or bring the cluster back with `crashloop up`",
        )
    kubeconfig = lifecycle.kubeconfig_path(spec.name)
    if not kubeconfig.exists():
        raise HarnessError(
            f"no cluster {spec.name} is known here", common.no_cluster_hint(spec, args)
        )
    emit(print_status(kubeconfig, spec))
    return 0


def _cmd_down(args: argparse.Namespace) -> int:
    """delete the cluster

    Delete the cluster.
    """
    name = common.spec_of(args).name
    lifecycle.delete(name, common.progress)
    emit({"cluster": name, "deleted": True})
    return 0


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


def config_document(spec: ClusterSpec, *, cgroup_v1: bool) -> dict[str, object]:
    """What config_text prints, as one document: the kind config and each worker's patch."""
    patches_root = (state_dir() / "patches" / spec.name).resolve()
    return {
        "cluster": spec.name,
        "kubernetes": spec.kubernetes.version,
        "kind_config": render_kind_config(spec, patches_root, cgroup_v1=cgroup_v1),
        "workers": [
            {
                "worker": worker.name,
                "profile": worker.profile.name,
                "patch": worker.profile.patch(),
                "expected_delays_s": [d.total_seconds() for d in worker.curve.delays(8)],
            }
            for worker in spec.workers
        ],
    }


def _cmd_config(args: argparse.Namespace) -> int:
    """print the kind config and each worker's kubelet patch (creates nothing)

    Print what the harness applies, without creating anything: the kind cluster config and each
    worker's KubeletConfiguration patch, the recipe to copy to your own nodes.
    """
    spec = common.spec_of(args)
    cgroup_v1 = lifecycle.host_is_cgroup_v1()
    if SCREEN.document:
        emit(config_document(spec, cgroup_v1=cgroup_v1))
    else:
        sys.stdout.write(config_text(spec, cgroup_v1=cgroup_v1))
    return 0


def _cmd_kubeconfig(args: argparse.Namespace) -> int:
    """print the path of the cluster's kubeconfig

    Print the path of the cluster's kubeconfig, for `export KUBECONFIG=$(crashloop kubeconfig)` and
    a second pane with kubectl.
    """
    spec = common.spec_of(args)
    path = lifecycle.kubeconfig_path(spec.name)
    if not path.is_file():
        raise HarnessError(
            f"no kubeconfig for cluster {spec.name} at {path}", common.no_cluster_hint(spec, args)
        )
    answer({"cluster": spec.name, "kubeconfig": str(path)}, str(path))
    return 0


def _cmd_rbac(args: argparse.Namespace) -> int:
    """print the least-privilege role for checking an existing cluster (YAML)

    Print the namespace, ServiceAccount and roles `crashloop check --kubeconfig` needs on an
    existing cluster: nodes and their kubelets' /configz, /metrics and /pods read, pods in
    its own namespace; nothing cluster-wide that writes. From outside the cluster the
    kubelets are read through the API server's node proxy (nodes/proxy, the whole kubelet
    API); with --in-cluster only what a check inside it needs, which reads each kubelet
    directly. Apply it as an admin.
    """
    sys.stdout.write(rbac_yaml(node_proxy=not args.in_cluster))
    return 0


def _cmd_manifests(args: argparse.Namespace) -> int:
    """write the talk's workloads as YAML to replay by hand with kubectl

    Write the talk's workloads as YAML, generated from the code the harness deploys, to replay by
    hand with kubectl.
    """
    spec = common.spec_of(args)
    written = write_manifests(Path(args.output_dir), [worker.name for worker in spec.workers])
    if args.clusters_dir:
        written += write_cluster_files(Path(args.clusters_dir))
    for path in written:
        SCREEN.tables.print(str(path))
    emit({"written": [str(path) for path in written]})
    return 0


def print_status(kubeconfig: Path, spec: ClusterSpec) -> dict[str, object]:
    """Nodes, system pods and each kubelet's live backoff config; fails on a mismatch.

    Returns the same as a document for ``--output json``.
    """
    api = api_client(kubeconfig)
    table = Table(title="nodes")
    for column in ("node", "ready", "kubelet", "profile"):
        table.add_column(column)
    statuses = node_statuses(api)
    for status in statuses:
        table.add_row(
            status.name,
            "Ready" if status.ready else "NotReady",
            status.kubelet_version,
            status.labels.get(PROFILE_LABEL, "-"),
        )
    SCREEN.tables.print(table)
    waiting = unready_system_pods(api)
    SCREEN.tables.print(
        "kube-system: all pods Running and Ready"
        if not waiting
        else f"kube-system waiting: {waiting}"
    )
    rows = liveconfig.live_config_rows(api, spec)
    SCREEN.tables.print(config_table(rows))
    document: dict[str, object] = {
        "cluster": spec.name,
        "kubeconfig": str(kubeconfig),
        "nodes": [
            {
                "name": status.name,
                "ready": status.ready,
                "kubelet": status.kubelet_version,
                "profile": status.labels.get(PROFILE_LABEL),
            }
            for status in statuses
        ],
        "system_pods_waiting": waiting,
        "live_configs": [
            {
                "node": row.node,
                "worker": row.worker,
                "profile": row.profile,
                "kubelet": row.kubelet_version,
                "max_container_restart_period": row.max_container_restart_period,
                "feature_gates": row.feature_gates,
                "expected_delays_s": [d.total_seconds() for d in row.curve.delays(8)],
                "mismatches": list(row.mismatches),
            }
            for row in rows
        ],
    }
    liveconfig.check_live_configs(rows)
    return document
