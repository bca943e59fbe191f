"""The demo's takeaways and report come from the summary its check carries.

The check's run directory holds no summary.json here: a demo reading its own
run's file back would fail before its takeaways.
"""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace

import pytest
from rich.console import Console

from crashloop_harness.cluster import lifecycle
from crashloop_harness.cluster.profiles import load_cluster_spec
from crashloop_harness.core.resources import CLUSTERS_DIR
from crashloop_harness.live import demo
from crashloop_harness.outputs.summary import SUMMARY_FILE, RunSummary
from crashloop_harness.runs.check import CheckResult
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES
from tests.unit.factories import quick_attempts, quick_summary


def test_the_demo_shows_and_reports_the_summary_its_check_carries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = quick_summary()
    result = CheckResult(
        run_id=summary.run_id,
        run_dir=tmp_path,
        profile=CHECK_PROFILES["quick"],
        rows=[],
        curves={},
        nodes={},
        status=summary.status,
    )
    result.attempts = quick_attempts()
    result.summary = summary
    reported: list[RunSummary] = []

    def report(_run_dir: Path, given: RunSummary, *_args: object) -> Path:
        reported.append(given)
        return tmp_path / "report.html"

    cluster = SimpleNamespace(name="crashloop", kubeconfig=tmp_path / "kubeconfig")
    monkeypatch.setattr(lifecycle, "up", lambda *_args, **_kwargs: cluster)
    monkeypatch.setattr(demo, "run_check", lambda *_args, **_kwargs: result)
    monkeypatch.setattr(demo, "write_report", report)
    options = demo.DemoOptions(
        spec=load_cluster_spec(CLUSTERS_DIR / "crashloop.yaml"), scenarios=(), plain=True
    )
    out = io.StringIO()
    code = demo.run_demo(options, Console(file=out, force_terminal=False, width=200))
    assert code == (0 if summary.passed else 1)
    assert reported == [summary]
    assert f"report: {tmp_path / 'report.html'}" in out.getvalue()
    assert not (tmp_path / SUMMARY_FILE).exists()
