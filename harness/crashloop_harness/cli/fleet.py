"""`crashloop fleet`: every node pool of every cluster of a kubeconfig, grouped by its curve."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from kubernetes import client
from rich.table import Table
from rich.text import Text

from crashloop_harness.cli import common
from crashloop_harness.cli.codes import MEASURING_CODES
from crashloop_harness.cli.measure import profile_option
from crashloop_harness.cli.out import SCREEN, emit
from crashloop_harness.cluster.kubeconfig import kubectl_default_kubeconfig, remote_api
from crashloop_harness.core.errors import HarnessError, first_line
from crashloop_harness.core.exitcodes import INTERRUPTED
from crashloop_harness.fleet.collect import collect, collected_exit
from crashloop_harness.fleet.expect import (
    Expectation,
    ExpectationSummary,
    judge_expectations,
    parse_expectation,
)
from crashloop_harness.fleet.keep import keep_fleet_results
from crashloop_harness.fleet.plan import DEFAULT_PER_GROUP, FleetPlan, Group, plan_fleet
from crashloop_harness.fleet.read import FleetRead, chosen_contexts, read_fleet
from crashloop_harness.fleet.remotecheck import remote_check
from crashloop_harness.fleet.run import FleetResult, check_fleet, refuse_what_cannot_run
from crashloop_harness.fleet.summary import FleetSummary
from crashloop_harness.pods.nightly import NAMESPACE as NIGHTLY_NAMESPACE
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES
from crashloop_harness.substrate.workloadimage import image_tag


def register(commands: common.Commands, parents: common.Parents) -> None:
    del parents
    fleet = common.add_command(commands, "fleet", _cmd_fleet, codes=MEASURING_CODES)
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
    _add_reading_options(fleet)
    profile_option(fleet, "quick")
    _add_checking_options(fleet)
    common.output_option(fleet)


def _add_reading_options(fleet: argparse.ArgumentParser) -> None:
    """What is read, nothing run: the plan alone, or the results clusters kept."""
    fleet.add_argument(
        "--plan",
        action="store_true",
        help="print the plan (groups, their curves, the nodes chosen and why) and stop",
    )
    fleet.add_argument(
        "--collect",
        action="store_true",
        help="run nothing: read the newest result each cluster's in-cluster nightly kept "
        "(`crashloop cronjob`) in --namespace (default crashloop-check), into one answer; "
        "exit 1 when a cluster failed, 4 when one has no answer",
    )


def _add_checking_options(fleet: argparse.ArgumentParser) -> None:
    """How the groups are checked: where, with which image, against what."""
    fleet.add_argument(
        "--namespace",
        help="the prepared namespace of `crashloop rbac` on every cluster, shared by the "
        "fleet's checks (default: each check creates its own and deletes it)",
    )
    fleet.add_argument(
        "--workload-image",
        metavar="REF",
        help="the workload's image as every cluster's nodes can pull it (default: the "
        "harness's local build, present only where it was loaded)",
    )
    fleet.add_argument(
        "--expect",
        action="append",
        default=[],
        metavar="LABEL[=VALUE]:max=D[,initial=D]",
        help="the back-off the nodes one label selects should run (repeatable): a selected "
        "node whose live config gives another is a failure of the expectation, apart from "
        "a kubelet off its own config; one that selects no node is not met",
    )
    fleet.add_argument(
        "--keep-in-cluster",
        action="store_true",
        help="keep fleet.json and junit.xml in a ConfigMap of --namespace on every cluster "
        "checked, and an Event on each of its nodes that did not pass (the in-cluster "
        "nightly's; `crashloop fleet --collect` reads them)",
    )
    fleet.add_argument(
        "--at-once",
        type=common.positive_int,
        metavar="N",
        help="at most N groups of one cluster checked at a time (default: as many as the "
        "API budget allows, from each group's restart rate; docs/existing-clusters.md)",
    )


def _cmd_fleet(args: argparse.Namespace) -> int:
    """check every node pool of every cluster of a kubeconfig, grouped by its curve

    Reads every node of every cluster of one kubeconfig through the API (the
    check's role from `crashloop rbac`): its kubelet's release, its live /configz
    back-off and the gates that change the curve. Nodes are grouped per cluster
    by exactly that, whatever their labels say; a pool whose nodes run different
    curves is said to disagree. Control planes, NotReady and cordoned nodes are
    left out and said. From each group K nodes are chosen, in turn from its zones
    and pools. The plan is printed first; --plan stops there (nothing created).
    Then each cluster is asked whether its user may run the check (a gap refuses
    the fleet, naming the role), and every group's chosen nodes are checked on
    its cluster, every cluster at once and on each as many groups as its API
    budget allows. A node that fails beside sound ones is re-run on K others of
    its group before it is called the outlier. fleet.json, junit.xml and a report
    go to the fleet's run directory. An unreachable context is that cluster's
    error; the others are still checked.
    """
    expected = _refuse_bad_input(args)
    kubeconfig = Path(args.kubeconfig) if args.kubeconfig else kubectl_default_kubeconfig()
    asked = [name.strip() for name in (args.contexts or "").split(",") if name.strip()]
    contexts = chosen_contexts(kubeconfig, asked)
    if args.collect:
        return _collect(kubeconfig, contexts, args.namespace or NIGHTLY_NAMESPACE)
    fleet = read_fleet(kubeconfig, contexts)
    plan = plan_fleet(fleet.nodes, args.per_group)
    expectations = judge_expectations(expected, fleet.nodes)
    plan_json = plan_document(plan, fleet, kubeconfig) | {
        "expectations": [asdict(e) for e in expectations]
    }
    _show(plan, fleet, kubeconfig, expectations)
    if args.plan:
        emit(plan_json)
        return 1 if fleet.unreachable or not all(e.met for e in expectations) else 0
    refuse_what_cannot_run(kubeconfig, plan.clusters, args.namespace)
    check = remote_check(
        kubeconfig,
        namespace=args.namespace,
        workload_image=args.workload_image or image_tag(),
        profile=CHECK_PROFILES[args.profile],
        progress=common.progress,
    )
    result = check_fleet(
        plan,
        fleet,
        check,
        common.progress,
        profile=args.profile,
        plan_json=plan_json,
        at_once=args.at_once,
        expectations=expectations,
    )
    _show_result(result)
    if args.keep_in_cluster:
        _keep_in_clusters(kubeconfig, args.namespace, result)
    emit({"plan": plan_json, **_where(result), "fleet": json.loads(result.summary.to_json())})
    if result.summary.verdict == "interrupted":
        return INTERRUPTED
    return 0 if result.summary.passed else 1


def _collect(kubeconfig: Path, contexts: Sequence[str], namespace: str) -> int:
    runs = collect(kubeconfig, contexts, namespace)
    table = Table("context", "run", "verdict", "kept at", "not passed", "why")
    styles = {"passed": "green", "failed": "red"}
    for run in runs:
        table.add_row(
            run.context,
            run.run_id or "-",
            Text(run.verdict, style=styles.get(run.verdict, "yellow")),
            run.kept_at or "-",
            ", ".join(run.not_passed) or "-",
            run.missing or run.reason or "-",
        )
    SCREEN.tables.print(table)
    emit({"namespace": namespace, "clusters": [asdict(run) for run in runs]})
    return collected_exit(runs)


def _refuse_bad_input(args: argparse.Namespace) -> list[Expectation]:
    """Refused before anything is read: a mistyped expectation, results kept nowhere."""
    expected = [parse_expectation(text) for text in args.expect]
    if args.keep_in_cluster and not args.namespace:
        raise HarnessError(
            "--keep-in-cluster keeps the results in the checks' prepared namespace, and none "
            "was given",
            "add --namespace crashloop-check (the namespace of `crashloop rbac`)",
        )
    return expected


def _keep_in_clusters(kubeconfig: Path, namespace: str, result: FleetResult) -> None:
    """Each reached cluster keeps the fleet's result; a refused write is said, and changes
    neither the fleet's files nor its exit status. The verdict is said again, last."""
    for cluster in result.summary.clusters:
        if cluster.reason.startswith("unreachable"):
            continue
        try:
            api = remote_api(kubeconfig, cluster.cluster)
            name = keep_fleet_results(
                api, namespace, cluster.cluster, result.fleet_dir, result.summary
            )
        except (client.ApiException, HarnessError, OSError) as error:
            SCREEN.tables.print(
                f"not kept in {cluster.cluster}: {first_line(error)}", soft_wrap=True
            )
        else:
            SCREEN.tables.print(f"kept in {cluster.cluster}: configmap {namespace}/{name}")
    # The last line is the verdict's: a log reader (a CronJob's) finds it there.
    SCREEN.tables.print(_verdict_line(result.summary), soft_wrap=True)


def _where(result: FleetResult) -> dict[str, str]:
    return {"fleet_dir": str(result.fleet_dir), "report": str(result.report)}


def _show_result(result: FleetResult) -> None:
    out = SCREEN.tables
    summary = result.summary
    for group in summary.groups:
        style = "green" if group.verdict == "passed" else "red"
        out.print(Text(group.words, style=style), soft_wrap=True)
    for cluster in summary.clusters:
        if not cluster.groups:
            out.print(Text(f"{cluster.cluster}: {cluster.reason}", style="red"), soft_wrap=True)
    out.print(
        f"wall {summary.wall_s:.0f}s, slowest group {summary.slowest_group_s:.0f}s, "
        f"groups one after the other {summary.groups_sum_s:.0f}s",
        soft_wrap=True,
    )
    out.print(_verdict_line(summary), soft_wrap=True)
    out.print(f"results in {result.fleet_dir}; report: {result.report}", soft_wrap=True)


def _verdict_line(summary: FleetSummary) -> str:
    return f"{summary.verdict.upper()}: {summary.reason}"


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
        # Contexts of a cluster another context reaches (same server and CA): read once.
        "aliases": dict(sorted(fleet.aliases.items())),
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


def _show(
    plan: FleetPlan,
    fleet: FleetRead,
    kubeconfig: Path,
    expectations: Sequence[ExpectationSummary] = (),
) -> None:
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
    for alias, context in sorted(fleet.aliases.items()):
        out.print(f"context {alias} reaches {context}'s cluster: read once, as {context}")
    for context, why in sorted(fleet.unreachable.items()):
        out.print(f"error: context {context} unreachable: {why}", style="red", soft_wrap=True)
    for judged in expectations:
        out.print(Text(judged.words, style="green" if judged.met else "red"), soft_wrap=True)
