"""Ctrl-C during a check keeps every measured attempt, says so, and cleans up."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from kubernetes import client
from tenacity import Retrying, retry_if_result, stop_after_delay, wait_fixed

from crashloop_harness.cluster.lifecycle import Cluster
from crashloop_harness.core import timeouts
from crashloop_harness.recording.records import read_attempts
from tests.e2e.specfile import spec_file_of

# The checkout: the interrupted CLI runs from it, writing runs/ there.
REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _newest_check_run(runs: Path, before: set[Path]) -> Path | None:
    fresh = [path for path in runs.glob("*-check-quick-*") if path not in before]
    return max(fresh, default=None)


def test_sigint_keeps_attempts_marks_summary_and_removes_namespace(
    crashloop_cluster: Cluster, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    command = [sys.executable, "-m", "crashloop_harness.cli", "check", "--profile", "quick"]
    # The suite's own cluster, not one named by the spec alone (a presenter's).
    command += ["--config", str(spec_file_of(crashloop_cluster, tmp_path))]
    env = {
        **os.environ,
        "CRASHLOOP_RUNS_DIR": str(runs),
        "CRASHLOOP_STATE_DIR": str(crashloop_cluster.kubeconfig.parent),
    }
    process = subprocess.Popen(command, cwd=REPO_ROOT, env=env, text=True)

    def attempts_recorded() -> int:
        run = _newest_check_run(runs, set())
        if run is None or not (run / "attempts.jsonl").exists():
            return 0
        return len(read_attempts(run / "attempts.jsonl"))

    Retrying(
        stop=stop_after_delay(timeouts.POD_RUNNING),
        wait=wait_fixed(1),
        retry=retry_if_result(lambda count: count < 6),
        reraise=True,
    )(attempts_recorded)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=timeouts.NAMESPACE_GONE + timeouts.API_REQUEST) == 130

    run = _newest_check_run(runs, set())
    assert run is not None
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"] == "interrupted"
    recorded = read_attempts(run / "attempts.jsonl")
    assert len(recorded) >= 6
    assert sum(worker["attempts_recorded"] for worker in summary["workers"]) == len(recorded)
    namespaces = client.CoreV1Api(crashloop_cluster.api()).list_namespace().items
    assert not [
        ns.metadata.name for ns in namespaces if ns.metadata.name.startswith("crashloop-check")
    ]
