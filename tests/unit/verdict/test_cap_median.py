"""The cap's median rule: measured on the fast worker's 1 s jitter, grown with a wider one.

Found by a full check on a sound v1.35.8 kubelet (run 20261205T075104Z-check-full-a3c5):
the reduced worker's restarts at its 60 s cap come up to 30 s late (the requeue's jitter
is half the back-off, capped at 30 s), 13.8 s in median, which a flat 1.2 s bound failed.
"""

from __future__ import annotations

import pytest

from crashloop_harness.verdict import Observation, judge_worker
from crashloop_harness.verdict.evidence import cap_median_bound
from crashloop_harness.verdict.medians import uniform_median_quantile
from crashloop_harness.verdict.tolerances import CAP_MEDIAN_OVERSHOOT
from tests.unit.factories import DEFAULT, FAST, REDUCED, attempts


def test_the_quantile_of_a_median_of_three_is_the_beta_2_2_one() -> None:
    # The median of three uniforms has the law 3x^2 - 2x^3; at 0.999 x is 0.9817.
    assert uniform_median_quantile(3, 0.999) == pytest.approx(0.98168, abs=1e-4)
    assert uniform_median_quantile(1, 0.999) == pytest.approx(0.999, abs=1e-9)


def test_more_restarts_hold_the_median_closer_to_the_middle() -> None:
    quantiles = [uniform_median_quantile(k, 0.999) for k in (5, 9, 20, 50, 200)]
    assert quantiles == sorted(quantiles, reverse=True)
    assert 0.5 < quantiles[-1] < 0.62


MEASURED_SHARE = 1.0 * uniform_median_quantile(50, 0.999)


def test_the_fast_worker_keeps_the_bound_where_it_was_measured_and_never_goes_below() -> None:
    assert cap_median_bound(FAST, 50) == pytest.approx(CAP_MEDIAN_OVERSHOOT)
    assert cap_median_bound(FAST, 200) == CAP_MEDIAN_OVERSHOOT


def test_fewer_restarts_widen_the_fast_bound_as_their_median_spreads_wider() -> None:
    # A CI run's sound fast worker: its first 5 restarts at the cap, 1.370 s in median.
    assert cap_median_bound(FAST, 5) == pytest.approx(
        CAP_MEDIAN_OVERSHOOT + uniform_median_quantile(5, 0.999) - MEASURED_SHARE
    )
    assert cap_median_bound(FAST, 5) > 1.370


def test_a_wider_jitter_widens_the_bound_by_the_share_it_adds_to_the_median() -> None:
    # Reduced (60 s cap) and default (300 s) both requeue with up to 30 s of jitter.
    for curve in (REDUCED, DEFAULT):
        assert cap_median_bound(curve, 7) == pytest.approx(
            CAP_MEDIAN_OVERSHOOT + 30.0 * uniform_median_quantile(7, 0.999) - MEASURED_SHARE
        )


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
    assert not any("cap came" in p for p in verdict.problems), verdict.problems


def test_a_reduced_worker_whose_cap_is_90s_fails_on_its_median() -> None:
    # 30 s more at every capped restart, with the same jitter: a 90 s cap told 60 s.
    delays = _at_the_reduced_cap([32.1, 55.3, 43.8, 38.9, 59.0, 47.4, 34.6])
    verdict = judge_worker(
        attempts(delays), REDUCED, observation=Observation(required_restarts=len(delays))
    )
    (median,) = [p for p in verdict.problems if "cap came" in p]
    assert "came 43.800s past it in median" in median
