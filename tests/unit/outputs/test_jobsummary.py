"""The check's GitHub Actions job summary: verdict per worker, delays, the run's link."""

from __future__ import annotations

from pathlib import Path

import pytest

from crashloop_harness.outputs.jobsummary import job_summary, run_url, write_job_summary
from tests.unit.factories import failing_summary, passing_summary

ACTIONS = {
    "GITHUB_SERVER_URL": "https://github.com",
    "GITHUB_REPOSITORY": "o/crashloop-harness",
    "GITHUB_RUN_ID": "42",
}


def test_the_run_url_needs_all_three_variables() -> None:
    assert run_url(ACTIONS) == "https://github.com/o/crashloop-harness/actions/runs/42"
    assert run_url({k: v for k, v in ACTIONS.items() if k != "GITHUB_RUN_ID"}) is None


def test_a_failed_check_names_every_worker_and_its_first_failure() -> None:
    summary = failing_summary()
    text = job_summary(summary, Path("/runs/20260101-check-quick-ab12"), run_url(ACTIONS))
    assert "FAILED" in text.splitlines()[0]
    rows = [line for line in text.splitlines() if line.startswith("| ") and "worker" not in line]
    assert len(rows) == len(summary.workers)
    failed = [w for w in summary.workers if not w.passed]
    assert failed
    for worker in failed:
        row = next(r for r in rows if r.startswith(f"| {worker.worker} |"))
        assert "| FAIL |" in row
        assert worker.failures[0].replace("|", "/")[:30] in row
    assert "actions/runs/42" in text


def test_a_passed_check_says_passed_and_has_no_link_outside_actions() -> None:
    text = job_summary(passing_summary(), Path("/runs/x"), None)
    assert text.splitlines()[0].endswith("passed")
    assert "actions/runs" not in text


def test_written_only_when_actions_asks_for_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    assert write_job_summary(passing_summary(), tmp_path) is None
    target = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
    write_job_summary(passing_summary(), tmp_path)
    write_job_summary(failing_summary(), tmp_path)
    assert target.read_text().count("### Kubelet backoff check") == 2
