"""Each node's restart cost, measured in the run: the bounds it gives, and what it cannot hide."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest

from crashloop_harness.model.backoff import UNMEASURED
from crashloop_harness.outputs.summary import measured_bounds, summarize_worker
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.verdict import Observation, judge_worker
from crashloop_harness.verdict.nodecost import (
    REFERENCE_FIRST_RESTART_S,
    REFERENCE_PACE_S,
    REFERENCE_START_S,
    NodeCost,
    cost_of,
    node_costs,
)
from crashloop_harness.verdict.samples import median_upper_bound, reference_start_at
from tests.unit.factories import FAST, attempts, expected_reports

NS = 1_000_000_000
# The reference host's own start latency: a node as fast as it.
AT_REFERENCE = REFERENCE_START_S


def _started(records: Sequence[AttemptRecord], latency_s: float) -> list[AttemptRecord]:
    """The records with the runtime's creation ``latency_s`` before each start; the restart
    delays (exit to creation) stay those given."""
    shifted: list[AttemptRecord] = []
    for record in records:
        latency_ns = round(latency_s * NS)
        shifted.append(
            dataclasses.replace(
                record,
                created_at_ns=record.started_at_ns,
                started_at_ns=record.started_at_ns + latency_ns,
                finished_at_ns=(
                    None if record.finished_at_ns is None else record.finished_at_ns + latency_ns
                ),
            )
        )
    # Each attempt's delay counts from the previous finish: shift the timeline so every
    # restart keeps the delay it was given after the longer start.
    out: list[AttemptRecord] = []
    offset = 0
    for record in shifted:
        out.append(
            dataclasses.replace(
                record,
                created_at_ns=(record.created_at_ns or 0) + offset,
                started_at_ns=record.started_at_ns + offset,
                finished_at_ns=(
                    None if record.finished_at_ns is None else record.finished_at_ns + offset
                ),
            )
        )
        offset += round(latency_s * NS)
    return out


def _fast(delays: Sequence[float], latency_s: float) -> list[AttemptRecord]:
    reports = expected_reports(FAST, len(delays))
    return _started(attempts(delays, reported=reports), latency_s)


SOUND_FAST = [0.9] + [2.6] * 20


def test_a_node_as_fast_as_the_reference_is_judged_at_the_sources_terms() -> None:
    cost = cost_of("w", [_fast(SOUND_FAST, AT_REFERENCE)])
    assert cost.slowdown == 1.0
    assert cost.allowance.after_requeue == UNMEASURED.after_requeue
    # Restart 1 is held to the PLEG relist and the restart's cost, not a flat 5 s.
    assert cost.allowance.first_restart.total_seconds() == pytest.approx(2.5)


def test_a_few_slow_starts_read_at_most_a_little_slow() -> None:
    # Two starts at 0.37 s: within what the reference host shows (p95 0.41 s).
    cost = NodeCost(node="w", start_latencies_s=(0.37, 0.37), first_restarts_s=(3.0,))
    assert 1.0 <= cost.runtime_slowdown < 1.15
    # The runtime caps what the node's restarts say: no slower than it shows.
    assert cost.slowdown == cost.runtime_slowdown
    # Fifty such starts are a node half again as slow.
    many = NodeCost(node="w", start_latencies_s=(0.37,) * 50, first_restarts_s=(3.0,))
    assert many.slowdown > 1.4


def test_no_restart_without_back_off_yet_is_the_reference_host_s_cost() -> None:
    cost = NodeCost(node="w", start_latencies_s=(1.0,) * 20, first_restarts_s=())
    assert cost.slowdown == 1.0


def test_a_node_that_restarts_twice_as_slow_gets_bounds_about_twice_as_wide() -> None:
    cost = cost_of("w", [_fast([1.8] + [2.6] * 20, 2 * AT_REFERENCE)])
    # Restart 1 at twice the reference's 0.9 s, capped by the runtime's own ratio (about 2).
    assert 1.8 < cost.slowdown <= 2.0
    assert cost.slowdown == pytest.approx(cost.runtime_slowdown)
    assert cost.allowance.after_requeue.total_seconds() == pytest.approx(1.5 * cost.slowdown)


def test_the_slowdown_reads_the_reference_between_its_percentiles() -> None:
    assert reference_start_at(0.5) == pytest.approx(REFERENCE_START_S)
    assert reference_start_at(0.0) < reference_start_at(0.52) < reference_start_at(1.0)


def test_a_kubelet_adding_a_second_to_every_back_off_cannot_widen_its_bounds() -> None:
    sound = cost_of("w", [_fast(SOUND_FAST, AT_REFERENCE)])
    slower = cost_of("w", [_fast([0.9] + [3.6] * 20, AT_REFERENCE)])
    assert slower.allowance == sound.allowance


def test_a_kubelet_waiting_before_restart_1_cannot_widen_its_bounds_and_fails_it() -> None:
    # Restart 1 after 0.9 s + a silent 2 s wait: it reads as a node 2.9x slower, but the
    # runtime shows it is not, and caps it.
    records = _fast([2.9] + [2.6] * 20, AT_REFERENCE)
    cost = cost_of("w", [records])
    assert cost.first_restarts_s == pytest.approx((2.9,))
    assert cost.runtime_slowdown == 1.0
    assert cost.slowdown == 1.0
    verdict = judge_worker(records, FAST, observation=Observation(cost=cost))
    assert not verdict.passed
    first = verdict.checks[0]
    assert "too late" in first.reason
    assert first.upper_bound_s == pytest.approx(2.5)
    # Without a measure, the flat 5 s let it pass, as it did before the cost was measured.
    assert judge_worker(records, FAST).passed


def test_a_sound_kubelet_on_a_node_twice_as_slow_passes_on_its_measure() -> None:
    # Restart 1 and the runtime twice as slow. Most restarts 0.9 s past the 2 s level, every
    # fifth 3.2 s past: over the reference host's 4.5 s bound, inside its node's.
    records = _fast([1.8] + [2.9, 2.9, 2.9, 2.9, 5.2] * 4, 2 * AT_REFERENCE)
    assert not judge_worker(records, FAST).passed
    cost = cost_of("w", [records])
    verdict = judge_worker(records, FAST, observation=Observation(cost=cost))
    assert verdict.passed, verdict.failures


def test_probes_add_restarts_without_back_off_to_their_node() -> None:
    probe = _fast([3.0], 5 * AT_REFERENCE)
    costs = node_costs(
        {"fast": _fast(SOUND_FAST, 5 * AT_REFERENCE)}, {"fast": "n1"}, {"n1": [probe, probe]}
    )
    assert costs["n1"].first_restarts_s == pytest.approx((0.9, 3.0, 3.0))
    # Three samples: the median's 90 % upper bound is the largest, 3.0 s over the reference's.
    assert costs["n1"].slowdown == pytest.approx(3.0 / REFERENCE_FIRST_RESTART_S)


def test_the_median_is_read_at_its_upper_confidence_bound() -> None:
    ten = [0.1 * i for i in range(1, 11)]
    # Under the true median with 90 % confidence: at least 7 of 10 samples fall below it
    # only 17 % of the time, at least 8 only 5.5 %: the 8th smallest.
    assert median_upper_bound(ten) == pytest.approx(0.8)
    assert median_upper_bound([2.0]) == 2.0


def test_a_node_too_slow_to_judge_is_an_error_naming_it_never_a_failure() -> None:
    records = _fast([4.0] + [9.0] * 20, 5 * AT_REFERENCE)
    cost = cost_of("crashloop-worker", [records])
    assert cost.too_slow
    verdict = judge_worker(records, FAST, observation=Observation(cost=cost))
    assert not verdict.passed
    assert verdict.in_error, verdict.failures
    assert any(
        "node crashloop-worker too slow to judge back-off 2s" in e.words for e in verdict.errors
    )


def test_too_slow_still_fails_a_restart_too_early() -> None:
    records = _fast([4.0] + [9.0] * 10 + [1.0] + [9.0] * 9, 5 * AT_REFERENCE)
    cost = cost_of("w", [records])
    verdict = judge_worker(records, FAST, observation=Observation(cost=cost))
    assert not verdict.in_error
    assert any("too early" in f for f in verdict.messages)


def test_levels_missing_on_a_node_whose_status_writes_fall_behind_are_an_error() -> None:
    records = [
        dataclasses.replace(r, reported_backoff_s=None if r.attempt % 3 else r.reported_backoff_s)
        for r in _fast([1.8] + [2.9] * 20, 2 * AT_REFERENCE)
    ]
    # On the reference host, so few levels is the kubelet's failure.
    assert any(
        "levels unconfirmed" in p.words
        for p in judge_worker(
            records,
            FAST,
            observation=Observation(cost=cost_of("w", [_fast(SOUND_FAST, AT_REFERENCE)])),
        ).problems
    )
    cost = cost_of("w", [records])
    assert cost.levels_fall_behind
    verdict = judge_worker(records, FAST, observation=Observation(cost=cost))
    assert verdict.in_error, verdict.failures
    assert any("status writes" in e.words for e in verdict.errors)


def test_a_back_off_0s_posted_before_restart_1_is_the_model_s_level() -> None:
    records = attempts([0.9, 2.6, 2.6], reported=[0.0, 2.0, 2.0])
    verdict = judge_worker(records, FAST)
    assert verdict.checks[0].passed, verdict.checks[0].reason
    # Any other level before restart 1 is still a failure.
    assert not judge_worker(attempts([0.9, 2.6], reported=[2.0, 2.0]), FAST).checks[0].passed


def test_the_measure_is_stated_for_a_reader() -> None:
    cost = cost_of("crashloop-worker", [_fast(SOUND_FAST, AT_REFERENCE)])
    line = cost.describe()
    assert "node crashloop-worker" in line
    assert "over 22 starts" in line
    assert "a restart with no back-off took 0.900s in median over 1" in line
    data = cost.to_dict()
    assert data["start_latency_samples"] == 22
    assert data["first_restart_bound_s"] == pytest.approx(2.5)


def test_the_run_s_bounds_carry_each_node_s_measure_with_its_source() -> None:
    records = _fast([1.8] + [2.6] * 20, 2 * AT_REFERENCE)
    cost = cost_of("crashloop-worker", [records])
    verdict = judge_worker(records, FAST, observation=Observation(cost=cost))
    worker = summarize_worker(verdict, None, len(records))
    assert worker.restart_cost is not None
    assert worker.restart_cost.slowdown == pytest.approx(cost.slowdown, abs=1e-3)
    bounds = {b.name: b for b in measured_bounds([worker])}
    assert set(bounds) == {
        "restart_overhead[crashloop-worker]",
        "first_restart_bound[crashloop-worker]",
    }
    overhead = bounds["restart_overhead[crashloop-worker]"]
    assert overhead.source_kind == "this-run"
    assert overhead.value == pytest.approx(1.5 * cost.slowdown, abs=1e-3)
    assert "over 1;" in overhead.source  # the samples it rests on


# --- the pace probed beside the kubelet ----------------------------------------------------


def _paced(pace: float, first_restarts_s: tuple[float, ...] = (0.9,)) -> NodeCost:
    return NodeCost(
        node="n",
        start_latencies_s=(AT_REFERENCE,) * 10,
        first_restarts_s=first_restarts_s,
        pace_s=(REFERENCE_PACE_S * pace,) * 10,
    )


def test_a_paced_node_s_slowdown_is_its_pace_whatever_its_restarts_show() -> None:
    # A kubelet that waits 3 s before every restart 1 reads its node 4x slow by its
    # restarts; the probe beside it reads the node as it is.
    waiting = _paced(1.0, first_restarts_s=(3.9,) * 10)
    assert waiting.slowdown == 1.0
    unpaced = dataclasses.replace(waiting, pace_s=(), start_latencies_s=(AT_REFERENCE * 4,) * 10)
    assert unpaced.slowdown > 3.0, "without the probe, its own restarts widened its bounds"


def test_a_paced_allowance_scales_the_work_not_the_timers() -> None:
    twice = _paced(2.0).allowance
    assert twice.slowdown == pytest.approx(2.0)
    # 1 s tick + 0.5 s of work at 2x; restart 1: 1 s relist, 1 s tick, 1 s of work.
    assert twice.after_requeue.total_seconds() == pytest.approx(2.0)
    assert twice.first_restart.total_seconds() == pytest.approx(3.0)
    # At the reference's pace, the sources' terms as before.
    assert _paced(1.0).allowance.after_requeue == UNMEASURED.after_requeue


def test_a_silent_wait_before_restart_1_is_caught_on_a_paced_node_twice_as_slow() -> None:
    # Restart 1 after 0.9 s of the node's own cost and 2.5 s the kubelet waited silently.
    records = attempts([3.4, 2.9, 2.8], reported=expected_reports(FAST, 3))
    cost = _paced(2.0, first_restarts_s=(3.4,))
    verdict = judge_worker(records, FAST, observation=Observation(cost=cost))
    assert verdict.checks[0].code == "too-late", verdict.checks[0].reason
    # Measured by its restarts instead, the same wait widened its own bound and passed.
    unpaced = dataclasses.replace(cost, pace_s=(), start_latencies_s=(AT_REFERENCE * 4,) * 10)
    assert judge_worker(records, FAST, observation=Observation(cost=unpaced)).checks[0].passed


def test_a_node_paced_past_the_judgeable_is_too_slow_and_says_it_was_probed() -> None:
    slow = _paced(12.0)
    assert slow.too_slow
    assert "pace probe beside the kubelet took" in slow.too_slow_message(FAST)
    assert slow.to_dict()["pace_samples"] == 10
    # Its first two probes alone say nothing of the node: one busy moment, twice at most.
    assert not dataclasses.replace(slow, pace_s=slow.pace_s[:2]).too_slow
    assert dataclasses.replace(slow, pace_s=slow.pace_s[:3]).too_slow


def test_a_restart_overdue_on_a_node_too_slow_to_judge_is_an_error_not_a_failure() -> None:
    records = attempts([0.9, 2.9, 2.8], reported=expected_reports(FAST, 3))
    exit_ns = records[-1].finished_at_ns or 0
    overdue = Observation(now_ns=exit_ns + 60 * NS, cost=_paced(12.0))
    verdict = judge_worker(records, FAST, observation=overdue)
    assert verdict.in_error, verdict.failures
    assert "restart 4 overdue" in verdict.errors[0].words
    assert "too slow to judge" in verdict.errors[0].words
    # On a node at the reference's pace, the same silence is the kubelet's.
    sound = judge_worker(records, FAST, observation=dataclasses.replace(overdue, cost=_paced(1.0)))
    assert sound.problems[0].code == "overdue"


def _started_late(delay_s: float, pace: float) -> list[str]:
    records = _started(attempts([0.9, *[2.8] * 7], reported=expected_reports(FAST, 8)), delay_s)
    verdict = judge_worker(records, FAST, observation=Observation(cost=_paced(pace)))
    return [f.code for f in verdict.failures]


def test_a_kubelet_that_starts_a_second_after_creating_is_caught_at_x1_and_x2() -> None:
    # The reference host's runtime starts in 0.24 s in median: 1.24 s is the kubelet's wait.
    assert "start-late" in _started_late(AT_REFERENCE + 1.0, pace=1.0)
    assert "start-late" in _started_late(AT_REFERENCE + 1.0, pace=2.0)
    # A sound start on either passes; at 6x it is the node's, too slow to judge.
    assert "start-late" not in _started_late(AT_REFERENCE, pace=1.0)
    assert "start-late" not in _started_late(AT_REFERENCE * 2, pace=2.0)


def test_a_paced_node_s_levels_fall_behind_only_past_the_judgeable_pace() -> None:
    # A node paced at 2x still owes its levels (measured: seen 55 of 55 at 2.5x, 38 of 39
    # at 11.9x); measured by its restarts, 1.5x already excused them.
    assert not _paced(2.0).levels_fall_behind
    assert _paced(12.0).levels_fall_behind
    unpaced = dataclasses.replace(_paced(1.0), pace_s=(), first_restarts_s=(1.8,) * 10)
    unpaced = dataclasses.replace(unpaced, start_latencies_s=(AT_REFERENCE * 3,) * 10)
    assert unpaced.levels_fall_behind
    # A kubelet that hides its levels on a paced node twice as slow is failed, not excused.
    hidden = attempts([0.9, *[2.8] * 9])
    verdict = judge_worker(hidden, FAST, observation=Observation(cost=_paced(2.0)))
    assert "levels-unconfirmed" in [f.code for f in verdict.failures]
    assert not verdict.in_error


def test_one_slow_probe_widens_the_windows_to_the_widest_but_never_takes_the_answer() -> None:
    # Six probes, one taken in a burst at 15x: the upper bound of a median of six is the
    # largest, so the windows widen (to the widest judged, 10x); the median says 1x.
    cost = NodeCost(
        node="n",
        start_latencies_s=(AT_REFERENCE,) * 10,
        first_restarts_s=(0.9,),
        pace_s=(REFERENCE_PACE_S,) * 5 + (REFERENCE_PACE_S * 15,),
    )
    assert cost.pace == pytest.approx(15.0)
    # Its wait counts in the bursts' mean as one quota period at most: a little slower.
    assert 1.0 < cost.pace_median < 2.0
    assert not cost.too_slow
    assert cost.allowance.slowdown == 10.0
    # Slow in median, the node is too slow to judge.
    assert _paced(10.5).too_slow


def test_a_node_held_to_a_quota_reads_slow_by_its_bursts_waits_not_their_median() -> None:
    # Three bursts in four as fast as the reference's, one in four waiting most of a
    # quota's period: the median says 1x, the waits say the node's work is slow.
    held = (REFERENCE_PACE_S,) * 30 + (REFERENCE_PACE_S + 0.09,) * 10
    cost = NodeCost(node="n", start_latencies_s=(), first_restarts_s=(), pace_s=held)
    assert median_upper_bound(held) == pytest.approx(REFERENCE_PACE_S)
    assert cost.wait_pace > 3.0
    assert cost.pace == pytest.approx(cost.wait_pace)
    assert not cost.too_slow
    # A host that froze for 5 s under one probe counts as one period, never as 5 s.
    frozen = NodeCost(
        node="n",
        start_latencies_s=(),
        first_restarts_s=(),
        pace_s=(REFERENCE_PACE_S,) * 39 + (5.0,),
    )
    assert frozen.wait_pace < 1.5
    assert not frozen.too_slow
