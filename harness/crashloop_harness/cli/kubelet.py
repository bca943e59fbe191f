"""`crashloop kubelet`: run a patched, source-built or given kubelet on chosen workers,
or put the image's own back; without an action, show what every node runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.table import Table

from crashloop_harness.cli import common
from crashloop_harness.cli.codes import SETUP_CODES
from crashloop_harness.cli.out import SCREEN, emit
from crashloop_harness.cluster import lifecycle
from crashloop_harness.cluster.kube import node_statuses, worker_nodes
from crashloop_harness.cluster.kubeletput import put_image_kubelet_back, put_kubelet
from crashloop_harness.cluster.kubeletswap import NodeKubelet, read_node_kubelet
from crashloop_harness.cluster.profiles import ClusterSpec
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.substrate.kubeletbuild import (
    Kubelet,
    kubelet_from_binary,
    kubelet_from_patch,
    kubelet_from_source,
)


def register(commands: common.Commands, parents: common.Parents) -> None:
    kubelet = common.add_command(
        commands, "kubelet", _cmd_kubelet, codes=SETUP_CODES, parents=(parents.spec_and_image,)
    )
    kubelet.add_argument(
        "--nodes",
        metavar="WORKER[,WORKER...]",
        help="the workers to swap, by name (e.g. fast); required with an action",
    )
    what = kubelet.add_mutually_exclusive_group()
    what.add_argument("--patch", type=Path, metavar="FILE", help="a diff against the release")
    what.add_argument("--source", type=Path, metavar="DIR", help="a Kubernetes checkout")
    what.add_argument("--binary", type=Path, metavar="BIN", help="a built kubelet binary")
    what.add_argument(
        "--restore", action="store_true", help="put the node image's own kubelet back"
    )
    common.output_option(kubelet)


def chosen_workers(spec: ClusterSpec, names: str | None) -> list[str]:
    """The workers --nodes names, refused before anything is built when one is unknown."""
    wanted = [name.strip() for name in (names or "").split(",") if name.strip()]
    if not wanted:
        raise HarnessError("--nodes names no worker", "name the workers to swap, e.g. --nodes fast")
    known = {worker.name for worker in spec.workers}
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise HarnessError(
            f"--nodes {', '.join(unknown)}: cluster {spec.name} has no such worker",
            f"choose among {', '.join(sorted(known))}",
        )
    return wanted


def _kubelet_to_put(args: argparse.Namespace, spec: ClusterSpec) -> Kubelet | None:
    # A step line first: a build from a tree can take minutes, and a pipe shows nothing else.
    if args.patch is not None:
        common.progress(
            f"kubelet {spec.kubernetes.version} + {args.patch}: building (cached by the patch)"
        )
        return kubelet_from_patch(args.patch, spec.kubernetes)
    if args.source is not None:
        common.progress(f"kubelet from the tree {args.source}: building")
        return kubelet_from_source(args.source, spec.kubernetes)
    if args.binary is not None:
        common.progress(f"kubelet {args.binary}: checking it")
        return kubelet_from_binary(args.binary, spec.kubernetes)
    return None


def _cmd_kubelet(args: argparse.Namespace) -> int:
    """run a patched, source-built or given kubelet on chosen workers (or restore)

    Swap the kubelet of the named workers: --patch builds the cluster's pinned release with a patch
    applied (only the kubelet, cached by the patch's text), --source builds a Kubernetes checkout of
    the same minor, --binary takes a built one. Each node gets the binary, restarts its kubelet, and
    must come back Ready on its profile's config, running the checksum put there. Every later run's
    summary records each node's kubelet; a reused cluster says which nodes run a swapped one.
    --restore puts the image's own kubelet back. Bad input (a patch that does not apply, a tree that
    is not Kubernetes, another release) is refused before anything is built. Without an action: what
    each node runs.
    """
    spec = common.spec_of(args)
    acting = args.restore or any(x is not None for x in (args.patch, args.source, args.binary))
    workers = chosen_workers(spec, args.nodes) if acting else []
    if args.nodes and not acting:
        raise HarnessError(
            "--nodes without an action", "add --patch, --source, --binary or --restore"
        )
    kubelet = _kubelet_to_put(args, spec)  # built (or refused) before the cluster is touched
    cluster = lifecycle.up(spec, common.progress, image=args.image)
    by_worker = worker_nodes(cluster.api())
    nodes = [by_worker[name] for name in workers]
    for node in nodes:
        if kubelet is not None:
            put_kubelet(cluster, node, kubelet, common.progress)
        else:
            put_image_kubelet_back(cluster, node, common.progress)
    running = [read_node_kubelet(status.name) for status in node_statuses(cluster.api())]
    SCREEN.tables.print(kubelet_table(running))
    emit({"cluster": spec.name, "kubelets": [vars(k) for k in running]})
    return 0


def kubelet_table(kubelets: list[NodeKubelet]) -> Table:
    table = Table(title="kubelets")
    for column in ("node", "version", "sha256", "runs"):
        table.add_column(column)
    for kubelet in kubelets:
        table.add_row(
            kubelet.node,
            kubelet.version,
            kubelet.sha256[:12],
            kubelet.swapped or "the image's own",
        )
    return table
