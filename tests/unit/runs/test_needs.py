"""What a worker must show comes from its curve, so a new profile file needs no code."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace
from typing import Any, cast

import pytest

from crashloop_harness.core.errors import HarnessError
from crashloop_harness.model.backoff import curve_for
from crashloop_harness.model.kubeletconfig import KubeletBackoffConfig
from crashloop_harness.runs.checkprofiles import (
    CHECK_PROFILES,
    CheckProfile,
    Need,
    NeedRule,
    check_variants_have_workers,
)
from crashloop_harness.verdict import restarts_needed
from tests.unit.factories import DEFAULT, FAST, REDUCED

QUICK = CHECK_PROFILES["quick"]
FULL = CHECK_PROFILES["full"]


def _needed(profile: CheckProfile, worker: str, curve: object) -> int:
    need = profile.need_for(worker, cast(Any, curve))
    return restarts_needed(cast(Any, curve), need.min_restarts, need.until_delay)


@pytest.mark.parametrize(
    ("profile", "expected"),
    [
        # The needs these profiles had when they were written by name.
        (QUICK, {"fast": 10, "reduced": 8, "default": 5}),
        (FULL, {"fast": 20, "reduced": 9, "default": 7}),
    ],
)
def test_the_shipped_curves_need_what_they_needed_by_name(
    profile: CheckProfile, expected: dict[str, int]
) -> None:
    curves = {"fast": FAST, "reduced": REDUCED, "default": DEFAULT}
    assert {w: _needed(profile, w, c) for w, c in curves.items()} == expected
    # The first capped restart of the reduced curve (60s) is in the quick need.
    assert REDUCED.delay_before_restart(8) == timedelta(seconds=60)
    assert DEFAULT.delay_before_restart(5) == timedelta(seconds=80)


def test_a_new_profile_gets_a_need_from_its_curve_whatever_its_name() -> None:
    max_30s = curve_for(KubeletBackoffConfig(max_container_restart_period=timedelta(seconds=30)))
    assert max_30s.delays(6) == [timedelta(seconds=s) for s in (0, 10, 20, 30, 30, 30)]
    # Quick: the first 30s restart is restart 4; the floor of ten stops where
    # 120s of nominal waits run out (0+10+20+30+30+30 = 120s: restart 6).
    assert QUICK.need_for("a-name-no-code-knows", max_30s) == Need(min_restarts=6)
    # Full: the cap twice is restart 5; the same floor again wins.
    assert FULL.need_for("a-name-no-code-knows", max_30s) == Need(min_restarts=6)
    two_caps = NeedRule(level_limit_s=300, min_restarts=1, cap_times=2)
    assert two_caps.need(max_30s) == Need(min_restarts=5)


def test_the_floor_never_stretches_a_slow_curve() -> None:
    rule = NeedRule(level_limit_s=10, min_restarts=50, floor_budget_s=20)
    # Default curve: 0, 10, 20, ... Its 10s level comes at restart 2; the floor
    # of 50 stops where 20s of nominal waits run out (restarts 1 and 2: 0 + 10s).
    assert rule.need(DEFAULT) == Need(min_restarts=2)


def test_an_override_replaces_the_rule_for_that_worker_only() -> None:
    drill = CheckProfile("drill", 60.0, QUICK.rule, overrides={"fast": Need(min_restarts=3)})
    assert drill.need_for("fast", FAST) == Need(min_restarts=3)
    assert drill.need_for("other", FAST) == QUICK.rule.need(FAST)


def _cluster(*profiles: str) -> Any:
    return SimpleNamespace(name="c", profile_names=lambda: frozenset(profiles))


def test_a_cluster_without_profiles_runs_only_the_variants_beside_every_node() -> None:
    check_variants_have_workers(FULL, SimpleNamespace(name="ops", profile_names=lambda: None))


def test_a_variant_without_its_worker_is_refused_before_anything_runs() -> None:
    check_variants_have_workers(FULL, _cluster("fast", "reduced", "default"))
    with pytest.raises(
        HarnessError, match="reset-610s, control-590s beside a worker with profile reduced"
    ) as error:
        check_variants_have_workers(FULL, _cluster("fast", "default"))
    assert "give one worker that profile" in str(error.value.fix)


def test_counting_from_the_exit_is_probed_beside_every_worker_whatever_its_profile() -> None:
    (runs_5s,) = QUICK.variants
    assert runs_5s.runs_beside("quick-2s")
    assert runs_5s.runs_beside(None)
    check_variants_have_workers(QUICK, _cluster("quick-2s", "reduced"))
