"""Restart 1 held to its node's pace: a silent wait before it, seen across the node's containers."""

from __future__ import annotations

import pytest

from crashloop_harness.verdict.evidence import evidence_problems
from crashloop_harness.verdict.firstrestart import (
    FIRST_MEDIAN_FROM,
    first_median_bound,
    first_restart_problem,
)
from crashloop_harness.verdict.nodecost import REFERENCE_PACE_S, NodeCost
from crashloop_harness.verdict.slowness import NodeSlowness
from tests.unit.factories import FAST

# Nine quiet nodes' medians ran 0.36-0.94 s (firstrestart's doc): the highest of them.
QUIET_HIGH_S = 0.935


def _node(firsts: tuple[float, ...], *, pace: float = 1.0, paced: bool = True) -> NodeCost:
    return NodeCost(
        node="n",
        start_latencies_s=(0.24,) * 10,
        first_restarts_s=firsts,
        pace_s=(REFERENCE_PACE_S * pace,) * 20 if paced else (),
    )


def test_the_quiet_nodes_restart_1s_pass_and_a_second_s_wait_on_them_does_not() -> None:
    sound = (QUIET_HIGH_S,) * 10
    assert first_restart_problem(_node(sound)) is None
    found = first_restart_problem(_node(tuple(s + 1.0 for s in sound)))
    assert found is not None
    words, numbers = found
    assert numbers["first_median_s"] == pytest.approx(QUIET_HIGH_S + 1.0)
    assert numbers["first_bound_s"] == pytest.approx(first_median_bound(1.0))
    assert "restart 1 late" in words
    assert "on node n" in words


def test_a_slower_node_allows_its_work_more_but_not_its_timer() -> None:
    # At three times the pace the work (reference median 0.182 s) takes three times as
    # long; the relist period does not stretch.
    assert first_median_bound(3.0) - first_median_bound(1.0) == pytest.approx(2 * 0.182)
    slow_sound = (0.5 + 0.182 * 3,) * 10
    assert first_restart_problem(_node(slow_sound, pace=3.0)) is None
    assert first_restart_problem(_node(tuple(s + 1.0 for s in slow_sound), pace=3.0)) is not None


def test_a_node_measured_by_its_own_restarts_or_too_few_of_them_is_not_judged() -> None:
    late = (2.5,) * 10
    # Unpaced: its restart 1s are its measure, so they would excuse themselves.
    assert first_restart_problem(_node(late, paced=False)) is None
    assert first_restart_problem(_node(late[: FIRST_MEDIAN_FROM - 1])) is None
    assert first_restart_problem(_node(late[:FIRST_MEDIAN_FROM])) is not None
    assert first_restart_problem(None) is None


def test_the_worker_fails_first_late_or_errs_when_its_node_is_too_slow() -> None:
    cost = _node((2.5,) * 10)
    problems, errors = evidence_problems(
        FAST, [], {}, confirm_levels=False, saturated=(), cost=cost
    )
    assert [p.code for p in problems] == ["first-late"]
    assert errors == []
    problems, errors = evidence_problems(
        FAST,
        [],
        {},
        confirm_levels=False,
        saturated=(),
        cost=cost,
        node_slow=NodeSlowness(too_slow="node n too slow to judge"),
    )
    assert problems == []
    assert [e.code for e in errors] == ["node-too-slow"]
    assert "But node n too slow to judge" in errors[0].words
