"""The back-off model on every kubelet release from 1.33 to 1.38
(crashloop_harness.model.releases)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
import yaml

from crashloop_harness.core.resources import CLUSTERS_DIR
from crashloop_harness.model.backoff import FIRST_RESTART_UPPER_BOUND, curve_for, upper_tolerance
from crashloop_harness.model.kubeletconfig import KubeletBackoffConfig, validate_config
from crashloop_harness.model.releases import (
    AT_EXPIRY,
    DEFAULT_RELEASE,
    EVERY_10_15S,
    KUBELET_CRASHLOOP_BACKOFF_MAX,
    NODE_DECLARED_FEATURES,
    REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY,
    RELEASES,
    RESTART_ALL_CONTAINERS,
    release_of,
)

PROFILES = CLUSTERS_DIR / "profiles"
S = timedelta(seconds=1)
ALL = sorted(RELEASES)
BEFORE_135 = [33, 34]
FROM_135 = [35, 36, 37, 38]


def _profile(name: str) -> KubeletBackoffConfig:
    doc = yaml.safe_load(Path(PROFILES / f"{name}.yaml").read_text())
    return KubeletBackoffConfig.from_kubelet_configuration(doc)


def _config(gates: dict[str, bool] | None = None, field: str | None = None) -> KubeletBackoffConfig:
    doc: dict[str, object] = {}
    if gates:
        doc["featureGates"] = gates
    if field:
        doc["crashLoopBackOff"] = {"maxContainerRestartPeriod": field}
    return KubeletBackoffConfig.from_kubelet_configuration(doc)


@pytest.mark.parametrize(
    ("version", "minor"),
    [("v1.33.13", 33), ("v1.34.11", 34), ("1.35", 35), ("v1.36.4", 36), ("v1.38.0-beta.0", 38)],
)
def test_release_of_a_version(version: str, minor: int) -> None:
    assert release_of(version).minor == minor


@pytest.mark.parametrize("version", ["v1.32.9", "v1.39.0", "latest", "2.0", ""])
def test_an_unknown_version_is_refused_with_the_known_ones(version: str) -> None:
    with pytest.raises(ValueError, match=r"it knows 1\.33, 1\.34, 1\.35, 1\.36, 1\.37, 1\.38"):
        release_of(version)


def test_the_default_release_is_the_talks() -> None:
    assert DEFAULT_RELEASE.minor == 35


@pytest.mark.parametrize("minor", ALL)
@pytest.mark.parametrize(
    ("profile", "initial_s", "maximum_s"),
    [("fast", 2, 2), ("reduced", 1, 60), ("default", 10, 300)],
)
def test_the_talks_three_profiles_mean_the_same_curve_on_every_release(
    minor: int, profile: str, initial_s: int, maximum_s: int
) -> None:
    release = RELEASES[minor]
    config = _profile(profile)
    assert validate_config(config, release) == ()
    curve = curve_for(config, release)
    assert (curve.initial, curve.maximum) == (initial_s * S, maximum_s * S)
    assert curve.requeue == (EVERY_10_15S if minor < 35 else AT_EXPIRY)


@pytest.mark.parametrize("minor", BEFORE_135)
def test_before_135_the_max_field_without_its_gate_stops_the_kubelet(minor: int) -> None:
    (problem,) = validate_config(_config(field="2s"), RELEASES[minor])
    assert problem.field == "crashLoopBackOff.maxContainerRestartPeriod"
    assert f"disabled in 1.{minor}" in problem.message
    assert f"{KUBELET_CRASHLOOP_BACKOFF_MAX}: true" in problem.fix


@pytest.mark.parametrize("minor", FROM_135)
def test_from_135_the_max_field_alone_is_enough(minor: int) -> None:
    assert validate_config(_config(field="2s"), RELEASES[minor]) == ()
    assert curve_for(_config(field="2s"), RELEASES[minor]).maximum == 2 * S


@pytest.mark.parametrize(
    ("minor", "maximum_s"), [(33, 60), (34, 60), (35, 300), (36, 300), (37, 300), (38, 300)]
)
def test_the_reduce_gate_alone(minor: int, maximum_s: int) -> None:
    """1s/60s while the max gate is off by default; from 1.35 its 300s default field wins."""
    curve = curve_for(_config({REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY: True}), RELEASES[minor])
    assert (curve.initial, curve.maximum) == (1 * S, maximum_s * S)


@pytest.mark.parametrize(
    ("minor", "pseudo", "max_gate_on"),
    [
        (34, "AllAlpha", True),
        (34, "AllBeta", False),
        (35, "AllBeta", False),
        (35, "AllAlpha", True),
    ],
)
def test_the_stage_pseudo_gates_follow_each_releases_stage(
    minor: int, pseudo: str, max_gate_on: bool
) -> None:
    value = minor < 35 if pseudo == "AllAlpha" else False
    config = _config({pseudo: value})
    assert config.gate_enabled(KUBELET_CRASHLOOP_BACKOFF_MAX, RELEASES[minor]) is max_gate_on


def test_restart_all_containers_needs_declared_features_on_135_only() -> None:
    alone = _config({RESTART_ALL_CONTAINERS: True})
    (problem,) = validate_config(alone, RELEASES[35])
    assert problem.field == f"featureGates.{RESTART_ALL_CONTAINERS}"
    assert NODE_DECLARED_FEATURES in problem.message
    assert f"featureGates.{NODE_DECLARED_FEATURES}: true" in problem.fix
    both = _config({RESTART_ALL_CONTAINERS: True, NODE_DECLARED_FEATURES: True})
    assert validate_config(both, RELEASES[35]) == ()
    for minor in (36, 37, 38):
        assert validate_config(alone, RELEASES[minor]) == ()


def test_restart_all_containers_does_not_exist_before_135() -> None:
    (problem,) = validate_config(_config({RESTART_ALL_CONTAINERS: True}), RELEASES[34])
    assert "unknown feature gate" in problem.message
    assert "kubelet 1.34" in problem.message


@pytest.mark.parametrize("minor", [37, 38])
def test_a_locked_ga_gate_cannot_be_switched_off(minor: int) -> None:
    problems = validate_config(_config({NODE_DECLARED_FEATURES: False}), RELEASES[minor])
    assert any("GA and locked" in p.message for p in problems)


def test_on_136_switching_off_a_dependency_of_a_default_on_gate_is_refused() -> None:
    off = _config({NODE_DECLARED_FEATURES: False})
    (problem,) = validate_config(off, RELEASES[36])
    assert problem.field == f"featureGates.{RESTART_ALL_CONTAINERS}"
    both_off = _config({NODE_DECLARED_FEATURES: False, RESTART_ALL_CONTAINERS: False})
    assert validate_config(both_off, RELEASES[36]) == ()


@pytest.mark.parametrize(
    ("nominal_s", "before_135_s", "from_135_s"),
    [(2, 18.5, 4.5), (10, 26.5, 16.5), (60, 76.5, 91.5), (300, 316.5, 331.5)],
)
def test_how_late_a_restart_may_be_on_each_side_of_135(
    nominal_s: int, before_135_s: float, from_135_s: float
) -> None:
    """Before 1.35 a retry every 10-15s; from 1.35 at expiry plus up to half (capped at 30s)."""
    nominal = nominal_s * S
    assert upper_tolerance(nominal, EVERY_10_15S) == timedelta(seconds=before_135_s)
    assert upper_tolerance(nominal, AT_EXPIRY) == timedelta(seconds=from_135_s)
    fast_134 = curve_for(_profile("fast"), RELEASES[34])
    assert fast_134.upper_tolerance(2 * S) == timedelta(seconds=18.5)


@pytest.mark.parametrize("minor", ALL)
def test_restart_one_is_immediate_on_every_release(minor: int) -> None:
    curve = curve_for(_profile("default"), RELEASES[minor])
    assert curve.delay_before_restart(1) == timedelta(0)
    assert curve.upper_tolerance(timedelta(0)) == FIRST_RESTART_UPPER_BOUND
