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
# Two kind clusters, a max-ignored kubelet mutant in one 2 s node, every group's first
# round at once and the doubted group's re-run (tests/e2e/test_fleet.py).
MUTANT_FLEET = "v1.35.8-fleet-mutant-outlier"


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

    def check(context: str, nodes: tuple[str, ...], stop: threading.Event) -> Round:
        del stop
        key = groups[(context, nodes[0])]
        n = taken.get(key, 0)
        taken[key] = n + 1
        trace = Trace.load(rounds[key][n])
        changes = Changes(curves=dict(told)) if told and n > 0 else None
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


def test_a_rerun_that_fails_too_makes_the_outlier_its_groups_failure(
    kept: Mapping[str, Any], tmp_path: Path
) -> None:
    """The smallest wrong behaviour the outlier rule must not hide: the re-run's node off
    its curve too (a neighbour curve told to its check)."""
    live = kept["live"]
    doubted = next(g for g in live.groups if g.verdict == "outlier")
    if len(doubted.rounds) < 2:
        pytest.fail(f"{MUTANT_FLEET}: the outlier's group was never re-run: keep a fleet that was")
    plan = plan_fleet(nodes_from_document(kept["nodes"]), live.per_group)
    rerun = doubted.rounds[1].nodes
    # A cap 2.5 times the node's: its restarts at its own cap come too early for it.
    cap_s = doubted.max_s * 2.5
    told = {node: neighbour_curve(cap_s) for node in rerun}
    check = _replaying(kept["rounds"], _group_of_each_node(plan), tmp_path, told)
    (run,) = [
        r
        for r in run_fleet(plan, check, threading.Event(), at_once=dict.fromkeys(plan.clusters, 1))
        if (r.group.cluster, r.group.name) == (doubted.cluster, doubted.group)
    ]
    assert run.judgement.verdict == "failed", run.judgement.words
    assert run.judgement.outliers == ()
