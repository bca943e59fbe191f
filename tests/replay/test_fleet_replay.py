"""A kept fleet replayed: its nodes planned again, each round's check replayed on the real
code, the groups judged again by the fleet's own engine.

tests/data/fleet/<name>/ holds what the live fleet read of its nodes, its plan
and its result, and which kept trace each round of each group is
(scripts/keep-fleet.py). The replay plans from the nodes with
:func:`~crashloop_harness.fleet.plan.plan_fleet`, runs
:func:`~crashloop_harness.fleet.engine.run_fleet` with a check that replays the
round's trace through the real recorder and verdict
(:func:`tests.replay.driver.replay_check`), and must reach the live fleet's
verdicts; a neighbour curve told to a re-run's check must turn an outlier
into its group's failure.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from crashloop_harness.cluster.remote import RemoteCluster
from crashloop_harness.fleet.engine import CheckNodes, run_fleet
from crashloop_harness.fleet.judge import Round, round_of
from crashloop_harness.fleet.plan import FleetPlan, plan_fleet
from crashloop_harness.fleet.read import nodes_from_document
from crashloop_harness.fleet.summary import read_fleet_summary
from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.runs.check import summary_of
from tests.replay.driver import Changes, Trace, replay_check
from tests.unit.factories import neighbour_curve

FLEETS = Path(__file__).parents[1] / "data" / "fleet"
# Two kind clusters, a max-ignored kubelet mutant in one 2 s node, every group at once
# (tests/e2e/test_fleet.py): the mutant's node the outlier, every other group passed.
MUTANT_FLEET = "v1.35.8-fleet-mutant-outlier"
# The same with one node per group: the mutant's node re-run on its pool's other node;
# cluster two's API server stopped mid-run (its rounds replay nothing: cluster one only).
RERUN_FLEET = "v1.35.8-fleet-api-stopped"
RERUN_CLUSTER = "fleet-one"


def _kept(name: str) -> Mapping[str, Any]:
    folder = FLEETS / name
    return {
        "nodes": json.loads((folder / "nodes.json").read_text()),
        "rounds": json.loads((folder / "rounds.json").read_text()),
        "live": read_fleet_summary(folder / "fleet.json"),
    }


def _replaying(
    rounds: Mapping[str, list[str]],
    groups: Mapping[tuple[str, str], str],
    tmp_path: Path,
    told: Mapping[str, BackoffCurve] | None = None,
) -> CheckNodes:
    """A check that replays the kept trace of the round that asked for these nodes."""
    taken: dict[str, int] = {}
    # The engine checks the clusters at once; a frozen clock is the whole process's, so
    # the replays take turns.
    one_at_a_time = threading.Lock()

    def check(context: str, nodes: tuple[str, ...], stop: threading.Event) -> Round:
        del stop
        key = groups[(context, nodes[0])]
        n = taken.get(key, 0)
        taken[key] = n + 1
        trace = Trace.load(rounds[key][n])
        changes = Changes(curves=dict(told)) if told and n > 0 else None
        with one_at_a_time:
            result = replay_check(trace, tmp_path / f"{key.replace('/', '-')}-r{n + 1}", changes)
        target = RemoteCluster(Path("kubeconfig"), context, nodes, "image", context)
        return round_of(nodes, summary_of(result, target), str(result.run_dir))

    return check


def _group_of_each_node(plan: FleetPlan) -> dict[tuple[str, str], str]:
    """(cluster, node) -> "cluster/group" for every planned node."""
    return {(g.cluster, n.node): f"{g.cluster}/{g.name}" for g in plan.groups for n in g.nodes}


@pytest.fixture(scope="module")
def kept() -> Mapping[str, Any]:
    return _kept(MUTANT_FLEET)


def test_the_kept_fleet_replays_to_its_live_verdicts(
    kept: Mapping[str, Any], tmp_path: Path
) -> None:
    live = kept["live"]
    plan = plan_fleet(nodes_from_document(kept["nodes"]), live.per_group)
    assert [(g.cluster, g.name, g.chosen) for g in plan.groups] == [
        (g.cluster, g.group, g.chosen) for g in live.groups
    ]
    check = _replaying(kept["rounds"], _group_of_each_node(plan), tmp_path)
    runs = run_fleet(plan, check, threading.Event(), at_once=dict.fromkeys(plan.clusters, 1))
    assert {f"{r.group.cluster}/{r.group.name}": r.judgement.verdict for r in runs} == {
        f"{g.cluster}/{g.group}": g.verdict for g in live.groups
    }
    outliers = [node for r in runs for node in r.judgement.outliers]
    assert outliers == [node for g in live.groups for node in g.outliers]
    assert len(outliers) == 1


def _cluster_one(name: str) -> tuple[Mapping[str, Any], FleetPlan]:
    kept = _kept(name)
    nodes = [n for n in nodes_from_document(kept["nodes"]) if n.cluster == RERUN_CLUSTER]
    return kept, plan_fleet(nodes, kept["live"].per_group)


def test_an_outlier_cleared_by_its_rerun_replays_as_the_live_one(tmp_path: Path) -> None:
    kept, plan = _cluster_one(RERUN_FLEET)
    live = {f"{g.cluster}/{g.group}": g for g in kept["live"].groups if g.cluster == RERUN_CLUSTER}
    check = _replaying(kept["rounds"], _group_of_each_node(plan), tmp_path)
    runs = run_fleet(plan, check, threading.Event(), at_once={RERUN_CLUSTER: 1})
    for run in runs:
        key = f"{run.group.cluster}/{run.group.name}"
        assert run.judgement.verdict == live[key].verdict, run.judgement.words
        assert run.judgement.words == live[key].words
    (doubted,) = [r for r in runs if r.judgement.verdict == "outlier"]
    assert len(doubted.rounds) == 2, "the outlier's group was re-run on its other node"


def test_a_rerun_that_fails_too_makes_the_outlier_its_groups_failure(tmp_path: Path) -> None:
    """The smallest wrong behaviour the outlier rule must not hide: the re-run's node off
    its curve too (a curve told to its check whose cap its restarts come too early for)."""
    kept, plan = _cluster_one(RERUN_FLEET)
    doubted = next(g for g in kept["live"].groups if g.verdict == "outlier")
    # A cap 2.5 times the node's: its restarts at its own cap come too early for it.
    told = {node: neighbour_curve(doubted.max_s * 2.5) for node in doubted.rounds[1].nodes}
    check = _replaying(kept["rounds"], _group_of_each_node(plan), tmp_path, told)
    (run,) = [
        r
        for r in run_fleet(plan, check, threading.Event(), at_once={RERUN_CLUSTER: 1})
        if r.group.name == doubted.group
    ]
    assert run.judgement.verdict == "failed", run.judgement.words
    assert run.judgement.outliers == ()
    assert run.judgement.words == f"group {RERUN_CLUSTER}/{doubted.group}: failed (2 of 2 nodes)"
