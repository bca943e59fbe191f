"""`crashloop fleet`: every node pool of every cluster of a kubeconfig, grouped by its curve."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from rich.text import Text

from crashloop_harness.cli import common
from crashloop_harness.cli.codes import SETUP_CODES
from crashloop_harness.cli.out import SCREEN, emit
from crashloop_harness.cluster.remote import kubectl_default_kubeconfig
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.fleet.plan import DEFAULT_PER_GROUP, FleetPlan, Group, plan_fleet
from crashloop_harness.fleet.read import FleetRead, chosen_contexts, read_fleet


def register(commands: common.Commands, parents: common.Parents) -> None:
    del parents
    fleet = common.add_command(commands, "fleet", _cmd_fleet, codes=SETUP_CODES)
    fleet.add_argument(
        "--kubeconfig",
        metavar="PATH",
        help="the fleet's kubeconfig, a colon-separated list merged as kubectl merges it "
        "(default: kubectl's own, $KUBECONFIG else ~/.kube/config)",
    )
    fleet.add_argument(
        "--contexts",
        metavar="CTX[,CTX...]",
        help="the clusters, by context (default: every context of the kubeconfig)",
    )
    fleet.add_argument(
        "--per-group",
        type=common.positive_int,
        default=DEFAULT_PER_GROUP,
        metavar="K",
        help=f"nodes checked in each group (default {DEFAULT_PER_GROUP}), spread over its zones "
        "and pools",
    )
    fleet.add_argument(
        "--plan",
        action="store_true",
        help="print the plan (groups, their curves, the nodes chosen and why) and stop",
    )
    common.output_option(fleet)


def _cmd_fleet(args: argparse.Namespace) -> int:
    """group a fleet's nodes by the curve their kubelets really run, and plan a check of each

    Reads every node of every cluster of one kubeconfig through the API (the
    check's read-only role from `crashloop rbac`: nodes get/list, nodes/proxy get):
    its kubelet's release, its live /configz back-off and the gates that change
    the curve. Nodes are grouped per cluster by exactly that, whatever their
    labels say; a pool whose nodes run different curves is said to disagree.
    Control planes, NotReady and cordoned nodes are left out and said. From each
    group K nodes are chosen, in turn from its zones and pools. --plan prints the
    plan and the `crashloop check` that checks each group's chosen nodes.
    Nothing is created. An unreachable context is that cluster's error; the
    others are still planned.
    """
    kubeconfig = Path(args.kubeconfig) if args.kubeconfig else kubectl_default_kubeconfig()
    asked = [name.strip() for name in (args.contexts or "").split(",") if name.strip()]
    contexts = chosen_contexts(kubeconfig, asked)
    fleet = read_fleet(kubeconfig, contexts)
    plan = plan_fleet(fleet.nodes, args.per_group)
    emit(plan_document(plan, fleet, kubeconfig))
    _show(plan, fleet, kubeconfig)
    if not args.plan:
        raise HarnessError(
            "running the fleet's checks from one command is not built yet: the plan above is "
            "what they would check",
            "check each group with the `crashloop check` line the plan prints under it, or "
            "add --plan to stop at the plan",
        )
    return 1 if fleet.unreachable else 0


def check_command(group: Group, kubeconfig: Path) -> str:
    """The existing-cluster check of one group's chosen nodes, as a user would type it."""
    where = "" if os.environ.get("KUBECONFIG") == str(kubeconfig) else f" {kubeconfig}"
    return (
        f"crashloop check --kubeconfig{where} --context {group.cluster} "
        f"--nodes {','.join(group.chosen)}"
    )


def plan_document(plan: FleetPlan, fleet: FleetRead, kubeconfig: Path) -> dict[str, Any]:
    return {
        "clusters": [*plan.clusters, *sorted(fleet.unreachable)],
        "unreachable": dict(sorted(fleet.unreachable.items())),
        "per_group": plan.per_group,
        "groups": [
            {
                "cluster": g.cluster,
                "group": g.name,
                "curve": g.key.describe(),
                "kubelet_version": g.key.kubelet_version,
                "initial_s": g.key.initial_s,
                "max_s": g.key.maximum_s,
                "gates": dict(g.key.gates),
                "pools": list(g.pools),
                "nodes": [n.node for n in g.nodes],
                "chosen": list(g.chosen),
                "why": g.why_chosen,
                "check": check_command(g, kubeconfig),
            }
            for g in plan.groups
        ],
        "skipped": [{"cluster": c, "node": n, "why": why} for c, n, why in plan.skipped],
        "split_pools": [
            {"cluster": c, "pool": pool, "groups": list(groups)}
            for c, pool, groups in plan.split_pools
        ],
    }


def _show(plan: FleetPlan, fleet: FleetRead, kubeconfig: Path) -> None:
    out = SCREEN.tables
    clusters = len(plan.clusters) + len(fleet.unreachable)
    out.print(f"{len(plan.groups)} groups in {clusters} clusters", style="bold")
    for group in plan.groups:
        out.print(
            Text(f"{group.cluster} {group.name}: {group.key.describe()}", style="bold"),
            soft_wrap=True,
        )
        out.print(f"  pools {', '.join(group.pools)}; {len(group.nodes)} nodes", soft_wrap=True)
        out.print(f"  chosen {', '.join(group.chosen)} ({group.why_chosen})", soft_wrap=True)
        out.print(f"  {check_command(group, kubeconfig)}", soft_wrap=True, markup=False)
    for cluster, pool, groups in plan.split_pools:
        out.print(
            f"pool {pool} of {cluster} disagrees: its nodes are in {', '.join(groups)}",
            style="yellow",
            soft_wrap=True,
        )
    for cluster, node, why in plan.skipped:
        out.print(f"skipped {cluster} {node}: {why}", soft_wrap=True)
    for context, why in sorted(fleet.unreachable.items()):
        out.print(f"error: context {context} unreachable: {why}", style="red", soft_wrap=True)
