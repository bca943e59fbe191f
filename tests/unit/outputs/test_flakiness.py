"""Aggregating many check runs: pass count, overshoot spread, headroom."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from rich.console import Console

from crashloop_harness.cli import app as cli
from crashloop_harness.outputs.flakiness import distribution, flakiness_of, p95
from crashloop_harness.outputs.render import flakiness_table
from crashloop_harness.outputs.summary import RunSummary
from crashloop_harness.outputs.summaryfile import write_summary
from crashloop_harness.recording.observercost import ObserverCost
from tests.unit.factories import (
    FAST_MEDIAN_OVERSHOOT,
    check,
    default_verdict,
    failing_summary,
    fast_verdict,
    make_summary,
    passing_summary,
    scenario_metric,
    scenario_summary,
)


def test_p95_interpolates_and_a_single_value_is_its_own() -> None:
    assert p95([3.0]) == 3.0
    assert p95([float(v) for v in range(1, 21)]) == pytest.approx(19.05)
    assert p95([1.0, 2.0]) == pytest.approx(1.95)


def test_the_distribution_counts_only_restarts_that_waited() -> None:
    checks = [check(1, 1, 0.9), check(2, 2, 0.1), check(3, 3, 0.4), check(4, 2, None)]
    found = distribution("fast", checks)
    assert found is not None
    assert found.restarts == 2
    assert (found.minimum_s, found.maximum_s) == (0.1, 0.4)
    assert found.median_s == pytest.approx(0.25)
    # upper bound 4.5, worst measured 2.4
    assert found.headroom_s == pytest.approx(2.1)
    # The unmeasured restart 4 failed; it has no overshoot but is counted.
    assert (found.failed_restarts, found.unmeasured_restarts) == (1, 1)


def test_a_worker_with_no_waited_restart_has_no_distribution() -> None:
    assert distribution("default", [check(1, 1, 0.3)]) is None


def test_runs_are_pooled_per_worker_and_counted() -> None:
    report = flakiness_of([passing_summary(), passing_summary(), failing_summary()])
    assert report.passed_runs == 2
    assert not report.all_passed
    workers = {w.worker: w for w in report.workers}
    # fast passed three times with the same four waited restarts.
    assert workers["fast"].restarts == 12
    assert workers["fast"].median_s == pytest.approx(FAST_MEDIAN_OVERSHOOT, abs=1e-9)
    # default's restart 3 waited 35s against 20s + 10s + 1.5s: negative headroom, one failure.
    assert workers["default"].failed_restarts == 1
    assert workers["default"].headroom_s == pytest.approx(31.5 - 35.0)
    assert "reduced" not in workers, "nothing recorded, nothing to pool"


def test_no_runs_is_not_a_pass() -> None:
    assert not flakiness_of([]).all_passed


def test_the_table_names_the_pass_count_and_each_failed_run() -> None:
    failed = make_summary(default_verdict(), run_id="20260101T110000Z-check-quick-bad1")
    report = flakiness_of([passing_summary(), failed])
    console = Console(width=200, record=True)
    console.print(flakiness_table(report))
    text = console.export_text()
    assert "1 of 2 checks passed" in text
    assert "20260101T110000Z-check-quick-bad1: failed" in text
    assert passing_summary().run_id not in text
    assert "fast" in text
    assert "default" in text


def test_the_report_round_trips_as_json() -> None:
    data = json.loads(flakiness_of([passing_summary(), failing_summary()]).to_json())
    assert (data["passed_runs"], data["total_runs"]) == (1, 2)
    assert [run["passed"] for run in data["runs"]] == [True, False]


def test_aggregating_finished_runs_writes_the_report_and_gives_the_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("crashloop_harness.runs.lifecycle.runs_dir", lambda: tmp_path / "runs")
    passed, failed = tmp_path / "passed", tmp_path / "failed"
    for run_dir, summary in ((passed, passing_summary()), (failed, failing_summary())):
        run_dir.mkdir()
        write_summary(run_dir, summary)
    assert cli.main(["flakiness", "--from", str(passed)]) == 0
    assert cli.main(["flakiness", "--from", str(passed), str(failed)]) == 1
    written = (tmp_path / "runs").glob("*-flakiness-*/flakiness.json")
    assert sorted(json.loads(path.read_text())["total_runs"] for path in written) == [1, 2]


def test_a_directory_without_a_summary_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["flakiness", "--from", str(tmp_path)]) == 2
    assert f"{tmp_path} holds no summary.json" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("summary", "named"),
    [
        (make_summary(fast_verdict(), profile="demo"), "a check with profile demo"),
        # A demo written before summaries named their profile: its run id does.
        (
            make_summary(fast_verdict(), run_id="20260101T100000Z-check-demo-0a1b"),
            "a check with profile demo",
        ),
        (make_summary(fast_verdict(), profile="mutation"), "a check with profile mutation"),
        (
            scenario_summary(scenario_metric(True)),
            "a scenario:fast-restart run (profile scenarios)",
        ),
    ],
)
def test_a_run_that_is_not_a_quick_or_full_check_is_refused_by_name(
    summary: RunSummary, named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    passed, other = tmp_path / "passed", tmp_path / "other"
    for run_dir, written in ((passed, passing_summary()), (other, summary)):
        run_dir.mkdir()
        write_summary(run_dir, written)
    assert cli.main(["flakiness", "--from", str(passed), str(other)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"run {summary.run_id} is {named}, not a quick or full check" in err
    assert "only quick and full check runs" in err


@pytest.mark.parametrize("runs", ["0", "-3", "ten"])
def test_a_bad_run_count_is_refused(runs: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["flakiness", "--runs", runs])
    assert "at least 1" in capsys.readouterr().err


def _observed(share: float, sight_ms: float) -> ObserverCost:
    return ObserverCost(
        observer="events",
        wall_s=100.0,
        harness_cpu_s=share * 50.0,
        engine_cpu_s=share * 50.0,
        attempts_seen=10,
        latency_median_ms=sight_ms,
        latency_p95_ms=sight_ms,
        latency_max_ms=2 * sight_ms,
    )


def test_the_observers_cost_is_pooled_over_the_runs_that_measured_it() -> None:
    summaries = [
        dataclasses.replace(passing_summary(), observer=_observed(0.04, 30.0)),
        dataclasses.replace(passing_summary(), observer=_observed(0.06, 50.0)),
        passing_summary(),  # written before the observer measured itself
    ]
    report = flakiness_of(summaries)
    assert report.observer is not None
    assert report.observer.runs == 2
    assert report.observer.share_of_core_median == pytest.approx(0.05)
    assert report.observer.share_of_core_max == pytest.approx(0.06)
    assert report.observer.sight_median_ms == pytest.approx(40.0)
    assert report.observer.sight_max_ms == pytest.approx(100.0)
    console = Console(width=200, record=True)
    console.print(flakiness_table(report))
    assert "observer over 2 runs: 5.0% of one core" in console.export_text()
    assert json.loads(report.to_json())["observer"]["runs"] == 2
    assert flakiness_of([passing_summary()]).observer is None
