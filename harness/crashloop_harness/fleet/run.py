"""A whole fleet, from its plan to its result: asked first, then checked, then written.

Before anything is created, every planned cluster is asked whether the
kubeconfig's user may do what a check does (:mod:`crashloop_harness.fleet.access`)
and whether the shared namespace is idle; a refusal there stops the fleet
with the fix. Then every group is checked (:mod:`crashloop_harness.fleet.engine`),
and the fleet's directory gets fleet.json, junit.xml and the report, each
group's checks keeping their own run directories beside it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from crashloop_harness.cluster.kubeconfig import remote_api
from crashloop_harness.cluster.kubeletapi import direct_route
from crashloop_harness.cluster.runnamespace import refuse_busy_namespace
from crashloop_harness.core.atomicfile import write_atomically
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.progress import Progress
from crashloop_harness.fleet.access import missing_permissions, missing_words, needed_permissions
from crashloop_harness.fleet.engine import CheckNodes, GroupRun, groups_at_once, run_fleet
from crashloop_harness.fleet.expect import ExpectationSummary
from crashloop_harness.fleet.junitfile import write_fleet_junit
from crashloop_harness.fleet.plan import FleetPlan
from crashloop_harness.fleet.read import FleetRead, nodes_document
from crashloop_harness.fleet.report import write_fleet_report
from crashloop_harness.fleet.summary import FleetSummary, fleet_summary, write_fleet_summary
from crashloop_harness.runs.lifecycle import new_run_dir, point_latest_at

NODES_FILE: Final = "nodes.json"
PLAN_FILE: Final = "plan.json"


@dataclass(frozen=True)
class FleetResult:
    summary: FleetSummary
    fleet_dir: Path
    report: Path


def refuse_what_cannot_run(
    kubeconfig: Path, clusters: Sequence[str], namespace: str | None
) -> None:
    """Every planned cluster lets the check do its work and, with ``namespace``, has it idle;
    else HarnessError naming every cluster's gap and the role that fills it."""
    gaps: list[str] = []
    for context in clusters:
        api = remote_api(kubeconfig, context)
        # A fleet in a pod of this cluster (the nightly's) reads its kubelets directly.
        needed = needed_permissions(namespace, direct=direct_route(api) is not None)
        missing = missing_permissions(api, needed)
        if missing:
            gaps.append(missing_words(context, missing))
    if gaps:
        raise HarnessError(
            "; ".join(gaps),
            "apply the check's roles on each such cluster (`crashloop rbac | kubectl apply -f -` "
            "as its admin) and use the ServiceAccount's kubeconfig",
        )
    if namespace is not None:
        for context in clusters:
            refuse_busy_namespace(remote_api(kubeconfig, context), namespace)


def check_fleet(
    plan: FleetPlan,
    read: FleetRead,
    check: CheckNodes,
    progress: Progress,
    *,
    profile: str,
    plan_json: Mapping[str, Any],
    at_once: int | None = None,
    stop: threading.Event | None = None,
    expectations: Sequence[ExpectationSummary] = (),
) -> FleetResult:
    """Every group of ``plan`` checked with ``check``; the fleet's outputs written.

    What was read of the nodes (nodes.json) and the plan (plan.json) are written
    first, before any check: a fleet cut short still says what it meant to check.
    """
    stop = stop or threading.Event()
    fleet_id, fleet_dir = new_run_dir("fleet")
    write_atomically(fleet_dir / NODES_FILE, _json(nodes_document(read.nodes)))
    write_atomically(fleet_dir / PLAN_FILE, _json(plan_json))
    bound = groups_at_once(plan)
    if at_once is not None:
        bound = {cluster: min(at_once, n_groups(plan, cluster)) for cluster in bound}
    progress(
        f"fleet {fleet_id}: {len(plan.groups)} groups in {len(plan.clusters)} clusters, "
        + ", ".join(f"{c} {n} at once" for c, n in sorted(bound.items()))
    )
    started_at, started = datetime.now(UTC), time.monotonic()

    def said(run: GroupRun) -> None:
        progress(run.judgement.words)

    runs = run_fleet(plan, check, stop, at_once=bound, on_group=said)
    summary = fleet_summary(
        fleet_id=fleet_id,
        plan=plan,
        runs=runs,
        unreachable=read.unreachable,
        reached={*read.reached, *(node.cluster for node in read.nodes)},
        at_once=bound,
        profile=profile,
        started_at=started_at.isoformat(),
        finished_at=datetime.now(UTC).isoformat(),
        wall_s=time.monotonic() - started,
        interrupted=stop.is_set() and any(not r.rounds or _cut(r) for r in runs),
        expectations=expectations,
    )
    write_fleet_summary(fleet_dir, summary)
    write_fleet_junit(fleet_dir, summary)
    report = write_fleet_report(fleet_dir, summary)
    point_latest_at(fleet_dir)
    return FleetResult(summary, fleet_dir, report)


def _json(document: object) -> bytes:
    return (json.dumps(document, indent=2) + "\n").encode("utf-8")


def n_groups(plan: FleetPlan, cluster: str) -> int:
    return sum(1 for g in plan.groups if g.cluster == cluster)


def _cut(run: GroupRun) -> bool:
    return any(r.status == "interrupted" for r in run.rounds)
