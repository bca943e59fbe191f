"""Scenario metrics from synthetic attempt records and workload logs (pure, no cluster)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import timedelta

import pytest

from crashloop_harness.model.backoff import BackoffCurve, upper_tolerance
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.scenarios import (
    CRITICAL_SIDECAR,
    FAST_RESTART,
    TASK_ISOLATION,
    common,
    eventlog,
)
from crashloop_harness.scenarios import critical_sidecar as cs
from crashloop_harness.scenarios import fast_restart as fr
from crashloop_harness.scenarios import task_isolation as ti
from crashloop_harness.scenarios.common import Subject
from tests.unit.scenario_factories import DEFAULT, FAST, REDUCED, T0, S, record, timeline


def events(*pairs: tuple[str, float]) -> list[eventlog.LogEvent]:
    return [eventlog.LogEvent(name, T0 + int(at * S)) for name, at in pairs]


# --- Metric / WorkerResult ----------------------------------------------------------------


def test_bounded_passes_only_inside_its_bounds() -> None:
    inside = common.bounded("x", "s", expected=2, measured=2.5, lower=2, upper=3)
    assert inside.passed
    assert not common.bounded("x", "s", expected=2, measured=3.1, lower=2, upper=3).passed
    assert not common.bounded("x", "s", expected=2, measured=1.9, lower=2, upper=3).passed
    assert common.bounded("x", "s", expected=None, measured=9.0, lower=None, upper=None).passed
    missing = common.bounded("x", "s", expected=2, measured=None, lower=None, upper=None)
    assert not missing.passed
    assert missing.detail == "not measured"


def test_worker_result_passes_only_with_metrics_all_passing() -> None:
    good = common.bounded("a", "s", expected=1, measured=1, lower=1, upper=1)
    bad = common.bounded("b", "count", expected=0, measured=2, lower=0, upper=0, detail="why")
    assert not common.WorkerResult(scenario="s", worker="w", node="n", metrics=()).passed
    assert common.WorkerResult(scenario="s", worker="w", node="n", metrics=(good,)).passed
    failing = common.WorkerResult(scenario="s", worker="w", node="n", metrics=(good, bad))
    assert not failing.passed
    (message,) = failing.failures
    assert message.startswith("s w: b: measured 2.000, expected 0.000 in [0.000, 0.000] count")
    assert message.endswith("why")
    assert failing.metric("a") is good
    with pytest.raises(KeyError, match="has no metric 'zzz'; it has a, b"):
        failing.metric("zzz")
    data = failing.to_dict()
    assert data["passed"] is False
    assert [x["name"] for x in data["metrics"]] == ["a", "b"]
    json.dumps(data)


# --- logs ---------------------------------------------------------------------------------


def test_parse_events_reads_lines_and_drops_a_torn_tail() -> None:
    text = '{"event":"connected","unix_ns":5}\n\n{"event":"cut","unix_ns":7}\n{"event":"res'
    assert eventlog.parse_events(text) == [
        eventlog.LogEvent("connected", 5),
        eventlog.LogEvent("cut", 7),
    ]
    assert eventlog.parse_events("") == []


@pytest.mark.parametrize(
    "bad",
    ['{"event":"cut"}', "not json", '{"event":1,"unix_ns":2}', '{"event":"a","unix_ns":true}'],
)
def test_parse_events_refuses_a_bad_line_before_the_end(bad: str) -> None:
    with pytest.raises(ValueError, match="line 1"):
        eventlog.parse_events(bad + '\n{"event":"cut","unix_ns":7}\n')


def test_isolation_intervals_pair_cuts_with_restores() -> None:
    log = events(("connected", 0), ("cut", 5), ("restored", 7), ("cut", 9), ("cut", 9.5))
    assert cs.isolation_intervals(log) == [
        cs.Interval(T0 + 5 * S, T0 + 7 * S),
        cs.Interval(T0 + 9 * S, None),
    ]
    # Out-of-order input is sorted; a restore without a cut is ignored.
    assert cs.isolation_intervals(events(("restored", 1), ("restored", 3), ("cut", 2))) == [
        cs.Interval(T0 + 2 * S, T0 + 3 * S)
    ]


def test_interval_length_of_an_open_interval_needs_an_end() -> None:
    assert cs.Interval(10, None).length_ns() == 0
    assert cs.Interval(10, None).length_ns(until_ns=25) == 15
    assert cs.Interval(10, 4).length_ns() == 0


def test_sidecar_downtimes_run_from_exit_to_next_start() -> None:
    attempts = [record(0, 0, 7), record(1, 8, 15), record(2, 17, None)]
    assert cs.sidecar_downtimes(attempts) == {
        1: cs.Interval(T0 + 7 * S, T0 + 8 * S),
        2: cs.Interval(T0 + 15 * S, T0 + 17 * S),
    }
    assert cs.sidecar_downtimes([record(0, 0, 7)]) == {1: cs.Interval(T0 + 7 * S, None)}


# --- task isolation -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("curve", "window_s", "expected"),
    [
        (FAST, 120, 24),  # 3s + 2s per session after the first immediate restart
        (REDUCED, 120, 8),
        (DEFAULT, 120, 5),  # sessions end at 3, 6, 19, 42 and 85s
        (FAST, 2, 0),
        (FAST, 3, 1),
    ],
)
def test_sessions_completed_follows_the_curve(
    curve: BackoffCurve, window_s: float, expected: int
) -> None:
    got = ti.sessions_completed(
        timedelta(seconds=3), timedelta(seconds=window_s), curve.delay_before_restart
    )
    assert got == expected


def test_sessions_completed_needs_a_positive_session() -> None:
    with pytest.raises(ValueError, match="some time"):
        ti.sessions_completed(timedelta(0), timedelta(seconds=10), FAST.delay_before_restart)


@pytest.mark.parametrize("curve", [FAST, REDUCED, DEFAULT])
def test_task_isolation_on_the_curve_passes(curve: BackoffCurve) -> None:
    attempts = timeline(curve, 3.0, 30)
    result = ti.task_isolation(
        Subject("w", "n", curve),
        attempts=attempts,
        window=timedelta(seconds=120),
        session=timedelta(seconds=3),
        fresh_pod_ns=[2 * S, 3 * S, 4 * S],
    )
    assert result.scenario == TASK_ISOLATION
    assert result.passed, result.failures
    assert result.metric("reset_1_s").expected == 0
    assert result.metric("reset_2_s").expected == curve.delay_before_restart(2).total_seconds()
    assert result.metric("session_failures").measured == 0
    assert result.metric("fresh_pod_median_s").measured == 3.0
    assert result.metric("fresh_pod_2_s").measured == 3.0
    sessions = result.metric("sessions_in_window")
    assert sessions.lower is not None
    assert sessions.upper is not None
    assert sessions.lower <= sessions.upper


def test_task_isolation_counts_only_sessions_finished_in_the_window() -> None:
    attempts = timeline(DEFAULT, 3.0, 10)
    result = ti.task_isolation(
        Subject("w", "n", DEFAULT),
        attempts=attempts,
        window=timedelta(seconds=120),
        session=timedelta(seconds=3),
    )
    # Ends at 3, 6.3, 19.6, 42.9, 86.2; the next starts at 169.5 (outside).
    assert result.metric("sessions_in_window").measured == 5
    assert not any(x.name == "reset_5_s" for x in result.metrics)
    assert result.metric("fresh_pod_median_s").measured is None
    assert not result.passed  # no baseline was measured


def test_task_isolation_slower_than_the_tolerance_fails() -> None:
    attempts = timeline(FAST, 3.0, 20, overshoot_s=3.0)
    result = ti.task_isolation(
        Subject("w", "n", FAST),
        attempts=attempts,
        window=timedelta(seconds=120),
        session=timedelta(seconds=3),
        fresh_pod_ns=[S],
    )
    assert not result.metric("reset_2_s").passed
    assert "too late" in result.metric("reset_2_s").detail
    assert not result.metric("reset_mean_s").passed
    assert not result.metric("sessions_in_window").passed


def test_task_isolation_flags_failing_sessions() -> None:
    attempts = timeline(FAST, 3.0, 5, exit_code=1)
    result = ti.task_isolation(
        Subject("w", "n", FAST),
        attempts=attempts,
        window=timedelta(seconds=60),
        session=timedelta(seconds=3),
        fresh_pod_ns=[S],
    )
    assert result.metric("session_failures").measured == 5
    assert result.metric("sessions_in_window").measured == 0
    assert not result.passed


def test_task_isolation_without_records_says_so() -> None:
    result = ti.task_isolation(
        Subject("w", "n", FAST),
        attempts=[],
        window=timedelta(seconds=60),
        session=timedelta(seconds=3),
    )
    assert not result.passed
    assert result.metric("sessions_in_window").detail == "no session was recorded"


# --- fast restart -------------------------------------------------------------------------


def _transient(curve: BackoffCurve, overshoot_s: float = 0.3) -> list[AttemptRecord]:
    return timeline(curve, 1.0, 4, overshoot_s=overshoot_s, exit_code=1, last_running=True)


@pytest.mark.parametrize("curve", [FAST, REDUCED, DEFAULT])
def test_time_to_ready_is_the_sum_of_backoffs_and_runs(curve: BackoffCurve) -> None:
    attempts = _transient(curve)
    healthy_start = attempts[3].started_at_ns
    result = fr.fast_restart(
        Subject("w", "n", curve),
        attempts=attempts,
        fail_times=3,
        ready_ns=healthy_start + S // 2,
    )
    assert result.scenario == FAST_RESTART
    assert result.passed, result.failures
    ready = result.metric("time_to_ready_s")
    delays = sum(curve.delay_before_restart(n).total_seconds() for n in (1, 2, 3))
    assert ready.expected == pytest.approx(delays + 2.0)
    # Three restarts overshoot 0.3s each, then Ready 0.5s after the start.
    assert ready.measured == pytest.approx(delays + 2.0 + 0.9 + 0.5)
    uppers = sum(upper_tolerance(curve.delay_before_restart(n)).total_seconds() for n in (1, 2, 3))
    assert ready.upper == pytest.approx(uppers + 2.0 + fr.READY_SLACK.total_seconds())
    assert result.metric("failures").measured == 3
    assert result.metric("restarts_after_healthy").measured == 0
    assert [x.name for x in result.metrics if x.name.startswith("restart_")][:3] == [
        "restart_1_s",
        "restart_2_s",
        "restart_3_s",
    ]


def test_time_to_ready_too_late_fails() -> None:
    attempts = _transient(DEFAULT)
    ready = attempts[3].started_at_ns + 30 * S
    result = fr.fast_restart(
        Subject("w", "n", DEFAULT), attempts=attempts, fail_times=3, ready_ns=ready
    )
    assert not result.metric("time_to_ready_s").passed
    assert not result.passed


def test_time_to_ready_sooner_than_the_backoffs_fails() -> None:
    # A model that believes in 10s back-offs must reject a fast worker's recovery.
    attempts = _transient(FAST)
    result = fr.fast_restart(
        Subject("w", "n", DEFAULT),
        attempts=attempts,
        fail_times=3,
        ready_ns=attempts[3].started_at_ns + S // 2,
    )
    assert not result.metric("time_to_ready_s").passed
    assert "too early" in result.metric("restart_2_s").detail


def test_fast_restart_without_ready_is_not_measured() -> None:
    result = fr.fast_restart(
        Subject("w", "n", FAST), attempts=_transient(FAST), fail_times=3, ready_ns=None
    )
    ready = result.metric("time_to_ready_s")
    assert ready.measured is None
    assert "ready-probe.log" in ready.detail
    assert not result.passed


def test_fast_restart_without_the_first_failure_is_not_measured() -> None:
    attempts = _transient(FAST)[1:]
    result = fr.fast_restart(
        Subject("w", "n", FAST), attempts=attempts, fail_times=3, ready_ns=T0 + 20 * S
    )
    assert "attempt 0" in result.metric("time_to_ready_s").detail


def test_fast_restart_counts_restarts_after_the_healthy_attempt() -> None:
    attempts = [*timeline(FAST, 1.0, 5, exit_code=1)]
    result = fr.fast_restart(
        Subject("w", "n", FAST), attempts=attempts, fail_times=3, ready_ns=T0 + 9 * S
    )
    assert result.metric("restarts_after_healthy").measured == 1
    assert not result.metric("restarts_after_healthy").passed


def test_fast_restart_with_too_few_failures_fails() -> None:
    attempts = timeline(FAST, 1.0, 4, exit_code=0, last_running=True)
    result = fr.fast_restart(
        Subject("w", "n", FAST), attempts=attempts, fail_times=3, ready_ns=T0 + 9 * S
    )
    assert result.metric("failures").measured == 0
    assert not result.metric("failures").passed


# --- critical sidecar ---------------------------------------------------------------------


def _sidecar(curve: BackoffCurve, kills: int, overshoot_s: float = 0.3) -> list[AttemptRecord]:
    return timeline(
        curve,
        7.0,
        kills + 1,
        overshoot_s=overshoot_s,
        exit_code=137,
        reason="OOMKilled",
        container="proxy",
        last_running=True,
    )


def _client_log(sidecar: Sequence[AttemptRecord], lag_s: float = 0.1) -> list[eventlog.LogEvent]:
    """What the app would log: a cut just after each kill, restored just after each start."""
    log = [eventlog.LogEvent("connected", sidecar[0].started_at_ns + S // 10)]
    by_attempt = {r.attempt: r for r in sidecar}
    for n, previous in by_attempt.items():
        if previous.finished_at_ns is None:
            continue
        log.append(eventlog.LogEvent("cut", previous.finished_at_ns + int(lag_s * S)))
        if n + 1 in by_attempt:
            log.append(
                eventlog.LogEvent("restored", by_attempt[n + 1].started_at_ns + int(lag_s * S))
            )
    return log


def _judge_sidecar(
    curve: BackoffCurve,
    sidecar: Sequence[AttemptRecord],
    log: Sequence[eventlog.LogEvent],
    *,
    app: Sequence[AttemptRecord] | None = None,
    restart_count: int | None = 0,
    window_end_s: float = 150,
) -> common.WorkerResult:
    return cs.critical_sidecar(
        Subject("w", "n", curve),
        sidecar_attempts=sidecar,
        app_attempts=app if app is not None else [record(0, 0.5, None)],
        app_restart_count=restart_count,
        client_events=log,
        window_end_ns=T0 + int(window_end_s * S),
    )


@pytest.mark.parametrize(("curve", "kills"), [(FAST, 12), (REDUCED, 7), (DEFAULT, 4)])
def test_sidecar_isolation_follows_the_curve(curve: BackoffCurve, kills: int) -> None:
    sidecar = _sidecar(curve, kills)
    result = _judge_sidecar(curve, sidecar, _client_log(sidecar))
    assert result.scenario == CRITICAL_SIDECAR
    assert result.passed, result.failures
    assert result.metric("sidecar_oom_kills").measured == kills
    assert result.metric("app_restart_count").measured == 0
    nominal = [curve.delay_before_restart(n).total_seconds() for n in range(1, kills + 1)]
    total = result.metric("isolation_total_s")
    assert total.expected == pytest.approx(sum(nominal))
    assert total.measured == pytest.approx(sum(nominal) + 0.3 * kills)
    longest = result.metric("isolation_longest_s")
    assert longest.expected == max(nominal)
    assert longest.measured == pytest.approx(max(nominal) + 0.3)
    assert result.metric("isolation_1_s").expected == 0
    assert result.metric("sidecar_restart_2_s").passed
    assert result.metric("unexplained_isolation_s").measured == 0


def test_isolated_fraction_orders_the_curves() -> None:
    share = {}
    for name, curve, kills in (
        ("fast", FAST, 15),
        ("reduced", REDUCED, 7),
        ("default", DEFAULT, 4),
    ):
        sidecar = _sidecar(curve, kills)
        result = _judge_sidecar(curve, sidecar, _client_log(sidecar))
        measured = result.metric("isolated_fraction").measured
        assert measured is not None
        share[name] = measured
    assert share["fast"] < share["reduced"] < share["default"]


def test_isolated_fraction_counts_the_open_cut_until_the_window_end() -> None:
    sidecar = [record(0, 0, 10, exit_code=137, reason="OOMKilled", container="proxy")]
    log = events(("connected", 0), ("cut", 10))
    result = _judge_sidecar(DEFAULT, sidecar, log, window_end_s=20)
    assert result.metric("isolated_fraction").measured == pytest.approx(0.5)
    # No complete restart: nothing to judge for isolation.
    assert result.metric("isolation_total_s").measured is None


def _replace(
    sidecar: list[AttemptRecord], attempt: int, exit_code: int, reason: str
) -> list[AttemptRecord]:
    return [
        AttemptRecord(**{**r.__dict__, "exit_code": exit_code, "reason": reason})
        if r.attempt == attempt
        else r
        for r in sidecar
    ]


def test_sidecar_killed_for_another_reason_fails() -> None:
    wrong = _replace(_sidecar(FAST, 3), 2, 1, "Error")
    result = _judge_sidecar(FAST, wrong, _client_log(wrong))
    oom = result.metric("sidecar_oom_kills")
    assert not oom.passed
    assert "(2, 'Error', 1)" in oom.detail


def test_sidecar_killed_at_137_without_the_oom_label_is_named_not_failed() -> None:
    # Seen on cgroup v1: a kill at the limit reported as reason Error, exit 137.
    unlabelled = _replace(_sidecar(FAST, 3), 1, 137, "Error")
    oom = _judge_sidecar(FAST, unlabelled, _client_log(unlabelled)).metric("sidecar_oom_kills")
    assert oom.passed
    assert oom.measured == 2
    assert "attempts [1] exited 137 without the OOMKilled label" in oom.detail


def test_sidecar_never_labelled_oom_fails() -> None:
    unlabelled = _replace(_replace(_sidecar(FAST, 2), 0, 137, "Error"), 1, 137, "Error")
    assert not _judge_sidecar(FAST, unlabelled, []).metric("sidecar_oom_kills").passed


def test_sidecar_never_killed_fails() -> None:
    result = _judge_sidecar(FAST, [record(0, 0, None, container="proxy")], events(("connected", 1)))
    assert not result.metric("sidecar_oom_kills").passed
    assert result.metric("sidecar_oom_kills").detail == "the sidecar was never killed"


@pytest.mark.parametrize(
    ("app", "restart_count", "expected"),
    [
        ([record(0, 0.5, None)], 0, 0),
        ([record(0, 0.5, 20, exit_code=2), record(1, 21, None)], 1, 1),
        ([record(0, 0.5, None)], 2, 2),  # the pod status knows more than the samples
        ([], None, None),
    ],
)
def test_app_restart_count(
    app: list[AttemptRecord], restart_count: int | None, expected: int | None
) -> None:
    sidecar = _sidecar(FAST, 2)
    result = _judge_sidecar(
        FAST, sidecar, _client_log(sidecar), app=app, restart_count=restart_count
    )
    metric = result.metric("app_restart_count")
    assert metric.measured == expected
    assert metric.passed is (expected == 0)


def test_isolation_much_longer_than_the_downtime_fails() -> None:
    sidecar = _sidecar(FAST, 3)
    log = _client_log(sidecar)
    # The app stays cut off 5s longer after restart 2 than the sidecar was down.
    log = [
        e
        if not (e.event == "restored" and e.unix_ns == sidecar[2].started_at_ns + S // 10)
        else eventlog.LogEvent("restored", e.unix_ns + 5 * S)
        for e in log
    ]
    result = _judge_sidecar(FAST, sidecar, log)
    assert not result.metric("isolation_2_s").passed
    assert result.metric("isolation_1_s").passed


def test_a_cut_no_restart_explains_is_reported() -> None:
    sidecar = _sidecar(FAST, 1)
    log = [*_client_log(sidecar), *events(("cut", 60), ("restored", 65))]
    result = _judge_sidecar(FAST, sidecar, log)
    unexplained = result.metric("unexplained_isolation_s")
    assert unexplained.measured == pytest.approx(5.0)
    assert not unexplained.passed


def test_a_restart_the_app_never_noticed_measures_zero() -> None:
    sidecar = _sidecar(FAST, 2)
    log = events(("connected", 0.1))
    result = _judge_sidecar(FAST, sidecar, log)
    assert result.metric("isolation_1_s").measured == 0
    assert result.metric("isolation_1_s").passed  # restart 1 does not wait
    assert not result.metric("isolation_2_s").passed


def test_no_connection_is_a_note() -> None:
    sidecar = _sidecar(FAST, 1)
    result = _judge_sidecar(FAST, sidecar, [])
    assert any("never reached its sidecar" in note for note in result.notes)
    assert result.metric("isolated_fraction").measured is None
