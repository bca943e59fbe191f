"""The run summary (crashloop_harness.outputs.summary): building it, its statistics,
summary.json."""

from __future__ import annotations

import dataclasses
import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from crashloop_harness.core.errors import HarnessError
from crashloop_harness.model.releases import (
    KUBELET_CRASHLOOP_BACKOFF_MAX,
    REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY,
)
from crashloop_harness.outputs.summary import (
    POOLED_PROFILES,
    SUMMARY_FILE,
    SummaryError,
    check_profile_of,
    machine_restart_cost,
    outcome_of,
    overshoot,
    require_pooled_check,
    restart_cost,
    utc_iso,
)
from crashloop_harness.outputs.summaryfile import read_summary, write_summary
from crashloop_harness.recording.observercost import ObserverCost
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES
from crashloop_harness.scenarios.headline import ScenarioMetric
from crashloop_harness.verdict import judge_worker
from tests.unit.factories import (
    FAST,
    FAST_MEDIAN_OVERSHOOT,
    ROWS,
    attempts,
    check,
    default_verdict,
    empty_verdict,
    failing_summary,
    fast_verdict,
    make_summary,
    passing_summary,
    quick_summary,
    scenario_metric,
    scenario_summary,
)

# --- building ------------------------------------------------------------------------------


def test_a_passing_worker_summary_carries_config_curve_and_measurements() -> None:
    summary = passing_summary()
    assert summary.status == "passed"
    assert summary.passed
    assert summary.reason == ""
    assert (summary.started_at, summary.finished_at) == (
        "2026-01-01T10:00:00.000Z",
        "2026-01-01T10:03:20.250Z",
    )
    (worker,) = summary.workers
    assert (worker.worker, worker.node, worker.profile) == ("fast", "crashloop-worker", "fast")
    assert worker.passed
    assert worker.failures == ()
    assert worker.attempts_recorded == 6
    assert worker.expected_s == (0.0, 2.0, 2.0, 2.0, 2.0)
    assert worker.measured_s == (0.9, 2.25, 2.413, 2.31, 2.5)
    # The checks keep the runtime's full precision; only the list is rounded.
    assert worker.checks[2].measured_s == pytest.approx(2.4134567, abs=1e-9)
    assert [c.n for c in worker.checks] == [1, 2, 3, 4, 5]
    live = worker.live_config
    assert live is not None
    assert live.max_container_restart_period == "2s"
    assert live.feature_gates == {
        KUBELET_CRASHLOOP_BACKOFF_MAX: True,
        REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY: False,
    }
    assert (live.initial_s, live.max_s) == (2.0, 2.0)


def test_overshoot_is_over_restarts_that_wait() -> None:
    (worker,) = passing_summary().workers
    # Restart 1's 0.9s would be the max if it counted.
    assert worker.overshoot_median_s == pytest.approx(FAST_MEDIAN_OVERSHOOT, abs=1e-9)
    assert worker.overshoot_max_s == pytest.approx(0.5, abs=1e-9)


def test_overshoot_skips_resets_and_unmeasured_restarts() -> None:
    checks = [check(1, 1, 0.7), check(2, 2, 0.1), check(3, 1, 0.9), check(4, 2, None)]
    assert overshoot(checks) == (0.1, 0.1)
    assert overshoot([check(2, 2, 0.1), check(3, 3, 0.3), check(4, 4, 0.2)]) == (0.2, 0.3)


def test_overshoot_of_nothing_is_none() -> None:
    assert overshoot([check(1, 1, 0.3)]) == (None, None)
    (worker,) = make_summary(empty_verdict()).workers
    assert (worker.overshoot_median_s, worker.overshoot_max_s) == (None, None)


def test_a_failing_run_names_its_failures() -> None:
    summary = failing_summary()
    assert summary.status == "failed"
    assert not summary.passed
    fast, default, reduced = summary.workers
    assert fast.passed
    assert not default.passed
    assert [c.passed for c in default.checks] == [True, True, False]
    (message,) = default.failures
    assert message.startswith("default: restart 3: expected 20s")
    assert "too late" in message
    assert default.problems == ()
    assert not reduced.passed
    assert reduced.problems == (
        "reduced: no container attempt was recorded: the pod never ran its container",
    )
    assert reduced.failures == reduced.problems
    assert summary.failures == [message, *reduced.problems]


@pytest.mark.parametrize("outcome", ["interrupted", "error"])
def test_an_unfinished_run_keeps_its_status_and_measurements(outcome: str) -> None:
    summary = make_summary(fast_verdict(), outcome=outcome, reason="SIGINT after restart 5")
    assert summary.status == outcome
    assert not summary.passed
    assert summary.reason == "SIGINT after restart 5"
    assert summary.workers[0].passed
    assert len(summary.workers[0].checks) == 5


NOTES = (
    "reading crashloop-worker: the node's reader ended (exit code 0); starting it again",
    "pod watch: ProtocolError: Connection broken",
    "reading crashloop-worker2: crictl ps failed: 'connection refused'",
    "inspecting on crashloop-worker3: container gone",
)


def test_a_passed_runs_reason_carries_no_recorder_note() -> None:
    summary = make_summary(fast_verdict(), recorder_notes=NOTES)
    assert summary.status == "passed"
    assert summary.reason == ""
    assert summary.recorder_notes == NOTES


@pytest.mark.parametrize("outcome", ["completed", "error"])
def test_a_failed_or_errored_runs_reason_quotes_the_first_recorder_notes(outcome: str) -> None:
    summary = make_summary(
        fast_verdict(),
        default_verdict(),
        outcome=outcome,
        reason="why it ended",
        recorder_notes=NOTES,
    )
    assert summary.status in ("failed", "error")
    assert summary.reason == "; ".join(["why it ended", *NOTES[:3]])
    assert summary.recorder_notes == NOTES


def test_an_interrupted_runs_reason_is_only_why_it_was_interrupted() -> None:
    summary = make_summary(
        fast_verdict(), outcome="interrupted", reason="SIGINT", recorder_notes=NOTES
    )
    assert summary.reason == "SIGINT"


def test_a_run_that_judged_nothing_fails() -> None:
    summary = make_summary()
    assert summary.status == "failed"
    assert summary.reason == "no worker was judged"


def test_config_is_matched_by_node_when_the_worker_name_differs() -> None:
    verdict = judge_worker(attempts([0.3]), FAST)  # worker "fast-1" from the records
    (worker,) = make_summary(verdict).workers
    assert worker.profile == "fast"
    assert worker.live_config is not None
    assert worker.attempts_recorded == 0  # no count under "fast-1"


def test_a_worker_without_live_config_says_so() -> None:
    (worker,) = make_summary(fast_verdict(), configs=()).workers
    assert worker.live_config is None
    assert worker.profile is None
    assert "no live kubelet config was read for this worker" in worker.notes


def test_a_config_mismatch_is_noted() -> None:
    mismatched = dataclasses.replace(ROWS[0], mismatches=("period is 10s live",))
    (worker,) = make_summary(fast_verdict(), configs=(mismatched,)).workers
    assert worker.live_config is not None
    assert worker.live_config.mismatches == ("period is 10s live",)
    assert any("differs from the profile" in note for note in worker.notes)


def test_scenario_kinds_are_accepted_and_others_refused() -> None:
    assert make_summary(kind="scenario:task-isolation").kind == "scenario:task-isolation"
    for bad in ("scenario:", "scenario: ", "Conformance", "task-isolation"):
        with pytest.raises(ValueError, match="run kind must be"):
            make_summary(kind=bad)


def test_a_run_is_summarised_under_the_profile_it_ran(tmp_path: Path) -> None:
    for name in ("quick", "full", "demo", "mutation", "drill"):
        summary = make_summary(fast_verdict(), profile=name)
        assert read_summary(write_summary(tmp_path, summary)).profile == name
    with pytest.raises(ValueError, match="profile must name what the run ran"):
        make_summary(profile=" ")


@pytest.mark.parametrize(
    ("profile", "run_id", "ran"),
    [
        ("quick", "20260101T100000Z-check-quick-0a1b", "quick"),
        ("demo", "20260101T100000Z-check-demo-0a1b", "demo"),
        # Written before summaries named every profile: the run id says what ran.
        ("quick", "20260101T100000Z-check-demo-0a1b", "demo"),
        ("quick", "20260101T100000Z-check-mutation-0a1b", "mutation"),
        ("full", "20260101T100000Z-check-full-0a1b", "full"),
        # A run id of another shape says nothing.
        ("quick", "20260101T100000Z-conformance", "quick"),
    ],
)
def test_the_profile_a_check_ran_reads_from_older_summaries_too(
    profile: str, run_id: str, ran: str
) -> None:
    assert check_profile_of(make_summary(fast_verdict(), profile=profile, run_id=run_id)) == ran


def test_only_quick_and_full_checks_may_be_pooled(tmp_path: Path) -> None:
    assert set(POOLED_PROFILES) == set(CHECK_PROFILES)
    require_pooled_check(make_summary(fast_verdict(), profile="full"), tmp_path)
    old_demo = make_summary(fast_verdict(), run_id="20260101T100000Z-check-demo-0a1b")
    with pytest.raises(HarnessError, match="is a check with profile demo") as refused:
        require_pooled_check(old_demo, tmp_path)
    assert refused.value.problem.startswith(f"{tmp_path}: run 20260101T100000Z-check-demo-0a1b")
    assert "quick and full check runs" in refused.value.fix
    with pytest.raises(HarnessError, match=r"is a scenario:fast-restart run \(profile scenarios\)"):
        require_pooled_check(scenario_summary(scenario_metric(True)), tmp_path)


def test_times_are_utc_and_naive_ones_refused() -> None:
    plus_two = datetime(2026, 1, 1, 12, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
    assert utc_iso(plus_two) == "2026-01-01T10:00:00.123Z"
    with pytest.raises(ValueError, match="timezone-aware"):
        utc_iso(datetime(2026, 1, 1, 10, 0, 0))  # naive on purpose


# --- summary.json --------------------------------------------------------------------------


def test_summary_json_round_trips(tmp_path: Path) -> None:
    summary = failing_summary()
    path = write_summary(tmp_path, summary)
    assert path == tmp_path / SUMMARY_FILE
    assert read_summary(path) == summary
    assert read_summary(tmp_path) == summary  # a run directory works too


def test_summary_json_is_plain_and_readable(tmp_path: Path) -> None:
    raw = json.loads(write_summary(tmp_path, failing_summary()).read_text())
    assert raw["schema_version"] == 3
    # Who wrote it, and with what: the harness, kind, each node's kubelet (cluster.kubelets).
    assert raw["harness_version"] == failing_summary().harness_version
    assert "kind_version" in raw["cluster"]
    assert raw["passed"] is False
    assert raw["status"] == "failed"
    assert raw["cluster"]["node_image"] == "kindest/node:v1.35.0"
    fast = raw["workers"][0]
    assert fast["live_config"]["maxContainerRestartPeriod"] == "2s"
    assert fast["live_config"]["featureGates"][KUBELET_CRASHLOOP_BACKOFF_MAX] is True
    assert fast["measured_s"] == [0.9, 2.25, 2.413, 2.31, 2.5]
    assert fast["checks"][1]["upper_bound_s"] == 4.5
    assert raw["workers"][2]["live_config"]["initial_s"] == 1.0


def test_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    write_summary(tmp_path, failing_summary())
    write_summary(tmp_path, passing_summary())  # overwrite in place
    assert os.listdir(tmp_path) == [SUMMARY_FILE]
    assert read_summary(tmp_path).passed


def test_a_failed_write_keeps_the_old_summary_and_no_tmp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_summary(tmp_path, passing_summary())

    def crash(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        write_summary(tmp_path, failing_summary())
    assert os.listdir(tmp_path) == [SUMMARY_FILE]
    assert read_summary(tmp_path).passed


def test_reading_a_missing_summary_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(SummaryError, match="no run summary") as caught:
        read_summary(tmp_path)
    assert "attempts.jsonl" in caught.value.fix


def rewrite(tmp_path: Path, edit: object) -> Path:
    path = write_summary(tmp_path, failing_summary())
    raw = json.loads(path.read_text())
    assert callable(edit)
    edit(raw)
    path.write_text(json.dumps(raw))
    return path


def test_a_wrong_field_type_is_named_by_its_path(tmp_path: Path) -> None:
    path = rewrite(tmp_path, lambda raw: raw["workers"][1]["checks"][2].update(passed="no"))
    with pytest.raises(SummaryError, match=r"summary\.workers\[1\]\.checks\[2\]\.passed"):
        read_summary(path)


def test_a_missing_field_is_named(tmp_path: Path) -> None:
    path = rewrite(tmp_path, lambda raw: raw["cluster"].pop("node_image"))
    with pytest.raises(SummaryError, match=r"summary\.cluster\.node_image: missing"):
        read_summary(path)


def test_another_schema_version_is_refused(tmp_path: Path) -> None:
    path = rewrite(tmp_path, lambda raw: raw.update(schema_version=4))
    with pytest.raises(SummaryError, match="schema_version 4"):
        read_summary(path)


def test_an_unknown_status_is_refused(tmp_path: Path) -> None:
    path = rewrite(tmp_path, lambda raw: raw.update(status="flaky"))
    with pytest.raises(SummaryError, match=r"summary\.status: Input should be .passed."):
        read_summary(path)


def test_broken_json_is_refused(tmp_path: Path) -> None:
    (tmp_path / SUMMARY_FILE).write_text('{"run_id": ')
    with pytest.raises(SummaryError, match="not readable JSON"):
        read_summary(tmp_path)


def test_start_latency_is_summarised_and_round_trips(tmp_path: Path) -> None:
    records = attempts([0.3, 2.1, 2.2])
    for index, latency_ns in ((1, 100_000_000), (2, 300_000_000), (3, 200_000_000)):
        created = records[index].started_at_ns
        records[index] = dataclasses.replace(
            records[index], created_at_ns=created, started_at_ns=created + latency_ns
        )
    verdict = judge_worker(records, FAST, worker="fast", node="crashloop-worker")
    summary = make_summary(verdict)
    (fast,) = summary.workers
    assert fast.start_latency_median_s == pytest.approx(0.2)
    assert fast.start_latency_max_s == pytest.approx(0.3)
    write_summary(tmp_path, summary)
    assert read_summary(tmp_path) == summary


def test_a_summary_written_before_start_latency_still_reads(tmp_path: Path) -> None:
    raw = make_summary(fast_verdict()).to_dict()
    for worker in raw["workers"]:
        del worker["start_latency_median_s"], worker["start_latency_max_s"]
        for restart in worker["checks"]:
            del restart["start_latency_s"]
    (tmp_path / "summary.json").write_text(json.dumps(raw))
    (fast,) = read_summary(tmp_path).workers
    assert fast.start_latency_median_s is None


def test_a_scenario_run_is_judged_by_its_metrics() -> None:
    assert scenario_summary(scenario_metric(True), scenario_metric(True, "default")).passed
    failing = scenario_summary(scenario_metric(True), scenario_metric(False, "default"))
    assert failing.status == "failed"
    assert failing.failures == ["fast-restart default: time_to_ready_s: measured ..."]


def test_a_scenario_run_that_measured_nothing_fails() -> None:
    assert scenario_summary().status == "failed"


def test_a_scenario_summary_round_trips(tmp_path: Path) -> None:
    summary = scenario_summary(scenario_metric(True), scenario_metric(False, "default"))
    write_summary(tmp_path, summary)
    assert read_summary(tmp_path) == summary


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        ("passed", "completed"),
        ("observed", "completed"),
        ("failed", "failed"),
        ("interrupted", "interrupted"),
        ("error", "error"),
        ("timeout", "failed"),
        ("running", "error"),
    ],
)
def test_a_runs_own_status_maps_to_its_outcome(status: str, outcome: str) -> None:
    assert outcome_of(status) == outcome


def test_the_observers_cost_round_trips_and_older_summaries_have_none(tmp_path: Path) -> None:
    cost = ObserverCost(
        observer="events",
        wall_s=180.0,
        harness_cpu_s=3.6,
        engine_cpu_s=1.8,
        attempts_seen=42,
        latency_median_ms=6.5,
        latency_p95_ms=20.0,
        latency_max_ms=310.0,
        reconciled=1,
        reconnects=0,
    )
    summary = dataclasses.replace(passing_summary(), observer=cost)
    assert read_summary(write_summary(tmp_path, summary)) == summary
    raw = json.loads((tmp_path / SUMMARY_FILE).read_text())
    assert raw["observer"]["share_of_core"] == pytest.approx(0.03)
    assert raw["observer"]["harness_cpu_per_min_s"] == pytest.approx(1.2)
    del raw["observer"]
    (tmp_path / SUMMARY_FILE).write_text(json.dumps(raw))
    assert read_summary(tmp_path).observer is None


def test_recorder_notes_round_trip_and_older_summaries_have_none(tmp_path: Path) -> None:
    summary = make_summary(fast_verdict(), recorder_notes=NOTES)
    assert read_summary(write_summary(tmp_path, summary)) == summary
    raw = json.loads((tmp_path / SUMMARY_FILE).read_text())
    assert raw["recorder_notes"] == list(NOTES)
    del raw["recorder_notes"]
    (tmp_path / SUMMARY_FILE).write_text(json.dumps(raw))
    assert read_summary(tmp_path).recorder_notes == ()


def test_restart_cost_is_the_decision_overshoot_plus_the_start() -> None:
    worker = quick_summary().workers[0]
    costed = dataclasses.replace(worker, overshoot_median_s=0.6, start_latency_median_s=0.35)
    assert restart_cost(costed) == pytest.approx(0.95)
    # A kubelet deciding early (negative overshoot) saves nothing: no credit below the curve.
    early = dataclasses.replace(costed, overshoot_median_s=-0.2)
    assert restart_cost(early) == pytest.approx(0.35)
    assert restart_cost(dataclasses.replace(costed, start_latency_median_s=None)) is None
    # The machine's part: the least any bare curve paid (a long curve's larger
    # overshoot is the kubelet's lateness at that level); variants left out.
    summary = dataclasses.replace(
        quick_summary(),
        workers=(
            costed,
            dataclasses.replace(costed, worker="reduced", overshoot_median_s=6.0),
            dataclasses.replace(costed, worker="fast/runs-5s", overshoot_median_s=0.0),
        ),
    )
    assert machine_restart_cost(summary) == pytest.approx(0.95)
    assert machine_restart_cost(dataclasses.replace(summary, workers=())) is None


def test_a_headline_with_the_restart_cost_adds_it_per_restart() -> None:
    metric = ScenarioMetric("fast-restart", "fast", "to Ready", "s", 6.0, 9.3, restarts=3)
    assert metric.with_restart_cost(1.0) == 9.0
    assert metric.ratio() == pytest.approx(1.55)
    assert metric.ratio(1.0) == pytest.approx(9.3 / 9.0)
    assert metric.with_restart_cost(None) is None
    assert dataclasses.replace(metric, restarts=None).with_restart_cost(1.0) is None
    assert dataclasses.replace(metric, measured=None).ratio() is None


def test_a_version_1_summary_still_reads(tmp_path: Path) -> None:
    path = rewrite(tmp_path, lambda raw: raw.update(schema_version=1))
    assert read_summary(path).schema_version == 1


def test_a_version_2_summary_without_the_versions_it_now_keeps_still_reads(
    tmp_path: Path,
) -> None:
    def older(raw: dict[str, Any]) -> None:
        raw.update(schema_version=2)
        del raw["harness_version"]
        del raw["cluster"]["kind_version"]

    summary = read_summary(rewrite(tmp_path, older))
    assert (summary.schema_version, summary.harness_version) == (2, "unknown")
    assert summary.cluster.kind_version == "-"
