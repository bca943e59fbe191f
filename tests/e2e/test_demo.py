"""`make demo` on a real cluster: the live window, then the takeaways, the plots and the report.

The demo's own path (its check and a scenario on threads of their own, handed
back as futures, the live view drawn from their samples, the results shown
after the window) runs nowhere else: the check and the scenarios alone are
proved by test_check.py and test_scenarios.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from crashloop_harness.cluster.lifecycle import Cluster
from crashloop_harness.core.paths import runs_dir
from crashloop_harness.live.demo import DemoOptions, run_demo
from crashloop_harness.outputs.document import REPORT_HTML
from crashloop_harness.outputs.summaryfile import read_summary

pytestmark = [pytest.mark.e2e]

# Long enough for the default worker's restart 3 (10 s, then 20 s), short enough for the fast tier.
WINDOW_S = 60.0


def _demo_runs() -> set[Path]:
    return set(runs_dir().glob("*-check-demo-*"))


def test_the_demo_shows_its_window_then_its_takeaways_and_report(
    crashloop_cluster: Cluster,
) -> None:
    before = _demo_runs()
    console = Console(record=True, width=140, force_terminal=False)
    options = DemoOptions(
        spec=crashloop_cluster.spec,
        duration_s=WINDOW_S,
        scenarios=("fast-restart",),
        plain=True,
        keep_cluster=True,
    )
    code = run_demo(options, console)
    shown = console.export_text()
    (run_dir,) = _demo_runs() - before
    summary = read_summary(run_dir)
    assert code == 0, f"{summary.status}: {summary.reason}\n{shown}"
    assert summary.profile == "demo"
    assert summary.status == "passed", summary.reason
    # Every worker restarted inside the window, on its curve, and the view said so.
    for worker in summary.workers:
        assert worker.passed, f"{worker.worker}: {worker.failures}"
        assert len(worker.measured_s) >= 2, f"{worker.worker}: {worker.measured_s}"
    assert (run_dir / REPORT_HTML).is_file()
    assert f"report: {run_dir / REPORT_HTML}" in shown.replace("\n", "")
    assert "host CPU during the window" in shown
    assert "the observation did not finish" not in shown
