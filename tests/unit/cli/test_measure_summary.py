"""`crashloop check` and `crashloop scenarios` report the summary their run carries.

The run's directory holds no summary.json here: a command reading its own run's
file back would fail, or report nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crashloop_harness.cli import app as cli
from crashloop_harness.cli import common, measure
from crashloop_harness.outputs.summary import SUMMARY_FILE
from crashloop_harness.runs import scenarioplan
from crashloop_harness.runs.check import CheckResult
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES
from crashloop_harness.runs.scenarios import ScenarioRun
from crashloop_harness.scenarios import FAST_RESTART
from tests.unit.factories import FAST, fast_verdict, make_summary, scenario_metric, scenario_summary


@pytest.fixture
def run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty run directory, and a target that is never brought up."""
    monkeypatch.setattr(common, "target", lambda _args: None)
    path = tmp_path / "run"
    path.mkdir()
    return path


def test_check_reports_the_summary_its_run_carries(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    result = CheckResult(
        run_id="run",
        run_dir=run_dir,
        profile=CHECK_PROFILES["quick"],
        rows=[],
        curves={"fast": FAST},
        nodes={"fast": "crashloop-worker"},
        status="passed",
    )
    result.summary = make_summary(fast_verdict())
    monkeypatch.setattr(measure, "run_check", lambda *_args, **_kwargs: result)
    monkeypatch.setattr(measure, "write_report", lambda *_args: run_dir / "report.html")
    monkeypatch.setattr(measure, "write_job_summary", lambda *_args: None)
    assert cli.main(["check", "-o", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["summary"] == json.loads(result.summary.to_json())
    assert not (run_dir / SUMMARY_FILE).exists()


def test_scenarios_report_the_summary_each_run_carries(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run = ScenarioRun(
        run_id="run",
        run_dir=run_dir,
        scenarios=(FAST_RESTART,),
        curves={"fast": FAST},
        nodes={"fast": "crashloop-worker"},
        status="failed",
    )
    run.summary = scenario_summary(scenario_metric(passed=False))
    monkeypatch.setattr(scenarioplan, "run_scenarios", lambda *_args, **_kwargs: run)
    assert cli.main(["scenarios", "--scenarios", FAST_RESTART, "-o", "json"]) == 1
    (document,) = json.loads(capsys.readouterr().out)["runs"]
    assert document["status"] == "failed"
    assert document["summary"] == json.loads(run.summary.to_json())
