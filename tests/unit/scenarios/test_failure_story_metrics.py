"""Metrics of the scenarios beyond the talk's: StatefulSet, liveness kills, restart rules."""

from __future__ import annotations

import dataclasses
import json

import pytest

from crashloop_harness.model.backoff import BackoffCurve, upper_tolerance
from crashloop_harness.recording.ownlog import own_attempts
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.scenarios import common, spans
from crashloop_harness.scenarios import liveness_kill as lk
from crashloop_harness.scenarios import restart_all as ra
from crashloop_harness.scenarios import restart_rules as rr
from crashloop_harness.scenarios import statefulset_ordinal as so
from crashloop_harness.scenarios.common import Subject
from tests.unit.scenario_factories import DEFAULT, FAST, REDUCED, T0, S, record, timeline

CURVES = {"fast": FAST, "reduced": REDUCED, "default": DEFAULT}


def _on_pod(records: list[AttemptRecord], pod: str) -> list[AttemptRecord]:
    return [dataclasses.replace(r, pod=pod, pod_uid=f"uid-{pod}") for r in records]


def _with_exit(records: list[AttemptRecord], attempt: int, code: int) -> list[AttemptRecord]:
    return [dataclasses.replace(r, exit_code=code) if r.attempt == attempt else r for r in records]


def _span_s(curve: BackoffCurve, restarts: int) -> float:
    return sum(curve.delay_before_restart(n).total_seconds() for n in range(1, restarts + 1))


# --- the shared curve span ------------------------------------------------------------------


def test_curve_span_adds_the_backoffs_and_the_work_between() -> None:
    attempts = timeline(DEFAULT, 1.0, 4, exit_code=1)
    span = spans.curve_span(DEFAULT, attempts, 3)
    assert isinstance(span, spans.CurveSpan)
    assert span.delays_s == (0.0, 10.0, 20.0)  # the first restart is immediate
    assert span.work_s == pytest.approx(2.0)  # attempts 1 and 2, a second each
    assert span.expected_s == pytest.approx(32.0)
    assert span.first_exit_ns == attempts[0].finished_at_ns
    uppers = sum(
        upper_tolerance(DEFAULT.delay_before_restart(n)).total_seconds() for n in (1, 2, 3)
    )
    assert spans.span_upper_s(DEFAULT, span) == pytest.approx(uppers + 2.0)


def test_curve_span_names_what_is_missing() -> None:
    attempts = timeline(DEFAULT, 1.0, 4, exit_code=1)
    assert "attempt 0" in str(spans.curve_span(DEFAULT, attempts[1:], 3))
    gap = [a for a in attempts if a.attempt != 1]
    assert "between 1 and 2" in str(spans.curve_span(DEFAULT, gap, 3))


def test_span_metric_without_its_end_is_unmeasured() -> None:
    attempts = timeline(FAST, 1.0, 4, exit_code=1)
    metric = spans.span_metric("x_s", FAST, attempts, 3, end_ns=None, end="the thing")
    assert metric.measured is None
    assert not metric.passed
    assert "the thing was not seen" in metric.detail


# --- liveness kill ----------------------------------------------------------------------------


def _killed(curve: BackoffCurve, overshoot_s: float = 0.3, code: int = 143) -> list[AttemptRecord]:
    records = timeline(
        curve, 1.2, lk.KILLS + 1, overshoot_s=overshoot_s, exit_code=code, reason="Error"
    )
    return _on_pod(records, "liveness-w")


@pytest.mark.parametrize("worker", sorted(CURVES))
def test_probe_kills_on_the_curve_pass(worker: str) -> None:
    curve = CURVES[worker]
    result = lk.liveness_kill(Subject(worker, "n", curve), attempts=_killed(curve))
    assert result.passed, result.failures
    loop = result.metric(lk.HEADLINE.metric)
    assert loop.expected is not None
    assert loop.expected == pytest.approx(_span_s(curve, lk.KILLS) + 1.2 * (lk.KILLS - 1))
    assert loop.measured == pytest.approx(loop.expected + 0.3 * lk.KILLS)
    assert loop.restarts == lk.KILLS
    assert result.metric("probe_kills").measured == lk.KILLS
    assert result.metric("restarts_on_crash_curve").measured == lk.KILLS


def test_probe_kills_off_the_crash_curve_are_reported_not_failed() -> None:
    # Killed containers restarted at once, measured beside the default crash curve.
    attempts = _killed(DEFAULT, overshoot_s=0.05)
    immediate = [
        dataclasses.replace(a, started_at_ns=T0 + int(a.attempt * 1.25 * S)) if a.attempt else a
        for a in attempts
    ]
    immediate = [
        dataclasses.replace(a, finished_at_ns=a.started_at_ns + int(1.2 * S))
        if a.finished_at_ns
        else a
        for a in immediate
    ]
    result = lk.liveness_kill(Subject("w", "n", DEFAULT), attempts=immediate)
    assert result.passed, result.failures
    on_curve = result.metric("restarts_on_crash_curve")
    assert on_curve.measured == 1  # only restart 1, whose crash-curve delay is 0
    assert "would not pass" in result.metric("after_kill_2_s").detail
    loop = result.metric(lk.HEADLINE.metric)
    assert loop.measured is not None
    assert loop.expected is not None
    assert loop.measured < loop.expected


def test_attempts_that_crashed_instead_of_being_killed_fail_the_kill_count() -> None:
    attempts = _with_exit(_killed(FAST), 1, 1)
    result = lk.liveness_kill(Subject("w", "n", FAST), attempts=attempts)
    kills = result.metric("probe_kills")
    assert kills.measured == lk.KILLS - 1
    assert not kills.passed


def test_a_missing_restart_leaves_the_kill_loop_unmeasured() -> None:
    attempts = [a for a in _killed(FAST) if a.attempt != lk.KILLS]
    result = lk.liveness_kill(Subject("w", "n", FAST), attempts=attempts)
    assert result.metric(lk.HEADLINE.metric).measured is None
    assert not result.passed


def test_sigkill_after_the_grace_period_counts_as_a_kill() -> None:
    result = lk.liveness_kill(Subject("w", "n", FAST), attempts=_killed(FAST, code=137))
    assert result.metric("probe_kills").passed


# --- restart rules ----------------------------------------------------------------------------


def _rules(curve: BackoffCurve, final_code: int = 1) -> list[AttemptRecord]:
    records = timeline(curve, 0.5, rr.RETRIES + 1, exit_code=rr.RETRIABLE_EXIT_CODE, reason="Error")
    return _with_exit(_on_pod(records, "rules-w"), rr.RETRIES, final_code)


@pytest.mark.parametrize("worker", sorted(CURVES))
def test_rule_restarts_on_the_curve_then_the_final_exit_pass(worker: str) -> None:
    curve = CURVES[worker]
    result = rr.restart_rules(Subject(worker, "n", curve), attempts=_rules(curve), phase="Failed")
    assert result.passed, result.failures
    retries = result.metric(rr.HEADLINE.metric)
    assert retries.expected == pytest.approx(_span_s(curve, rr.RETRIES) + 0.5 * (rr.RETRIES - 1))
    assert result.metric("retriable_exits").measured == rr.RETRIES
    assert result.metric("final_exit_code").measured == 1
    assert [m.name for m in result.metrics if m.name.startswith("retry_")][:1] == ["retry_1_s"]


def test_a_pod_still_running_after_the_final_exit_fails() -> None:
    result = rr.restart_rules(Subject("w", "n", FAST), attempts=_rules(FAST), phase="Running")
    assert not result.metric("pod_ended").passed
    assert "Running" in result.metric("pod_ended").detail


def test_a_restart_after_the_final_exit_fails() -> None:
    attempts = _rules(FAST)
    extra = record(rr.RETRIES + 1, 60.0, 60.5, pod="rules-w", exit_code=1)
    result = rr.restart_rules(Subject("w", "n", FAST), attempts=[*attempts, extra], phase="Failed")
    assert result.metric("restarts_after_final_exit").measured == 1
    assert not result.passed


def test_a_final_exit_that_is_retriable_fails() -> None:
    attempts = _rules(FAST, final_code=rr.RETRIABLE_EXIT_CODE)
    result = rr.restart_rules(Subject("w", "n", FAST), attempts=attempts, phase="Failed")
    assert not result.metric("final_exit_code").passed


# --- StatefulSet ordinal ----------------------------------------------------------------------


def _ordinals(
    curve: BackoffCurve, fail_times: int, *, start_gap_s: float = 2.0
) -> tuple[list[AttemptRecord], dict[str, int]]:
    """Ordinal 0 Ready, ordinal 1 failing ``fail_times`` times, then 2 and 3 in order."""
    worker = "w"
    ready: dict[str, int] = {so.ordinal_pod(worker, 0): T0 - 3 * S}
    first = _on_pod([record(0, -5.0, None, exit_code=None)], so.ordinal_pod(worker, 0))
    failing = timeline(curve, 1.0, fail_times + 1, exit_code=1, reason="Error", last_running=True)
    failing = _on_pod(failing, so.ordinal_pod(worker, 1))
    healthy_start = failing[-1].started_at_ns
    ready[so.ordinal_pod(worker, 1)] = healthy_start + S // 2
    later = []
    previous_ready = ready[so.ordinal_pod(worker, 1)]
    for ordinal in (2, 3):
        start = previous_ready + int(start_gap_s * S)
        pod = so.ordinal_pod(worker, ordinal)
        later.append(
            dataclasses.replace(
                record(0, 0.0, None, pod=pod), started_at_ns=start, pod_uid=f"uid-{pod}"
            )
        )
        previous_ready = ready[pod] = start + S // 2
    return first + failing + later, ready


def _sts(
    curve: BackoffCurve, attempts: list[AttemptRecord], ready: dict[str, int], fail_times: int
) -> common.WorkerResult:
    return so.statefulset_ordinal(
        Subject("w", "n", curve), attempts=attempts, fail_times=fail_times, ready_ns=ready
    )


@pytest.mark.parametrize("worker", sorted(CURVES))
def test_a_set_held_back_by_ordinal_1_on_the_curve_passes(worker: str) -> None:
    curve = CURVES[worker]
    attempts, ready = _ordinals(curve, 3)
    result = _sts(curve, attempts, ready, 3)
    assert result.passed, result.failures
    headline = result.metric(so.HEADLINE.metric)
    assert headline.expected is not None
    assert headline.expected == pytest.approx(_span_s(curve, 3) + 2.0)
    # Three 0.3s overshoots, Ready 0.5s after each start, 2s before each later start.
    assert headline.measured == pytest.approx(headline.expected + 0.9 + 0.5 + 2 * 2.5)
    held = result.metric("held_back_ordinal_2_s")
    assert held.measured is not None
    assert held.lower is not None
    assert held.measured > held.lower
    assert result.metric("failures").measured == 3


def test_an_ordinal_started_before_its_predecessor_was_ready_fails() -> None:
    attempts, ready = _ordinals(FAST, 2)
    early = so.ordinal_pod("w", 1)
    ready[early] += 10 * S  # ordinal 1 turned Ready long after ordinal 2 started
    result = _sts(FAST, attempts, ready, 2)
    held = result.metric("held_back_ordinal_2_s")
    assert not held.passed
    assert "OrderedReady" in held.detail


def test_later_ordinals_slower_than_their_allowance_fail_the_headline() -> None:
    attempts, ready = _ordinals(FAST, 2, start_gap_s=so.LATER_ORDINAL_START.total_seconds() + 5)
    result = _sts(FAST, attempts, ready, 2)
    assert not result.metric(so.HEADLINE.metric).passed


def test_a_restart_of_another_ordinal_fails() -> None:
    attempts, ready = _ordinals(FAST, 2)
    pod = so.ordinal_pod("w", 3)
    restarted = dataclasses.replace(
        record(1, 0.0, None, pod=pod), started_at_ns=T0 + 99 * S, pod_uid=f"uid-{pod}"
    )
    result = _sts(FAST, [*attempts, restarted], ready, 2)
    assert result.metric("other_ordinals_restarts").measured == 1
    assert not result.passed


def test_a_set_that_never_got_its_last_ordinal_ready_is_unmeasured() -> None:
    attempts, ready = _ordinals(FAST, 2)
    del ready[so.ordinal_pod("w", 3)]
    result = _sts(FAST, attempts, ready, 2)
    assert result.metric(so.HEADLINE.metric).measured is None
    assert not result.passed


# --- RestartAllContainers -------------------------------------------------------------------


def _reset_timeline(
    curve: BackoffCurve,
    *,
    pod: str,
    container: str,
    reset_s: float,
    level_after_s: float | None = None,
) -> list[AttemptRecord]:
    """TRIGGER_AFTER crashes on the curve, the trigger, a re-run after ``reset_s``, its crash,
    then the restart after ``level_after_s`` (default: the old level, 0.3s late)."""
    records = timeline(
        curve, 0.5, ra.TRIGGER_AFTER + 1, exit_code=1, reason="Error", container=container
    )
    records = _with_exit(_on_pod(records, pod), ra.TRIGGER_AFTER, ra.TRIGGER_EXIT_CODE)
    trigger_end = records[-1].finished_at_ns
    assert trigger_end is not None
    rerun_start = trigger_end + int(reset_s * S)
    old_level = curve.delay_before_restart(ra.TRIGGER_AFTER + 1).total_seconds()
    wait = old_level + 0.3 if level_after_s is None else level_after_s
    rerun = dataclasses.replace(
        record(ra.TRIGGER_AFTER + 1, 0.0, 0.5, pod=pod, container=container, exit_code=1),
        started_at_ns=rerun_start,
        finished_at_ns=rerun_start + S // 2,
    )
    after = dataclasses.replace(
        record(ra.TRIGGER_AFTER + 2, 0.0, None, pod=pod, container=container),
        started_at_ns=rerun_start + S // 2 + int(wait * S),
    )
    return [*records, rerun, after]


def _restart_all_run(
    curve: BackoffCurve,
    version: str,
    *,
    single_reset_s: float = 0.8,
    level_after_s: float | None = None,
    app_restarts: int | None = 1,
) -> common.WorkerResult:
    one = _reset_timeline(
        curve,
        pod=ra.single_pod_name("w"),
        container="app",
        reset_s=single_reset_s,
        level_after_s=level_after_s,
    )
    watcher = _reset_timeline(curve, pod=ra.pair_pod_name("w"), container="watcher", reset_s=0.7)
    return ra.restart_all(
        Subject("w", "n", curve),
        single=one,
        watcher=watcher,
        app_restarts=app_restarts,
        kubelet_version=version,
    )


@pytest.mark.parametrize("worker", sorted(CURVES))
def test_a_reset_at_once_keeping_the_level_passes(worker: str) -> None:
    result = _restart_all_run(CURVES[worker], "v1.36.4")
    assert result.passed, result.failures
    assert result.metric("single_reset_s").measured == pytest.approx(0.8)
    level = result.metric("single_level_after_reset_s")
    assert (
        level.expected == CURVES[worker].delay_before_restart(ra.TRIGGER_AFTER + 1).total_seconds()
    )
    assert result.metric("app_restarts_by_reset").measured == 1


def test_a_reset_that_advanced_the_counter_fails() -> None:
    advanced = DEFAULT.delay_before_restart(ra.TRIGGER_AFTER + 2).total_seconds()
    result = _restart_all_run(DEFAULT, "v1.36.4", level_after_s=advanced)
    assert not result.metric("single_level_after_reset_s").passed


def test_a_reset_that_cleared_the_counter_fails() -> None:
    result = _restart_all_run(DEFAULT, "v1.36.4", level_after_s=0.2)
    assert not result.metric("single_level_after_reset_s").passed


def test_a_single_container_may_wait_for_the_resync_on_1_35_only() -> None:
    assert _restart_all_run(FAST, "v1.35.8", single_reset_s=70.0).metric("single_reset_s").passed
    late = _restart_all_run(FAST, "v1.36.4", single_reset_s=70.0).metric("single_reset_s")
    assert not late.passed
    assert "1.36" in late.detail


def test_a_reset_delayed_by_the_back_off_fails() -> None:
    # Restart 4's 40s on the default curve: what the reset must not wait.
    result = _restart_all_run(DEFAULT, "v1.36.4", single_reset_s=40.3)
    assert not result.metric("single_reset_s").passed


def test_a_kubelet_without_the_action_is_unmeasured_with_the_releases_that_have_it() -> None:
    result = _restart_all_run(FAST, "v1.34.11")
    assert not result.passed
    (metric,) = result.metrics
    assert metric.measured is None
    assert "1.36+" in metric.detail


def test_a_trigger_exit_with_another_code_is_not_a_reset() -> None:
    attempts = _reset_timeline(FAST, pod=ra.single_pod_name("w"), container="app", reset_s=0.5)
    attempts = _with_exit(attempts, ra.TRIGGER_AFTER, 1)
    result = ra.restart_all(
        Subject("w", "n", FAST),
        single=attempts,
        watcher=attempts,
        app_restarts=1,
        kubelet_version="v1.36.4",
    )
    assert "not the trigger's" in result.metric("single_reset_s").detail


def test_an_app_not_restarted_by_the_reset_fails() -> None:
    result = _restart_all_run(FAST, "v1.36.4", app_restarts=0)
    assert not result.metric("app_restarts_by_reset").passed
    assert (
        _restart_all_run(FAST, "v1.36.4", app_restarts=None)
        .metric("app_restarts_by_reset")
        .measured
        is None
    )


def _log(*lines: dict[str, object]) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


def test_own_attempts_follow_the_workload_s_count_not_the_kubelet_s() -> None:
    text = (
        _log(
            {"event": "start", "unix_ns": 10, "mode": "trigger"},
            {"event": "start", "unix_ns": 11, "mode": "sleep"},
            {"event": "exit", "unix_ns": 20, "mode": "trigger", "exit_code": 1},
            {"event": "start", "unix_ns": 30, "mode": "trigger"},
            {"event": "exit", "unix_ns": 40, "mode": "trigger", "exit_code": 88},
            {"event": "start", "unix_ns": 90, "mode": "trigger"},
        )
        + '{"event": "exit", "unix_'
    )  # torn by a kill
    attempts = own_attempts(text, ra.TRIGGER_MODE)
    assert [(a.attempt, a.started_at_ns, a.finished_at_ns, a.exit_code) for a in attempts] == [
        (0, 10, 20, 1),
        (1, 30, 40, 88),
        (2, 90, None, None),
    ]
    assert len(own_attempts(text, ra.APP_MODE)) == 1
    assert own_attempts("", ra.TRIGGER_MODE) == []
