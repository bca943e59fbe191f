"""The v1.35 kubelet backoff model (crashloop_harness.model.backoff)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import pytest

from crashloop_harness.model.backoff import (
    FIRST_RESTART_UPPER_BOUND,
    RESET_AFTER,
    RESTART_OVERHEAD,
    BackoffCurve,
    curve_for,
    parse_backoff_message,
    upper_tolerance,
)
from crashloop_harness.model.durations import DurationError
from crashloop_harness.model.kubeletconfig import (
    KNOWN_FEATURE_GATES,
    KubeletBackoffConfig,
    KubeletConfigError,
    validate_config,
)
from crashloop_harness.model.releases import (
    KUBELET_CRASHLOOP_BACKOFF_MAX,
    REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY,
    RELEASES,
)

MAX_GATE = KUBELET_CRASHLOOP_BACKOFF_MAX
REDUCE_GATE = REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY


def seconds(*values: float) -> list[timedelta]:
    return [timedelta(seconds=v) for v in values]


def kubelet_config(
    gates: Mapping[str, bool] | None = None, max_period: str | None = None
) -> KubeletBackoffConfig:
    doc: dict[str, Any] = {}
    if gates is not None:
        doc["featureGates"] = dict(gates)
    if max_period is not None:
        doc["crashLoopBackOff"] = {"maxContainerRestartPeriod": max_period}
    return KubeletBackoffConfig.from_kubelet_configuration(doc)


def curve(gates: Mapping[str, bool] | None = None, max_period: str | None = None) -> BackoffCurve:
    return curve_for(kubelet_config(gates, max_period))


# --- the four worker profiles -------------------------------------------------


def test_fast_profile_curve() -> None:
    assert curve(max_period="2s").delays(6) == seconds(0, 2, 2, 2, 2, 2)


def test_reduced_profile_curve() -> None:
    assert curve({REDUCE_GATE: True}, "60s").delays(10) == seconds(
        0, 1, 2, 4, 8, 16, 32, 60, 60, 60
    )


def test_default_profile_curve() -> None:
    assert curve().delays(9) == seconds(0, 10, 20, 40, 80, 160, 300, 300, 300)


def test_gate_only_profile_curve_is_capped_by_the_defaulted_300s() -> None:
    assert curve({REDUCE_GATE: True}).delays(12) == seconds(
        0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300
    )


def test_reduce_gate_with_2s_max() -> None:
    assert curve({REDUCE_GATE: True}, "2s").delays(5) == seconds(0, 1, 2, 2, 2)


# --- every gate combination ---------------------------------------------------

ABSENT = None
# (max gate, reduce gate, field) -> (initial s, maximum s); None = kubelet refuses.
GATE_TABLE: list[tuple[bool | None, bool | None, str | None, tuple[float, float] | None]] = [
    (ABSENT, ABSENT, None, (10, 300)),
    (ABSENT, False, None, (10, 300)),
    (ABSENT, True, None, (1, 300)),
    (True, ABSENT, None, (10, 300)),
    (True, False, None, (10, 300)),
    (True, True, None, (1, 300)),
    (False, ABSENT, None, (10, 300)),
    (False, False, None, (10, 300)),
    (False, True, None, (1, 60)),
    (ABSENT, ABSENT, "2s", (2, 2)),
    (ABSENT, False, "2s", (2, 2)),
    (ABSENT, True, "2s", (1, 2)),
    (True, ABSENT, "2s", (2, 2)),
    (True, False, "2s", (2, 2)),
    (True, True, "2s", (1, 2)),
    (False, ABSENT, "2s", None),
    (False, False, "2s", None),
    (False, True, "2s", None),
]


@pytest.mark.parametrize(("max_gate", "reduce_gate", "field", "expected"), GATE_TABLE)
def test_every_gate_combination(
    max_gate: bool | None,
    reduce_gate: bool | None,
    field: str | None,
    expected: tuple[float, float] | None,
) -> None:
    gates = {
        name: value
        for name, value in ((MAX_GATE, max_gate), (REDUCE_GATE, reduce_gate))
        if value is not None
    }
    config = kubelet_config(gates, field)
    if expected is None:
        with pytest.raises(KubeletConfigError, match=f"{MAX_GATE} is disabled") as caught:
            curve_for(config)
        assert caught.value.field == "crashLoopBackOff.maxContainerRestartPeriod"
        return
    result = curve_for(config)
    assert (result.initial, result.maximum) == (
        timedelta(seconds=expected[0]),
        timedelta(seconds=expected[1]),
    )


def test_max_gate_off_and_reduce_gate_on_gives_the_gate_s_own_60s() -> None:
    assert curve({MAX_GATE: False, REDUCE_GATE: True}).delays(9) == seconds(
        0, 1, 2, 4, 8, 16, 32, 60, 60
    )


@pytest.mark.parametrize(
    ("gates", "max_gate_on", "reduce_gate_on"),
    [
        ({}, True, False),
        ({"AllAlpha": True}, True, True),
        ({"AllAlpha": True, REDUCE_GATE: False}, True, False),
        ({"AllBeta": False}, False, False),
        ({"AllBeta": False, MAX_GATE: True}, True, False),
        ({"AllAlpha": False, "AllBeta": True}, True, False),
    ],
)
def test_all_alpha_and_all_beta_switch_unset_gates_only(
    gates: dict[str, bool], max_gate_on: bool, reduce_gate_on: bool
) -> None:
    config = kubelet_config(gates)
    assert config.gate_enabled(MAX_GATE) is max_gate_on
    assert config.gate_enabled(REDUCE_GATE) is reduce_gate_on


def test_gate_enabled_refuses_a_gate_the_release_does_not_have() -> None:
    with pytest.raises(
        ValueError, match=r"kubelet 1\.33 has no feature gate 'ContainerRestartRules'"
    ):
        kubelet_config().gate_enabled("ContainerRestartRules", RELEASES[33])
    assert kubelet_config().gate_enabled("ContainerRestartRules", RELEASES[35]) is True


def test_explicit_gate_reports_only_what_was_written() -> None:
    config = kubelet_config({REDUCE_GATE: True})
    assert config.explicit_gate(REDUCE_GATE) is True
    assert config.explicit_gate(MAX_GATE) is None


@pytest.mark.parametrize(
    ("gates", "field", "expected"),
    [
        ({}, None, timedelta(seconds=300)),
        ({MAX_GATE: False}, None, None),
        ({}, "2s", timedelta(seconds=2)),
    ],
)
def test_effective_max_container_restart_period_defaults_only_with_the_gate(
    gates: dict[str, bool], field: str | None, expected: timedelta | None
) -> None:
    assert kubelet_config(gates, field).effective_max_container_restart_period == expected


# --- edges of maxContainerRestartPeriod ---------------------------------------


@pytest.mark.parametrize(
    ("field", "initial", "maximum"),
    [
        ("1s", timedelta(seconds=1), timedelta(seconds=1)),
        ("300s", timedelta(seconds=10), timedelta(seconds=300)),
        ("5m", timedelta(seconds=10), timedelta(seconds=300)),
        ("1500ms", timedelta(seconds=1.5), timedelta(seconds=1.5)),
        ("5s", timedelta(seconds=5), timedelta(seconds=5)),  # initial lowered from 10s
        ("9s", timedelta(seconds=9), timedelta(seconds=9)),
        ("10s", timedelta(seconds=10), timedelta(seconds=10)),
        ("11s", timedelta(seconds=10), timedelta(seconds=11)),
        # The kubelet compares whole milliseconds, so sub-millisecond excess passes.
        ("1000.9ms", timedelta(microseconds=1_000_900), timedelta(microseconds=1_000_900)),
        ("300000.9ms", timedelta(seconds=10), timedelta(microseconds=300_000_900)),
    ],
)
def test_max_container_restart_period_edges(
    field: str, initial: timedelta, maximum: timedelta
) -> None:
    result = curve(max_period=field)
    assert (result.initial, result.maximum) == (initial, maximum)


def test_initial_lowered_to_max_follows_the_curve() -> None:
    assert curve(max_period="5s").delays(4) == seconds(0, 5, 5, 5)
    assert curve(max_period="1500ms").delays(3) == seconds(0, 1.5, 1.5)


@pytest.mark.parametrize("field", ["500ms", "999ms", "999.999999ms", "0s", "0", "-1s", "301s"])
def test_out_of_range_max_is_what_the_kubelet_refuses(field: str) -> None:
    config = kubelet_config(max_period=field)
    problems = validate_config(config)
    assert [p.field for p in problems] == ["crashLoopBackOff.maxContainerRestartPeriod"]
    assert "outside 1s..300s" in problems[0].message
    assert '"1s" to "300s"' in problems[0].fix
    with pytest.raises(KubeletConfigError, match=r"outside 1s\.\.300s"):
        curve_for(config)


def test_300001ms_is_refused_and_300000ms_is_not() -> None:
    assert validate_config(kubelet_config(max_period="300001ms"))
    assert not validate_config(kubelet_config(max_period="300000ms"))


# --- reading configz and KubeletConfiguration ----------------------------------


def configz(kubeletconfig: dict[str, Any]) -> dict[str, Any]:
    return {"kubeletconfig": kubeletconfig}


def test_from_configz_reads_a_live_payload() -> None:
    payload = configz(
        {
            "enableServer": True,
            "syncFrequency": "1m0s",
            "featureGates": {REDUCE_GATE: True},
            "crashLoopBackOff": {"maxContainerRestartPeriod": "1m0s"},
            "cgroupDriver": "systemd",
        }
    )
    config = KubeletBackoffConfig.from_configz(payload)
    assert config == KubeletBackoffConfig(
        feature_gates=((REDUCE_GATE, True),),
        max_container_restart_period=timedelta(seconds=60),
    )
    assert curve_for(config).delays(9) == seconds(0, 1, 2, 4, 8, 16, 32, 60, 60)


def test_from_configz_with_defaulted_5m0s_matches_the_default_curve() -> None:
    payload = configz({"crashLoopBackOff": {"maxContainerRestartPeriod": "5m0s"}})
    assert curve_for(KubeletBackoffConfig.from_configz(payload)) == curve()


def test_from_configz_without_gates_or_field() -> None:
    config = KubeletBackoffConfig.from_configz(configz({"crashLoopBackOff": {}}))
    assert config == KubeletBackoffConfig()
    assert curve_for(config) == BackoffCurve(timedelta(seconds=10), timedelta(seconds=300))


@pytest.mark.parametrize("payload", [{}, {"kubeletconfig": None}, {"kubeletconfig": "x"}])
def test_from_configz_requires_the_kubeletconfig_wrapper(payload: dict[str, Any]) -> None:
    with pytest.raises(KubeletConfigError, match="proxy/configz") as caught:
        KubeletBackoffConfig.from_configz(payload)
    assert caught.value.field == "kubeletconfig"


def test_feature_gates_are_stored_sorted() -> None:
    config = kubelet_config({REDUCE_GATE: True, MAX_GATE: True})
    assert config.feature_gates == ((MAX_GATE, True), (REDUCE_GATE, True))
    assert hash(config) == hash(kubelet_config({MAX_GATE: True, REDUCE_GATE: True}))


@pytest.mark.parametrize(
    ("doc", "field", "text"),
    [
        ({"featureGates": [REDUCE_GATE]}, "featureGates", "map of gate name"),
        ({"featureGates": {REDUCE_GATE: "true"}}, f"featureGates.{REDUCE_GATE}", "'true'"),
        ({"featureGates": {REDUCE_GATE: 1}}, f"featureGates.{REDUCE_GATE}", "got 1"),
        ({"crashLoopBackOff": "2s"}, "crashLoopBackOff", "expected a map"),
        (
            {"crashLoopBackOff": {"maxContainerRestartPeriod": 2}},
            "crashLoopBackOff.maxContainerRestartPeriod",
            "Go duration string",
        ),
        (
            {"crashLoopBackOff": {"maxContainerRestartPeriod": "abc"}},
            "crashLoopBackOff.maxContainerRestartPeriod",
            "invalid duration 'abc'",
        ),
    ],
)
def test_malformed_fields_name_the_field(doc: dict[str, Any], field: str, text: str) -> None:
    with pytest.raises(KubeletConfigError) as caught:
        KubeletBackoffConfig.from_kubelet_configuration(doc)
    assert caught.value.field == field
    assert text in str(caught.value)
    assert str(caught.value).startswith(f"{field}: ")


# --- validation -----------------------------------------------------------------


def test_known_gates_include_the_two_backoff_gates_and_related_ones() -> None:
    assert {
        MAX_GATE,
        REDUCE_GATE,
        "ContainerRestartRules",
        "RestartAllContainersOnContainerExits",
    } <= KNOWN_FEATURE_GATES


def test_unknown_gate_is_reported_with_a_suggestion() -> None:
    problems = validate_config(kubelet_config({"ReduceDefaultCrashLoopBackoffDecay": True}))
    assert len(problems) == 1
    assert problems[0].field == "featureGates.ReduceDefaultCrashLoopBackoffDecay"
    assert "unknown feature gate" in problems[0].message
    assert f'did you mean "{REDUCE_GATE}"' in problems[0].fix


def test_unrelated_unknown_gate_lists_the_known_ones() -> None:
    (problem,) = validate_config(kubelet_config({"Zzz": True}))
    assert "did you mean" not in problem.fix
    assert MAX_GATE in problem.fix


def test_unknown_gates_do_not_block_the_curve() -> None:
    config = kubelet_config({"SomeFutureGate": True}, "2s")
    assert validate_config(config)
    assert curve_for(config).maximum == timedelta(seconds=2)


def test_a_gate_is_known_only_to_the_releases_that_have_it() -> None:
    config = kubelet_config({"ContainerRestartRules": True})
    assert validate_config(config, RELEASES[34]) == ()
    (problem,) = validate_config(config, RELEASES[33])
    assert problem.field == "featureGates.ContainerRestartRules"
    assert "kubelet 1.33 has no gate of that name" in problem.message


def test_valid_configs_have_no_problems() -> None:
    assert validate_config(kubelet_config()) == ()
    assert validate_config(kubelet_config({REDUCE_GATE: True, MAX_GATE: True}, "60s")) == ()


def test_field_with_max_gate_off_is_reported() -> None:
    (problem,) = validate_config(kubelet_config({MAX_GATE: False}, "2s"))
    assert problem.field == "crashLoopBackOff.maxContainerRestartPeriod"
    assert "refuses to start" in problem.message
    assert f"featureGates.{MAX_GATE}: true" in problem.fix


def test_all_problems_are_reported_together() -> None:
    problems = validate_config(kubelet_config({"Typo": True, MAX_GATE: True}, "500ms"))
    assert [p.field for p in problems] == [
        "featureGates.Typo",
        "crashLoopBackOff.maxContainerRestartPeriod",
    ]


# --- the curve itself -------------------------------------------------------------


def test_restart_one_is_immediate() -> None:
    assert curve().delay_before_restart(1) == timedelta(0)


@pytest.mark.parametrize("n", [0, -1, True])
def test_restart_numbers_start_at_one(n: int) -> None:
    with pytest.raises(ValueError, match="restart numbers start at 1"):
        curve().delay_before_restart(n)


def test_huge_restart_numbers_stay_at_the_maximum() -> None:
    assert curve().delay_before_restart(10**6) == timedelta(seconds=300)


def test_delays_lists_restarts_from_one() -> None:
    assert curve().delays(0) == []
    assert curve().delays(2) == seconds(0, 10)
    with pytest.raises(ValueError, match="must not be negative"):
        curve().delays(-1)


@pytest.mark.parametrize(
    ("gates", "field", "expected"),
    [
        ({}, "2s", 2),
        ({REDUCE_GATE: True}, "2s", 3),
        ({REDUCE_GATE: True}, "60s", 8),
        ({}, None, 7),
        ({REDUCE_GATE: True}, None, 11),
        ({}, "1s", 2),
    ],
)
def test_restarts_until_cap(gates: dict[str, bool], field: str | None, expected: int) -> None:
    result = curve(gates, field)
    assert result.restarts_until_cap() == expected
    assert result.delay_before_restart(expected) == result.maximum
    assert result.delay_before_restart(expected - 1) < result.maximum


def test_reset_after_is_a_flat_ten_minutes() -> None:
    assert timedelta(minutes=10) == RESET_AFTER
    assert curve().reset_after == RESET_AFTER
    assert curve(max_period="2s").reset_after == RESET_AFTER


def test_describe_shows_the_curve_to_the_cap() -> None:
    assert curve(max_period="2s").describe() == (
        "0s, 2s, 2s, ... (initial 2s, max 2s, reset by a run over 10m)"
    )
    assert curve().describe().startswith("0s, 10s, 20s, 40s, 1m20s, 2m40s, 5m, 5m, ...")


@pytest.mark.parametrize(
    ("initial", "maximum", "reset_after", "message"),
    [
        (0, 10, 600, "initial backoff must be positive"),
        (-1, 10, 600, "initial backoff must be positive"),
        (10, 5, 600, "below the initial"),
        (1, 10, 0, "reset_after must be positive"),
    ],
)
def test_curve_rejects_impossible_parameters(
    initial: float, maximum: float, reset_after: float, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        BackoffCurve(
            timedelta(seconds=initial), timedelta(seconds=maximum), timedelta(seconds=reset_after)
        )


# --- the level the kubelet reports ---------------------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            "back-off 10s restarting failed container=app "
            "pod=crash-0_demo(0b6c1f2e-1d7a-4c43-9c55-7e2f3c6b1a90)",
            timedelta(seconds=10),
        ),
        ("back-off 20s restarting failed container=app pod=x_ns(uid)", timedelta(seconds=20)),
        ("back-off 1m0s restarting failed container=app pod=x_ns(uid)", timedelta(seconds=60)),
        ("back-off 2m40s restarting failed container=app pod=x_ns(uid)", timedelta(seconds=160)),
        ("back-off 5m0s restarting failed container=app pod=x_ns(uid)", timedelta(seconds=300)),
        ("back-off 1s restarting failed container=proxy pod=x_ns(uid)", timedelta(seconds=1)),
        ("back-off 500ms restarting failed container=app pod=x_ns(u)", timedelta(milliseconds=500)),
        ("back-off 1.5s restarting failed container=app pod=x_ns(u)", timedelta(seconds=1.5)),
    ],
)
def test_parse_backoff_message(message: str, expected: timedelta) -> None:
    assert parse_backoff_message(message) == expected


@pytest.mark.parametrize(
    "message",
    [
        "",
        "container create failed: exec: not found",
        'Back-off pulling image "busybox"',
        "back-off restarting failed container",
    ],
)
def test_other_waiting_messages_have_no_level(message: str) -> None:
    assert parse_backoff_message(message) is None


def test_a_backoff_message_with_an_unreadable_level_raises() -> None:
    with pytest.raises(DurationError, match="'20x'"):
        parse_backoff_message("back-off 20x restarting failed container=app pod=x_ns(uid)")


def test_expected_reported_backoff_matches_the_delay_from_restart_two() -> None:
    result = curve()
    assert result.expected_reported_backoff(1) is None
    for n in range(2, 12):
        assert result.expected_reported_backoff(n) == result.delay_before_restart(n)
    assert [result.expected_reported_backoff(n) for n in (2, 3, 7)] == seconds(10, 20, 300)


def test_expected_reported_backoff_round_trips_through_go_formatting() -> None:
    result = curve({REDUCE_GATE: True})
    go_text = {2: "1s", 8: "1m4s", 10: "4m16s", 11: "5m0s"}
    for n, text in go_text.items():
        message = f"back-off {text} restarting failed container=app pod=p_ns(uid)"
        assert parse_backoff_message(message) == result.expected_reported_backoff(n)


# --- tolerance -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("nominal", "upper"),
    [
        (0, 5),
        (1, 3),
        # The notes' example says 2.0..3.5s, but their formula gives 4.5s; the
        # formula is what is implemented.
        (2, 4.5),
        (10, 16.5),
        (60, 91.5),
        (120, 151.5),
        (300, 331.5),
    ],
)
def test_upper_tolerance(nominal: float, upper: float) -> None:
    assert upper_tolerance(timedelta(seconds=nominal)) == timedelta(seconds=upper)


def test_upper_tolerance_constants() -> None:
    assert timedelta(seconds=5) == FIRST_RESTART_UPPER_BOUND
    assert timedelta(seconds=1.5) == RESTART_OVERHEAD


def test_upper_tolerance_refuses_negative_backoff() -> None:
    with pytest.raises(ValueError, match="cannot be negative"):
        upper_tolerance(timedelta(seconds=-1))
