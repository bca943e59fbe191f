"""The fleet's pool: at most so many groups of a cluster at once, reruns, a stop honoured."""

from __future__ import annotations

import threading
from collections import Counter

from crashloop_harness.fleet.engine import (
    PODS_PER_NODE,
    RESTARTING_RUNS_S,
    STATUS_WRITE_BUDGET_PER_S,
    groups_at_once,
    reads_per_s,
    run_fleet,
    status_writes_per_s,
)
from crashloop_harness.fleet.judge import NodeOutcome, Round
from crashloop_harness.fleet.plan import FleetPlan, plan_fleet
from tests.unit.fleet.factories import DEFAULT, FIVE_S, TWO_S, node


def fleet_plan() -> FleetPlan:
    return plan_fleet(
        [
            *(node(f"a{i}", TWO_S, cluster="one", pool="a") for i in range(5)),
            *(node(f"d{i}", DEFAULT, cluster="one", pool="d") for i in range(2)),
            *(node(f"f{i}", FIVE_S, cluster="two", pool="f") for i in range(2)),
        ]
    )


def test_the_budget_is_the_documented_five_groups_of_three_on_a_2s_curve() -> None:
    plan = fleet_plan()
    two_s = next(g for g in plan.groups if g.curve == TWO_S)
    # 3 nodes, each with a bare container restarting every 2 s + 1.5 s and a runs-5s one
    # every 8.5 s, 3 status writes per restart: 3.63 writes/s (2.57 counting the bare
    # containers alone, as the budget once did).
    assert round(status_writes_per_s(two_s, 3), 2) == 3.63
    assert round(STATUS_WRITE_BUDGET_PER_S, 1) == 18.2
    assert int(STATUS_WRITE_BUDGET_PER_S / status_writes_per_s(two_s, 3)) == 5
    # Never more than a cluster's groups.
    assert groups_at_once(plan) == {"one": 2, "two": 1}
    assert groups_at_once(plan, budget_per_s=1.0) == {"one": 1, "two": 1}


def test_the_budget_counts_every_restarting_container_and_the_reads() -> None:
    assert RESTARTING_RUNS_S == (0.0, 5.0)  # bare, runs-5s
    assert PODS_PER_NODE == 3  # and the pace pod
    # Each node's pace pod log every 5 s and its kubelet's pod list every 20 s, and one
    # Lease list every 2 s.
    assert round(reads_per_s(3), 2) == 1.25


class FakeChecks:
    """Checks that fail the nodes named, counting how many run at once per cluster."""

    def __init__(self, failing: set[str]) -> None:
        self.failing = failing
        self.lock = threading.Lock()
        self.running: Counter[str] = Counter()
        self.most: Counter[str] = Counter()
        self.asked: list[tuple[str, ...]] = []
        self.release = threading.Event()

    def __call__(self, context: str, nodes: tuple[str, ...], stop: threading.Event) -> Round:
        with self.lock:
            self.running[context] += 1
            self.most[context] = max(self.most[context], self.running[context])
            self.asked.append(nodes)
        self.release.wait(timeout=5)
        with self.lock:
            self.running[context] -= 1
        outcomes: dict[str, NodeOutcome] = {
            n: "failed" if n in self.failing else "passed" for n in nodes
        }
        status = "interrupted" if stop.is_set() else "passed"
        return Round(nodes, "r", "runs/r", status, "", outcomes)


def test_an_outlier_is_rerun_on_other_nodes_of_its_group_and_clusters_run_at_once() -> None:
    plan = fleet_plan()
    checks = FakeChecks(failing={"a1"})
    checks.release.set()
    runs = run_fleet(plan, checks, threading.Event(), at_once={"one": 1, "two": 1})
    verdicts = {(r.group.cluster, r.group.name): r.judgement.verdict for r in runs}
    assert verdicts == {("one", "g1"): "outlier", ("one", "g2"): "passed", ("two", "g1"): "passed"}
    two_s = next(r for r in runs if r.judgement.verdict == "outlier")
    assert [round_.nodes for round_ in two_s.rounds] == [("a0", "a1", "a2"), ("a3", "a4")]
    assert checks.most["one"] == 1


def test_a_stop_before_a_group_starts_leaves_it_unstarted_and_said() -> None:
    plan = fleet_plan()
    checks = FakeChecks(failing=set())
    stop = threading.Event()
    stop.set()
    checks.release.set()
    runs = run_fleet(plan, checks, stop, at_once={"one": 1, "two": 1})
    assert checks.asked == []
    assert all(r.judgement.verdict == "error" and "stopped" in r.judgement.words for r in runs)
