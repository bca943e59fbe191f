"""The cap's median rule: the jitter's share, one sync tick and the restart's cost.

Found by a full check on a sound v1.35.8 kubelet (run 20261205T075104Z-check-full-a3c5):
the reduced worker's restarts at its 60 s cap come up to 30 s late (the requeue's jitter
is half the back-off, capped at 30 s), 13.8 s in median, which a flat 1.2 s bound failed.
"""

from __future__ import annotations

import pytest

from crashloop_harness.verdict import Observation, judge_worker
from crashloop_harness.verdict.evidence import cap_median_bound
from crashloop_harness.verdict.medians import uniform_median_quantile
from crashloop_harness.verdict.nodecost import REFERENCE_COST_MEDIAN_S, REFERENCE_START_S
from crashloop_harness.verdict.tolerances import SYNC_TICK_S
from tests.unit.factories import DEFAULT, FAST, REDUCED, attempts


def test_the_quantile_of_a_median_of_three_is_the_beta_2_2_one() -> None:
    # The median of three uniforms has the law 3x^2 - 2x^3; at 0.999 x is 0.9817.
    assert uniform_median_quantile(3, 0.999) == pytest.approx(0.98168, abs=1e-4)
    assert uniform_median_quantile(1, 0.999) == pytest.approx(0.999, abs=1e-9)


def test_more_restarts_hold_the_median_closer_to_the_middle() -> None:
    quantiles = [uniform_median_quantile(k, 0.999) for k in (5, 9, 20, 50, 200)]
    assert quantiles == sorted(quantiles, reverse=True)
    assert 0.5 < quantiles[-1] < 0.62


TICK_AND_COST = SYNC_TICK_S + REFERENCE_COST_MEDIAN_S


def test_the_fast_bound_is_the_jitter_s_share_one_sync_tick_and_the_cost() -> None:
    assert cap_median_bound(FAST, 50) == pytest.approx(
        1.0 * uniform_median_quantile(50, 0.999) + TICK_AND_COST
    )
    # More restarts hold the jitter's share closer to its middle, never below it.
    assert cap_median_bound(FAST, 200) < cap_median_bound(FAST, 50)
    assert cap_median_bound(FAST, 200) > 0.5 + TICK_AND_COST


def test_sound_fast_medians_a_tick_apart_pass() -> None:
    # Sound kubelets' medians at the 2 s cap: 1.370 s over the first five (a CI run
    # on 2026-12-05), 1.19 s over 48 (run 20261206T075713Z-check-quick-0d70), and
    # 1.631 s over 20 read to the workload's start (CI, 20261206T094241Z-check-quick-3800),
    # which the bound measured on a fast-tick day (1.2 s) failed.
    assert cap_median_bound(FAST, 5) > 1.370
    assert cap_median_bound(FAST, 48) > 1.19
    assert cap_median_bound(FAST, 20) + REFERENCE_START_S > 1.631


def test_a_wider_jitter_widens_the_bound_by_the_share_it_adds_to_the_median() -> None:
    # Reduced (60 s cap) and default (300 s) both requeue with up to 30 s of jitter.
    for curve in (REDUCED, DEFAULT):
        assert cap_median_bound(curve, 7) == pytest.approx(
            30.0 * uniform_median_quantile(7, 0.999) + TICK_AND_COST
        )


def test_fast_restarts_each_inside_the_window_fail_on_their_median() -> None:
    # Restarts at 4.40-4.49 s, each inside the 2 s level's 4.5 s window: a cap of
    # about 3.4 s with its jitter and the tick at their worst. Their median sits past
    # what the jitter, one tick and the cost allow (2.33 s to the start, n=10).
    delays = [0.9, *(4.40 + 0.01 * i for i in range(10))]
    verdict = judge_worker(
        attempts(delays), FAST, observation=Observation(required_restarts=len(delays))
    )
    assert all(c.passed for c in verdict.checks), [c.reason for c in verdict.checks]
    (median,) = [p.words for p in verdict.problems if "cap came" in p.words]
    assert "is its cap longer?" in median


def _at_the_reduced_cap(margins_s: list[float]) -> list[float]:
    climb = [d.total_seconds() + 0.4 for d in REDUCED.delays(REDUCED.restarts_until_cap() - 1)]
    return climb + [60.0 + m for m in margins_s]


def test_a_sound_reduced_worker_at_its_cap_passes_as_it_did_on_the_real_kubelet() -> None:
    # The 7 margins at the 60 s cap of run 20261205T075104Z-check-full-a3c5's reduced
    # worker had a median of 13.8 s: the same spread over the jitter's 30 s.
    delays = _at_the_reduced_cap([2.1, 25.3, 13.8, 8.9, 29.0, 17.4, 4.6])
    verdict = judge_worker(
        attempts(delays), REDUCED, observation=Observation(required_restarts=len(delays))
    )
    assert not any("cap came" in p.words for p in verdict.problems), verdict.problems


def test_a_reduced_worker_whose_cap_is_90s_fails_on_its_median() -> None:
    # 30 s more at every capped restart, with the same jitter: a 90 s cap told 60 s.
    delays = _at_the_reduced_cap([32.1, 55.3, 43.8, 38.9, 59.0, 47.4, 34.6])
    verdict = judge_worker(
        attempts(delays), REDUCED, observation=Observation(required_restarts=len(delays))
    )
    (median,) = [p.words for p in verdict.problems if "cap came" in p.words]
    assert "came 43.800s past it in median" in median
