"""Each node's restart cost, measured in the run: the bounds it gives, and what it cannot hide."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest

from harness.model.backoff import UNMEASURED
from harness.recording.records import AttemptRecord
from harness.verdict import Observation, judge_worker
from harness.verdict.nodecost import (
    REFERENCE_START_S,
    NodeCost,
    cost_of,
    reference_start_at,
)
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


def test_a_few_slow_starts_are_not_a_slow_node() -> None:
    # Two starts at 0.37 s, each within what the reference host shows by chance.
    cost = NodeCost(node="w", start_latencies_s=(0.37, 0.37), first_restarts_s=())
    assert cost.slowdown == 1.0


def test_a_node_whose_runtime_starts_twice_as_slow_gets_bounds_about_twice_as_wide() -> None:
    cost = cost_of("w", [_fast(SOUND_FAST, 2 * AT_REFERENCE)])
    # Held against the percentile a median of 21 starts reaches by chance (not the median).
    assert 1.6 < cost.slowdown < 2.0
    assert cost.allowance.after_requeue.total_seconds() == pytest.approx(1.5 * cost.slowdown)


def test_the_slowdown_reads_the_reference_between_its_percentiles() -> None:
    assert reference_start_at(0.5) == pytest.approx(REFERENCE_START_S)
    assert reference_start_at(0.0) < reference_start_at(0.52) < reference_start_at(1.0)


def test_a_kubelet_adding_a_second_to_every_back_off_cannot_widen_its_bounds() -> None:
    sound = cost_of("w", [_fast(SOUND_FAST, AT_REFERENCE)])
    slower = cost_of("w", [_fast([0.9] + [3.6] * 20, AT_REFERENCE)])
    assert slower.allowance == sound.allowance


def test_a_kubelet_waiting_before_restart_1_cannot_widen_its_bounds_and_fails_it() -> None:
    # Restart 1 after 0.9 s + a silent 2 s wait: the runtime's measure is unchanged.
    records = _fast([2.9] + [2.6] * 20, AT_REFERENCE)
    cost = cost_of("w", [records])
    assert cost.first_restarts_s == pytest.approx((2.9,))
    assert cost.slowdown == 1.0
    verdict = judge_worker(records, FAST, observation=Observation(cost=cost))
    assert not verdict.passed
    first = verdict.checks[0]
    assert "too late" in first.reason
    assert first.upper_bound_s == pytest.approx(2.5)
    # Without a measure, the flat 5 s let it pass, as it did before the cost was measured.
    assert judge_worker(records, FAST).passed


def test_a_sound_kubelet_on_a_node_twice_as_slow_passes_on_its_measure() -> None:
    # Most restarts 0.9 s past the 2 s level, every fifth 3.2 s past: over the reference
    # host's 4.5 s bound, inside the one its own measure gives.
    records = _fast([1.8] + [2.9, 2.9, 2.9, 2.9, 5.2] * 4, 2 * AT_REFERENCE)
    assert not judge_worker(records, FAST).passed
    cost = cost_of("w", [records])
    verdict = judge_worker(records, FAST, observation=Observation(cost=cost))
    assert verdict.passed, verdict.failures


def test_a_node_too_slow_to_judge_is_an_error_naming_it_never_a_failure() -> None:
    records = _fast([4.0] + [9.0] * 20, 5 * AT_REFERENCE)
    cost = cost_of("crashloop-worker", [records])
    assert cost.too_slow
    verdict = judge_worker(records, FAST, observation=Observation(cost=cost))
    assert not verdict.passed
    assert verdict.in_error, verdict.failures
    assert any("node crashloop-worker too slow to judge back-off 2s" in e for e in verdict.errors)


def test_too_slow_still_fails_a_restart_too_early() -> None:
    records = _fast([4.0] + [9.0] * 10 + [1.0] + [9.0] * 9, 5 * AT_REFERENCE)
    cost = cost_of("w", [records])
    verdict = judge_worker(records, FAST, observation=Observation(cost=cost))
    assert not verdict.in_error
    assert any("too early" in f for f in verdict.failures)


def test_levels_missing_on_a_node_whose_status_writes_fall_behind_are_an_error() -> None:
    records = [
        dataclasses.replace(r, reported_backoff_s=None if r.attempt % 3 else r.reported_backoff_s)
        for r in _fast([1.8] + [2.9] * 20, 2 * AT_REFERENCE)
    ]
    # On the reference host, so few levels is the kubelet's failure.
    assert any(
        "levels unconfirmed" in p
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
    assert any("status writes" in e for e in verdict.errors)


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
    assert "restart 1 took 0.900s in median over 1" in line
    data = cost.to_dict()
    assert data["start_latency_samples"] == 22
    assert data["first_restart_bound_s"] == pytest.approx(2.5)
