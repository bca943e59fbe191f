"""A node the run measured nothing of (no pace probe answered, no runtime timestamps) is
judged at the reference host's cost: a restart a slow node could make that late is an
error naming the node, never the kubelet's failure; later than that, the kubelet's."""

from __future__ import annotations

import pytest

from crashloop_harness.model.backoff import UNMEASURED
from crashloop_harness.model.durations import NS_PER_S
from crashloop_harness.verdict import Observation, judge_worker
from crashloop_harness.verdict.lateness import busy_host_reach_ns
from crashloop_harness.verdict.nodecost import NodeCost
from tests.unit.factories import FAST, NS, attempts, nominal

NODE = "crashloop-worker"
UNMEASURED_NODE = NodeCost(node=NODE, start_latencies_s=(), first_restarts_s=())
# The fast curve's bound on a waited restart at the reference host's cost: 2 + 1 + 1.5 s.
UPPER_S = 4.5
REACH_S = busy_host_reach_ns(UNMEASURED, first=False) / NS_PER_S


def _late(delay_s: float, cost: NodeCost | None) -> list[tuple[str, bool]]:
    delays = nominal(FAST, 4)
    delays[2] = delay_s
    verdict = judge_worker(attempts(delays), FAST, observation=Observation(cost=cost))
    return [(f.code, f.error) for f in verdict.failures]


def test_a_late_restart_on_an_unmeasured_node_is_an_error_naming_it() -> None:
    assert not UNMEASURED_NODE.measured
    assert pytest.approx(4.5) == REACH_S
    assert _late(UPPER_S + REACH_S - 0.1, UNMEASURED_NODE) == [("node-unmeasured", True)]
    delays = nominal(FAST, 4)
    delays[2] = UPPER_S + 1.0
    verdict = judge_worker(attempts(delays), FAST, observation=Observation(cost=UNMEASURED_NODE))
    assert verdict.in_error
    (error,) = verdict.failures
    assert f"measured nothing of node {NODE}'s pace" in error.words
    assert error.restart == 3


def test_later_than_a_slow_node_could_make_it_is_the_kubelet_s_failure() -> None:
    assert _late(UPPER_S + REACH_S + 0.5, UNMEASURED_NODE) == [("too-late", False)]


def test_a_measured_node_or_none_given_keeps_the_failure() -> None:
    measured = NodeCost(node=NODE, start_latencies_s=(0.05,) * 10, first_restarts_s=(0.9,) * 5)
    assert measured.measured
    assert _late(UPPER_S + 1.0, measured) == [("too-late", False)]
    assert _late(UPPER_S + 1.0, None) == [("too-late", False)]


def test_an_overdue_restart_on_an_unmeasured_node_waits_then_is_an_error_within_reach() -> None:
    records = attempts(nominal(FAST, 4))
    finished = records[-1].finished_at_ns
    assert finished is not None

    def problems(past_s: float, *, final: bool) -> list[tuple[str, bool]]:
        now = finished + round((UPPER_S + past_s) * NS)
        seen = Observation(now_ns=now, cost=UNMEASURED_NODE, final=final)
        return [(f.code, f.error) for f in judge_worker(records, FAST, observation=seen).failures]

    # While the check observes on, nothing is decided: the restart may yet come.
    assert problems(2.0, final=False) == []
    assert problems(2.0, final=True) == [("node-unmeasured", True)]
    # A kubelet that stopped is overdue past anything a slow node accounts for.
    assert problems(REACH_S + 1.0, final=False) == [("overdue", False)]
    assert problems(REACH_S + 1.0, final=True) == [("overdue", False)]
