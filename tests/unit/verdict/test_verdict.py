"""Measured restart delays against the expected curve (crashloop_harness.verdict)."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest

from crashloop_harness.model.backoff import UNMEASURED, BackoffCurve
from crashloop_harness.recording.nodepods import PodStartup
from crashloop_harness.recording.records import SOURCE_CRI, SOURCE_SELF, AttemptRecord
from crashloop_harness.verdict import (
    CLOCK_ROUNDING,
    CONFIRM_FROM,
    RESET_LEAD,
    Observation,
    judge_worker,
    observed_enough,
)
from crashloop_harness.verdict.lateness import busy_host_reach_ns
from tests.unit.factories import (
    DEFAULT,
    FAST,
    NS,
    REDUCED,
    attempts,
    expected_reports,
    neighbour_curve,
    nominal,
)

# --- curves that pass ----------------------------------------------------------------------


def test_curves_are_the_talks() -> None:
    # Guard: the curves below are the ones the DESIGN table promises.
    assert [d.total_seconds() for d in FAST.delays(4)] == [0, 2, 2, 2]
    assert [d.total_seconds() for d in REDUCED.delays(9)] == [0, 1, 2, 4, 8, 16, 32, 60, 60]
    assert [d.total_seconds() for d in DEFAULT.delays(8)] == [0, 10, 20, 40, 80, 160, 300, 300]


@pytest.mark.parametrize(
    ("curve", "count"), [(FAST, 8), (REDUCED, 10), (DEFAULT, 8)], ids=["fast", "reduced", "default"]
)
def test_a_kubelet_on_the_curve_passes(curve: BackoffCurve, count: int) -> None:
    verdict = judge_worker(
        attempts(nominal(curve, count), reported=expected_reports(curve, count)), curve
    )
    assert verdict.passed, verdict.failures
    assert verdict.messages == []
    assert [c.n for c in verdict.checks] == list(range(1, count + 1))
    assert [c.expected_s for c in verdict.checks] == [
        d.total_seconds() for d in curve.delays(count)
    ]
    assert all(c.reason == "on the curve" for c in verdict.checks)
    assert (verdict.reported_seen, verdict.reported_expected) == (count - 1, count - 1)
    assert (verdict.worker, verdict.node) == ("fast-1", "crashloop-worker")


def test_measured_and_margin_are_exact() -> None:
    records = attempts([0.5, 2.0])
    records[2] = dataclasses.replace(records[2], started_at_ns=records[2].started_at_ns + 7)
    check = judge_worker(records, FAST).checks[1]
    assert check.measured_s == (2 * NS + 7) / NS
    assert check.margin_s == pytest.approx(7e-9, abs=1e-12)
    assert check.upper_bound_s == 4.5  # 2s + half of 2s + 1.5s
    assert check.passed


def test_a_missed_report_below_the_confirmation_floor_is_counted_not_failed() -> None:
    # 2s messages may come and go between two status updates; the delay decides.
    verdict = judge_worker(attempts(nominal(FAST, 4), reported=[None, 2.0, None, None]), FAST)
    assert verdict.passed
    assert (verdict.reported_seen, verdict.reported_expected) == (1, 3)


def test_a_missed_report_from_the_confirmation_floor_on_is_unconfirmed() -> None:
    assert timedelta(seconds=5) == CONFIRM_FROM
    reports = expected_reports(REDUCED, 6)
    reports[4] = None  # restart 5 waits 8s: its level must be seen
    verdict = judge_worker(attempts(nominal(REDUCED, 6), reported=reports), REDUCED)
    assert [c.passed for c in verdict.checks] == [True, True, True, True, False, True]
    (message,) = verdict.messages
    assert message.startswith("fast-1: restart 5:")
    assert "unconfirmed" in message
    assert "8s level" in message


def test_a_running_last_attempt_is_fine() -> None:
    verdict = judge_worker(attempts(nominal(FAST, 3), last_running=True), FAST)
    assert verdict.passed
    assert len(verdict.checks) == 3


def test_records_are_sorted_by_attempt() -> None:
    records = attempts(nominal(REDUCED, 5), reported=expected_reports(REDUCED, 5))
    verdict = judge_worker(list(reversed(records)), REDUCED)
    assert verdict.passed
    assert [c.n for c in verdict.checks] == [1, 2, 3, 4, 5]


def test_worker_and_node_can_be_named_by_the_caller() -> None:
    verdict = judge_worker(attempts([0.3]), FAST, worker="fast", node="w1")
    assert (verdict.worker, verdict.node) == ("fast", "w1")


def test_only_the_first_attempt_judged_as_recorded_has_nothing_to_fail() -> None:
    verdict = judge_worker(attempts([]), FAST)
    assert verdict.passed
    assert verdict.checks == ()


def test_no_restart_where_restarts_were_needed_is_incomplete() -> None:
    verdict = judge_worker(
        attempts([]), FAST, worker="fast", observation=Observation(required_restarts=10)
    )
    assert not verdict.passed
    (message,) = verdict.messages
    assert message.startswith("fast: incomplete: the observation ended before restart 1")
    assert "restarts up to 10" in message
    assert "only the first run was seen" in message


def test_fewer_restarts_than_needed_is_incomplete_naming_the_last_seen() -> None:
    records = attempts(nominal(FAST, 4))
    verdict = judge_worker(records, FAST, observation=Observation(required_restarts=10))
    assert not verdict.passed
    assert all(c.passed for c in verdict.checks)
    (problem,) = [p.words for p in verdict.problems]
    assert "before restart 5" in problem
    assert "the last restart seen was 4" in problem
    assert verdict.last_restart == 4


def test_exactly_the_needed_restarts_are_complete() -> None:
    records = attempts(nominal(FAST, 4))
    assert judge_worker(records, FAST, observation=Observation(required_restarts=4)).passed


# --- the kubelet's decision, not the container's start ------------------------------------


def test_the_delay_is_counted_to_the_creation_and_start_latency_reported_apart() -> None:
    records = attempts([0.3, 2.1])
    # Attempt 2 created 2.1s after exit 1, started 2.9s later: a slow runtime.
    created = records[2].started_at_ns
    records[2] = dataclasses.replace(
        records[2], created_at_ns=created, started_at_ns=created + 2_900_000_000
    )
    check = judge_worker(records, FAST).checks[1]
    assert check.passed, check.reason
    assert check.measured_s == pytest.approx(2.1)
    assert check.start_latency_s == pytest.approx(2.9)


def test_without_a_creation_time_the_start_counts() -> None:
    check = judge_worker(attempts([0.3, 2.1]), FAST).checks[1]
    assert check.measured_s == pytest.approx(2.1)
    assert check.start_latency_s is None


def test_an_early_creation_fails_however_late_the_start() -> None:
    records = attempts([0.3, 1.5])
    created = records[2].started_at_ns
    records[2] = dataclasses.replace(
        records[2], created_at_ns=created, started_at_ns=created + 1_000_000_000
    )
    check = judge_worker(records, FAST).checks[1]
    assert not check.passed
    assert "too early: restarted (created) after 1.500s" in check.reason


# --- overdue restarts ----------------------------------------------------------------------


def _last_exit(records: list[AttemptRecord]) -> int:
    finished = records[-1].finished_at_ns
    assert finished is not None
    return finished


def test_a_restart_past_its_bound_on_the_nodes_clock_is_overdue() -> None:
    records = attempts(nominal(FAST, 4))
    bound_ns = 4_500_000_000  # 2s + 1s + 1.5s
    at_bound = Observation(now_ns=_last_exit(records) + bound_ns)
    assert judge_worker(records, FAST, observation=at_bound).passed
    past = Observation(now_ns=_last_exit(records) + bound_ns + 1)
    verdict = judge_worker(records, FAST, observation=past)
    (problem,) = [p.words for p in verdict.problems]
    assert problem.startswith("restart 5 overdue: attempt 4 exited at")
    assert "the last restart seen was 4" in problem


def test_a_running_attempt_is_never_overdue() -> None:
    records = attempts(nominal(FAST, 3), last_running=True)
    observation = Observation(now_ns=records[-1].started_at_ns + 3600 * NS)
    assert judge_worker(records, FAST, observation=observation).passed


def test_the_first_restart_is_overdue_after_its_own_bound() -> None:
    records = attempts([])
    late = Observation(now_ns=_last_exit(records) + 5 * NS + 1)
    assert "restart 1 overdue" in judge_worker(records, FAST, observation=late).problems[0].words


def test_an_overdue_restart_across_a_frozen_node_is_an_error() -> None:
    records = attempts(nominal(FAST, 4))
    exit_ns = _last_exit(records)
    # 22.5s past its 4.5s bound, the node unobserved for 24s of it.
    frozen = Observation(now_ns=exit_ns + 27 * NS, unobserved=((exit_ns + NS, exit_ns + 25 * NS),))
    verdict = judge_worker(records, FAST, observation=frozen)
    assert verdict.problems == ()
    (error,) = [e.words for e in verdict.errors]
    assert error.startswith("error: restart 5 overdue, but node frozen 24.000s")
    assert not verdict.passed
    assert verdict.in_error


def test_a_short_gap_in_the_listings_does_not_excuse_a_long_overdue() -> None:
    # A 2.5s gap cannot account for a restart 5.5s past its bound: the kubelet's failure.
    records = attempts(nominal(FAST, 4))
    exit_ns = _last_exit(records)
    gap = ((exit_ns + 3 * NS, exit_ns + 5 * NS + NS // 2),)
    verdict = judge_worker(
        records, FAST, observation=Observation(now_ns=exit_ns + 10 * NS, unobserved=gap)
    )
    assert verdict.errors == ()
    assert verdict.problems[0].words.startswith("restart 5 overdue")


def test_an_overdue_restart_while_the_host_was_saturated_is_the_machine_s_lateness() -> None:
    records = attempts(nominal(FAST, 4))
    exit_ns = _last_exit(records)
    # 3.5s past its 4.5s bound, with the host saturated for 8s of that wait.
    busy = Observation(now_ns=exit_ns + 8 * NS, saturated=((exit_ns, exit_ns + 8 * NS, 0.97),))
    verdict = judge_worker(records, FAST, observation=busy)
    assert verdict.problems == ()
    (error,) = [e.words for e in verdict.errors]
    # Counted once the 2s back-off had passed: 6s of the 8s.
    assert "the host was saturated (its CPUs 97% busy) for 6.000s" in error
    assert verdict.in_error


def test_a_busy_host_does_not_excuse_a_restart_that_never_comes() -> None:
    """A busy host slows a restart's work, not the kubelet's timers: past the work done at
    the slowest pace judged (4x the reference's 1.5 s here: 4.5 s more), the restart
    overdue is the kubelet's, however long the host stayed busy."""
    records = attempts(nominal(FAST, 4))
    exit_ns = _last_exit(records)
    reach_ns = busy_host_reach_ns(UNMEASURED, first=False)
    assert reach_ns == 4_500_000_000
    due_ns = exit_ns + 4_500_000_000
    for past_ns, excused in ((reach_ns, True), (reach_ns + NS // 10, False)):
        busy = Observation(now_ns=due_ns + past_ns, saturated=((exit_ns, exit_ns + 600 * NS, 1.0),))
        verdict = judge_worker(records, FAST, observation=busy)
        assert verdict.in_error == excused, verdict.failures
        assert bool(verdict.problems) == (not excused), verdict.failures


def test_a_late_restart_across_another_pod_s_start_up_is_set_aside_naming_it() -> None:
    records = attempts([5.6, 2.1])  # restart 1 after 5.6s against its flat 5s bound
    exit_0 = records[0].finished_at_ns or 0
    beside = PodStartup("other/p", exit_0 - NS, exit_0)  # ready "at" exit_0: up to +1s
    apart = PodStartup("other/q", exit_0 - 10 * NS, exit_0 - 8 * NS)
    verdict = judge_worker(records, FAST, observation=Observation(startups=(beside, apart)))
    (first, second) = verdict.checks
    assert first.set_aside is not None
    assert "started 1 other pod(s) once it was due (other/p," in first.set_aside
    assert first.passed
    assert second.set_aside is None
    # The smallest wrong readings: a start-up seconds before its window, or none, and a
    # restart later than the start-up lasted (1s of it cannot excuse 1.6s) are too late.
    late = attempts([6.6, 2.1])
    for startups, judged in (((apart,), records), ((), records), ((beside,), late)):
        alone = judge_worker(judged, FAST, observation=Observation(startups=startups))
        assert alone.checks[0].set_aside is None
        assert [f.code for f in alone.checks[0].failures] == ["too-late"]


def test_a_restart_that_waited_a_back_off_is_excused_only_by_a_start_up_once_due() -> None:
    records = attempts([0.3, 6.0])  # restart 2 after 6s: due at 2s, bound 4.5s
    exit_1 = records[1].finished_at_ns or 0
    during_wait = PodStartup("other/p", exit_1, exit_1)  # over by 1s: the wait, not the work
    once_due = PodStartup("other/p", exit_1 + 2 * NS, exit_1 + 5 * NS)
    waited = judge_worker(records, FAST, observation=Observation(startups=(during_wait,)))
    assert waited.checks[1].set_aside is None
    assert not waited.passed
    due = judge_worker(records, FAST, observation=Observation(startups=(once_due,)))
    assert due.checks[1].set_aside is not None
    assert due.passed


def test_a_late_restart_while_the_host_was_saturated_is_set_aside_naming_the_load() -> None:
    records = attempts([0.2, 2.1, 9.0])  # restart 3 waited 9s against a 2s back-off
    late_from = records[2].finished_at_ns or 0
    # 4.5s past its bound, with the host saturated for 8s of the 9s wait.
    busy = Observation(saturated=((late_from + NS, late_from + 9 * NS, 0.99),))
    verdict = judge_worker(records, FAST, observation=busy)
    check = verdict.checks[2]
    assert check.set_aside is not None
    assert "99% busy" in check.set_aside
    assert check.passed
    assert not check.error
    assert not check.failures
    assert verdict.set_aside == (check,)
    # Owed: a worker that needed restart 3 now needs restart 4 in its place; at the
    # window's end without it, an error (the busy host's), never a pass or a failure.
    owed = judge_worker(records, FAST, observation=dataclasses.replace(busy, required_restarts=3))
    assert owed.in_error
    assert not owed.problems
    assert "1 restart(s) set aside" in owed.errors[0].words
    assert "99% busy" in owed.errors[0].words
    # The same delay with the host idle is the kubelet's: too late, a failure.
    idle = judge_worker(records, FAST, observation=Observation())
    assert "too late" in idle.checks[2].reason
    assert not idle.in_error


def test_load_during_the_back_off_wait_excuses_no_lateness_after_it() -> None:
    # The default curve's 300s level: the host busy for the first 100s of the
    # wait, idle after; the restart 68.5s overdue is the kubelet's.
    records = attempts(nominal(DEFAULT, 6), reported=expected_reports(DEFAULT, 6))
    exit_ns = _last_exit(records)
    due_s = DEFAULT.upper_tolerance(DEFAULT.delay_before_restart(7)).total_seconds()
    busy_early = Observation(
        now_ns=exit_ns + int((due_s + 68.5) * NS),
        saturated=((exit_ns, exit_ns + 100 * NS, 1.0),),
    )
    verdict = judge_worker(records, DEFAULT, observation=busy_early)
    assert verdict.errors == ()
    assert "restart 7 overdue" in verdict.problems[0].words


def test_a_busy_second_does_not_excuse_a_minute_overdue() -> None:
    records = attempts(nominal(FAST, 4))
    exit_ns = _last_exit(records)
    brief = Observation(now_ns=exit_ns + 60 * NS, saturated=((exit_ns, exit_ns + NS, 0.95),))
    verdict = judge_worker(records, FAST, observation=brief)
    assert verdict.errors == ()
    assert "restart 5 overdue" in verdict.problems[0].words
    assert not verdict.in_error


def test_load_outside_the_late_span_excuses_nothing() -> None:
    records = attempts([0.2, 2.1, 9.0])
    long_before = records[0].started_at_ns - 60 * NS
    busy = Observation(saturated=((long_before, long_before + 5 * NS, 1.0),))
    verdict = judge_worker(records, FAST, observation=busy)
    assert not verdict.in_error
    assert "too late" in verdict.checks[2].reason


def test_a_too_early_restart_is_never_excused_by_a_frozen_node() -> None:
    records = attempts([0.3, 1.2])
    spans = ((records[1].finished_at_ns or 0, records[2].started_at_ns),)
    verdict = judge_worker(records, FAST, observation=Observation(unobserved=spans))
    check = verdict.checks[1]
    assert not check.passed
    assert not check.error
    assert not verdict.in_error


# --- the pending restart's reported level --------------------------------------------------


def test_a_pending_level_equal_to_the_model_passes() -> None:
    records = attempts(nominal(DEFAULT, 5), reported=expected_reports(DEFAULT, 5))
    assert judge_worker(records, DEFAULT, observation=Observation(pending_reported_s=160.0)).passed


def test_a_pending_level_off_the_model_fails_before_the_restart() -> None:
    # A default kubelet capped at 150s: restarts 1-5 match (10..80s), restart 6 reports 150s.
    records = attempts(nominal(DEFAULT, 5), reported=expected_reports(DEFAULT, 5))
    verdict = judge_worker(records, DEFAULT, observation=Observation(pending_reported_s=150.0))
    (problem,) = [p.words for p in verdict.problems]
    assert problem == (
        "restart 6 (pending): the kubelet reports a 150s back-off, the model expects 2m40s"
    )


# --- one step off the curve: neighbour configs must fail -----------------------------------


def _measured_on(actual: BackoffCurve, count: int) -> list[AttemptRecord]:
    """What a kubelet on ``actual`` produces: delays just over its levels, its levels reported."""
    return attempts(nominal(actual, count), reported=expected_reports(actual, count))


@pytest.mark.parametrize(
    ("actual", "told", "count", "first_failing"),
    [
        (neighbour_curve(1), FAST, 4, 2),  # fast at 1s: too early
        (neighbour_curve(3), FAST, 4, 2),  # fast at 3s: its 3s level reported against 2s
        (neighbour_curve(30, reduced=True), REDUCED, 8, 7),  # reduced max 30s: 30s where 32s
        (neighbour_curve(150), DEFAULT, 7, 6),  # default max 150s: 150s where 160s
    ],
    ids=["fast-1s", "fast-3s", "reduced-max-30s", "default-max-150s"],
)
def test_a_neighbour_config_fails_at_its_first_differing_restart(
    actual: BackoffCurve, told: BackoffCurve, count: int, first_failing: int
) -> None:
    verdict = judge_worker(_measured_on(actual, count), told)
    assert not verdict.passed
    first = next(c for c in verdict.checks if not c.passed)
    assert first.n == first_failing


# --- bounds --------------------------------------------------------------------------------


def delay_ns_check(curve: BackoffCurve, n: int, delay_ns: int) -> bool:
    """Whether restart n passes with exactly delay_ns, all others nominal."""
    delays = nominal(curve, n)
    records = attempts(delays)
    shift = delay_ns - (records[n].started_at_ns - (records[n - 1].finished_at_ns or 0))
    records[n] = dataclasses.replace(records[n], started_at_ns=records[n].started_at_ns + shift)
    return judge_worker(records, curve, confirm_levels=False).checks[n - 1].passed


def test_lower_bound_is_expected_minus_clock_rounding_to_the_nanosecond() -> None:
    assert timedelta(milliseconds=1) == CLOCK_ROUNDING
    assert delay_ns_check(FAST, 2, 2 * NS)
    assert delay_ns_check(FAST, 2, 2 * NS - 1_000_000)
    assert not delay_ns_check(FAST, 2, 2 * NS - 1_000_001)


def test_upper_bound_is_the_models_tolerance() -> None:
    assert delay_ns_check(DEFAULT, 2, 16_500_000_000)  # 10s + 5s + 1.5s
    assert not delay_ns_check(DEFAULT, 2, 16_500_000_001)


def test_too_early_fails_and_says_so() -> None:
    verdict = judge_worker(attempts([0.4, 1.2, 2.3]), FAST)
    assert not verdict.passed
    check = verdict.checks[1]
    assert not check.passed
    assert check.margin_s == pytest.approx(-0.8)
    assert "too early" in check.reason
    (message,) = verdict.messages
    assert message.startswith("fast-1: restart 2: expected 2s")
    assert "measured 1.200s" in message


def test_too_late_fails_and_says_so() -> None:
    verdict = judge_worker(attempts([0.4, 2.2, 4.6]), FAST)
    (message,) = verdict.messages
    assert "restart 3" in message
    assert "too late" in message
    assert "4.600s" in message
    assert "4.5s" in message


def test_a_pre_1_35_kubelet_bunching_short_backoffs_fails() -> None:
    # Before 1.35 a 2s back-off came out as 10-15s retries.
    verdict = judge_worker(attempts([0.4, 11.0, 12.5]), FAST)
    assert [c.passed for c in verdict.checks] == [True, False, False]


def test_a_slow_first_restart_fails() -> None:
    verdict = judge_worker(attempts([5.2]), DEFAULT)
    assert not verdict.checks[0].passed
    assert verdict.checks[0].upper_bound_s == 5.0


def test_a_first_restart_slowed_by_a_busy_node_passes() -> None:
    # 4.2s was measured on every worker at once right after a cold cluster start.
    assert judge_worker(attempts([4.2]), DEFAULT).checks[0].passed


def test_a_10s_wait_where_the_fast_curve_waits_0s_fails() -> None:
    verdict = judge_worker(attempts(nominal(DEFAULT, 3)), FAST)
    assert not verdict.passed
    assert [c.passed for c in verdict.checks] == [True, False, False]


# --- the kubelet's own report --------------------------------------------------------------


def test_wrong_reported_backoff_fails() -> None:
    verdict = judge_worker(attempts(nominal(REDUCED, 4), reported=[None, 1.0, 4.0, 4.0]), REDUCED)
    assert [c.passed for c in verdict.checks] == [True, True, False, True]
    (message,) = verdict.messages
    assert "restart 3" in message
    assert "reported a 4s back-off" in message
    assert "expects 2s" in message


def test_a_report_before_the_immediate_first_restart_fails() -> None:
    verdict = judge_worker(attempts([0.3], reported=[10.0]), DEFAULT)
    assert not verdict.passed
    assert "does not wait" in verdict.checks[0].reason


# --- gaps ----------------------------------------------------------------------------------


def test_a_missing_attempt_fails_loudly() -> None:
    records = attempts(nominal(FAST, 4))
    del records[2]
    verdict = judge_worker(records, FAST)
    assert not verdict.passed
    assert [c.n for c in verdict.checks] == [1, 2, 3, 4]
    assert [c.passed for c in verdict.checks] == [True, False, False, True]
    assert verdict.checks[1].measured_s is None
    assert verdict.checks[2].measured_s is None
    assert len(verdict.failures) == 2
    assert all("attempt 2 was never recorded" in m for m in verdict.messages)
    assert verdict.messages[0].startswith("fast-1: restart 2:")


def test_a_missing_first_attempt_fails() -> None:
    verdict = judge_worker(attempts(nominal(FAST, 2))[1:], FAST)
    assert not verdict.passed
    assert "attempt 0 was never recorded" in verdict.checks[0].reason


def test_a_missing_finish_time_fails() -> None:
    records = attempts(nominal(FAST, 3))
    records[1] = dataclasses.replace(records[1], finished_at_ns=None)
    verdict = judge_worker(records, FAST)
    assert [c.passed for c in verdict.checks] == [True, False, True]
    assert "no recorded finish time" in verdict.checks[1].reason


def test_nothing_recorded_is_a_failure() -> None:
    verdict = judge_worker([], FAST, worker="fast", node="w1")
    assert not verdict.passed
    assert verdict.messages == [
        "fast: no container attempt was recorded: the pod never ran its container"
    ]


def test_mixed_containers_are_refused() -> None:
    records = attempts([0.3])
    records[1] = dataclasses.replace(records[1], container="sidecar")
    with pytest.raises(ValueError, match="one container at a time"):
        judge_worker(records, FAST)


def test_repeated_attempts_are_refused() -> None:
    records = attempts([0.3])
    with pytest.raises(ValueError, match="appears twice"):
        judge_worker([*records, records[1]], FAST)


# --- resets --------------------------------------------------------------------------------


def test_a_long_run_resets_the_curve_and_is_explained() -> None:
    runs = [0.05, 0.05, 0.05, 700.0, 0.05, 0.05, 0.05]
    delays = [0.3, 1.3, 2.3, 0.4, 1.3, 2.2]
    levels = [None, 1.0, 2.0, None, 1.0, 2.0]  # the kubelet's, the curve started over
    verdict = judge_worker(attempts(delays, runs_s=runs, reported=levels), REDUCED)
    assert verdict.passed, verdict.failures
    assert [c.curve_n for c in verdict.checks] == [1, 2, 3, 1, 2, 3]
    assert "on the curve, at its restart 1 after a reset" in verdict.checks[3].reason
    (note,) = verdict.notes
    assert "attempt 3 ran 700.000s, over the 10m reset threshold" in note
    assert "resets the back-off" in note


def test_without_a_long_run_an_immediate_restart_is_too_early() -> None:
    runs = [0.05, 0.05, 0.05, 500.0, 0.05]
    verdict = judge_worker(attempts([0.3, 1.3, 2.3, 0.4], runs_s=runs), REDUCED)
    assert not verdict.checks[3].passed
    assert verdict.checks[3].curve_n == 4
    assert verdict.notes == ()


@pytest.mark.parametrize("restart_delay", [0.4, 4.3])
def test_a_run_at_the_reset_threshold_accepts_either_reading(restart_delay: float) -> None:
    run = (REDUCED.reset_after - RESET_LEAD / 2).total_seconds()
    runs = [0.05, 0.05, 0.05, run, 0.05]
    verdict = judge_worker(attempts([0.3, 1.3, 2.3, restart_delay], runs_s=runs), REDUCED)
    assert verdict.passed, verdict.failures
    assert "accepted as well as none" in verdict.notes[0]


# --- cross-check with pod status -----------------------------------------------------------


def test_pod_status_times_agreeing_to_the_second_add_no_note() -> None:
    records = attempts([0.3])
    records[0] = dataclasses.replace(
        records[0], api_started_at="2026-01-01T10:00:00Z", api_finished_at="2026-01-01T10:00:00Z"
    )
    assert judge_worker(records, FAST).notes == ()


def test_pod_status_times_within_a_second_are_noted_without_failing() -> None:
    records = attempts([0.3])  # attempt 0 starts at 10:00:00.000
    records[0] = dataclasses.replace(records[0], api_started_at="2026-01-01T10:00:01Z")
    verdict = judge_worker(records, FAST)
    assert verdict.passed
    (note,) = verdict.notes
    assert "attempt 0: pod status startedAt 2026-01-01T10:00:01Z disagrees" in note
    assert "within the API's 1s rounding" in note


def test_pod_status_times_of_another_attempt_fail() -> None:
    # The finish of the attempt before, 2.3s earlier: the keying is off by one.
    records = attempts([0.3, 2.3])
    records[2] = dataclasses.replace(records[2], api_finished_at="2026-01-01T10:00:00Z")
    verdict = judge_worker(records, FAST)
    assert not verdict.passed
    (problem,) = [p.words for p in verdict.problems]
    assert problem.startswith("attempt 2: pod status finishedAt 2026-01-01T10:00:00Z disagrees")
    assert "beyond the API's 1s rounding" in problem


def test_a_workload_report_a_little_after_the_runtime_s_start_is_a_note_not_a_failure() -> None:
    # The API says 10:00:00 (the runtime started at 10:00:00.98); the workload's
    # own main ran at 10:00:01.059: 1.059 s after the API's second.
    records = attempts([0.3])
    late_main = records[0].started_at_ns + 1_059_000_000
    for source, passes in ((SOURCE_SELF, True), (SOURCE_CRI, False)):
        records[0] = dataclasses.replace(
            records[0],
            started_at_ns=late_main,
            api_started_at="2026-01-01T10:00:00Z",
            source=source,
        )
        verdict = judge_worker(records[:1], FAST)
        assert not verdict.problems if passes else verdict.problems, source
    (note,) = judge_worker([dataclasses.replace(records[0], source=SOURCE_SELF)], FAST).notes
    assert "the workload's report" in note


# --- enough observed? ----------------------------------------------------------------------


def test_enough_by_default_means_the_cap_was_reached() -> None:
    assert not observed_enough(attempts([0.3]), FAST)
    assert observed_enough(attempts([0.3, 2.3]), FAST)
    assert not observed_enough(attempts(nominal(DEFAULT, 6)), DEFAULT)
    assert observed_enough(attempts(nominal(DEFAULT, 7)), DEFAULT)


def test_enough_with_min_restarts_and_until_delay() -> None:
    five = attempts(nominal(REDUCED, 5))
    assert observed_enough(five, REDUCED, min_restarts=5)
    assert not observed_enough(five, REDUCED, min_restarts=6)
    assert observed_enough(five, REDUCED, until_delay=timedelta(seconds=8))
    assert not observed_enough(five, REDUCED, until_delay=timedelta(seconds=9))
    assert not observed_enough(five, REDUCED, min_restarts=6, until_delay=timedelta(seconds=1))


def test_enough_never_from_nothing() -> None:
    assert not observed_enough([], FAST, min_restarts=0)
    assert observed_enough(attempts([]), FAST, min_restarts=0)


def test_an_unreachable_delay_is_refused() -> None:
    with pytest.raises(ValueError, match="never waits"):
        observed_enough(attempts([0.3]), FAST, until_delay=timedelta(seconds=3))


def test_a_restart_created_in_time_and_not_started_yet_is_not_overdue() -> None:
    """A slow runtime: the kubelet created restart 3 inside its window, the runtime has not
    started it when the node is listed past the window's end."""
    records = attempts([0.9, 2.6])
    last_exit = records[-1].finished_at_ns
    assert last_exit is not None
    now = last_exit + 6 * NS  # past the 2 s level's 4.5 s bound
    overdue = judge_worker(records, FAST, observation=Observation(now_ns=now))
    assert any("restart 3 overdue" in p.words for p in overdue.problems)
    created_in_time = Observation(now_ns=now, pending_created_ns=last_exit + 3 * NS)
    assert judge_worker(records, FAST, observation=created_in_time).passed
    created_late = Observation(now_ns=now, pending_created_ns=last_exit + 5 * NS)
    assert not judge_worker(records, FAST, observation=created_late).passed


def test_a_restart_made_after_the_level_watch_stopped_is_not_asked_for_its_level() -> None:
    # The run's last listing finds a restart created after the pod watch stopped: its
    # level could not be seen (two demo runs' last 1m restart on a sound reduced worker,
    # 20261206T104150Z-check-demo-691a and 20261206T105220Z-check-demo-469c).
    reports = expected_reports(REDUCED, 6)
    reports[5] = None  # restart 6 waits 16s: its level must be seen while the watch runs
    records = attempts(nominal(REDUCED, 6), reported=reports)
    last = records[6]
    before_it = Observation(levels_until_ns=last.started_at_ns - 1)
    after_it = Observation(levels_until_ns=last.started_at_ns + 1)
    assert judge_worker(records, REDUCED, observation=before_it).passed
    (failure,) = judge_worker(records, REDUCED, observation=after_it).messages
    assert "unconfirmed" in failure


def test_an_overdue_restart_across_another_pod_s_start_up_waits_then_is_an_error() -> None:
    records = attempts([0.3, 2.2])  # the fast curve: restart 3 due 2 s after exit 2, bound 4.5 s
    exit_2 = records[-1].finished_at_ns or 0
    starting = PodStartup("other/p", exit_2 + 2 * NS, exit_2 + 6 * NS)

    def codes(past_s: float, startups: tuple[PodStartup, ...], *, final: bool) -> list[str]:
        now = exit_2 + round((4.5 + past_s) * NS)
        seen = Observation(now_ns=now, startups=startups, final=final)
        return [f.code for f in judge_worker(records, FAST, observation=seen).failures]

    # 1.5 s past its bound with another pod starting from the moment it was due: nothing is
    # decided while the check observes on; at the end the environment's, not the kubelet's.
    assert codes(1.5, (starting,), final=False) == []
    assert codes(1.5, (starting,), final=True) == ["environment"]
    # The smallest wrong readings: no start-up, or one that began only at the end.
    late_start = PodStartup("other/q", exit_2 + 5 * NS, exit_2 + 6 * NS)
    assert codes(1.5, (), final=False) == ["overdue"]
    assert codes(1.5, (late_start,), final=True) == ["overdue"]
    # A pod stuck starting (never ready) cannot excuse a restart that never comes.
    stuck = PodStartup("other/r", exit_2 + 2 * NS, None)
    assert codes(60.0, (stuck,), final=True) == ["overdue"]


def test_a_pod_stuck_starting_excuses_no_restart_later_than_a_busy_host_can_make_it() -> None:
    records = attempts([0.3, 40.0])  # restart 2 after 40 s: due at 2 s, bound 4.5 s
    exit_1 = records[1].finished_at_ns or 0
    stuck = PodStartup("other/r", exit_1 + 2 * NS, None)
    verdict = judge_worker(records, FAST, observation=Observation(startups=(stuck,)))
    assert verdict.checks[1].set_aside is None
    assert [f.code for f in verdict.checks[1].failures] == ["too-late"]
    # The same pod stuck, a restart 2 s past its bound: set aside, the node's start-up work.
    near = attempts([0.3, 6.5])
    near_exit = near[1].finished_at_ns or 0
    beside = PodStartup("other/r", near_exit + 2 * NS, None)
    assert judge_worker(near, FAST, observation=Observation(startups=(beside,))).checks[1].set_aside
