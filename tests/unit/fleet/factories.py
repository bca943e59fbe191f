"""The fleet tests' shared makings: curves, a node as the plan reads it, a judged fleet."""

from __future__ import annotations

from datetime import timedelta

from crashloop_harness.fleet.engine import GroupRun
from crashloop_harness.fleet.judge import NodeOutcome, Round, judge_group
from crashloop_harness.fleet.plan import POOL_LABELS, ZONE_LABEL, NodeFacts, plan_fleet
from crashloop_harness.fleet.summary import FleetSummary, fleet_summary
from crashloop_harness.model.backoff import curve_for
from crashloop_harness.model.kubeletconfig import KubeletBackoffConfig

TWO_S = curve_for(KubeletBackoffConfig(max_container_restart_period=timedelta(seconds=2)))
FIVE_S = curve_for(KubeletBackoffConfig(max_container_restart_period=timedelta(seconds=5)))
DEFAULT = curve_for(KubeletBackoffConfig())
POOL = POOL_LABELS[0]
GATES = {"KubeletCrashLoopBackOffMax": True}


def node(
    name: str,
    curve: object = TWO_S,
    *,
    cluster: str = "one",
    pool: str = "a",
    zone: str = "z1",
    version: str = "v1.35.8",
    ready: bool = True,
    schedulable: bool = True,
    labels: dict[str, str] | None = None,
    unread: str | None = None,
) -> NodeFacts:
    return NodeFacts(
        cluster,
        name,
        version,
        curve,  # type: ignore[arg-type]
        GATES,
        {POOL: pool, ZONE_LABEL: zone, **(labels or {})},
        ready=ready,
        schedulable=schedulable,
        unread=unread,
    )


def a_round(**outcomes: NodeOutcome) -> Round:
    return Round(tuple(outcomes), "r1", "runs/r1", "failed", "", outcomes)


def summary(
    *, unreachable: dict[str, str] | None = None, reached: tuple[str, ...] = ()
) -> FleetSummary:
    plan = plan_fleet(
        [
            node("a1", TWO_S, cluster="one", pool="fast"),
            node("a2", TWO_S, cluster="one", pool="fast"),
            node("d1", DEFAULT, cluster="one", pool="default"),
            node("f1", FIVE_S, cluster="two", pool="five"),
        ]
    )
    rounds = {
        ("one", "g1"): [a_round(a1="passed", a2="failed")],
        ("one", "g2"): [a_round(d1="passed")],
        ("two", "g1"): [a_round(f1="passed")],
    }
    runs = [
        GroupRun(
            g,
            tuple(rounds[(g.cluster, g.name)]),
            judge_group(f"{g.cluster}/{g.name}", rounds[(g.cluster, g.name)]),
            100.0,
        )
        for g in plan.groups
    ]
    return fleet_summary(
        fleet_id="20261206T160000Z-fleet-abcd",
        plan=plan,
        runs=runs,
        unreachable=unreachable or {},
        reached=reached,
        at_once={"one": 2, "two": 1},
        profile="quick",
        started_at="2026-12-06T16:00:00+00:00",
        finished_at="2026-12-06T16:04:00+00:00",
        wall_s=120.0,
        interrupted=False,
    )
