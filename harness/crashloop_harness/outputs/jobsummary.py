"""A check's verdict as a GitHub Actions job summary (Markdown), for the page a failure links to.

Written when ``GITHUB_STEP_SUMMARY`` is set: per worker the verdict, its
first measured delays against the expected ones and the first failure, and
a link to the run's artifact (the run directory, with every record).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from crashloop_harness.outputs.summary import RunSummary

SHOWN_RESTARTS: Final = 8
STEP_SUMMARY_VARIABLE: Final = "GITHUB_STEP_SUMMARY"


def run_url(environment: Mapping[str, str]) -> str | None:
    """The Actions run's page (its artifacts are listed there); None outside Actions."""
    server = environment.get("GITHUB_SERVER_URL")
    repository = environment.get("GITHUB_REPOSITORY")
    run_id = environment.get("GITHUB_RUN_ID")
    if not (server and repository and run_id):
        return None
    return f"{server}/{repository}/actions/runs/{run_id}"


def _delays(values: tuple[float | None, ...]) -> str:
    shown = ", ".join("-" if v is None else f"{v:.1f}" for v in values[:SHOWN_RESTARTS])
    return shown + (" ..." if len(values) > SHOWN_RESTARTS else "")


def job_summary(summary: RunSummary, run_dir: Path, url: str | None) -> str:
    """The Markdown for one check run."""
    verdict = "passed" if summary.passed else summary.status.upper()
    lines = [
        f"### Kubelet backoff check ({summary.profile}, {summary.cluster.kubernetes_version}): "
        f"{verdict}",
        "",
    ]
    if summary.reason:
        lines += [f"> {summary.reason}", ""]
    lines += [
        "| worker | verdict | restarts | measured delays (s) | expected (s) | first failure |",
        "|---|---|---|---|---|---|",
    ]
    for worker in summary.workers:
        first_failure = worker.failures[0].replace("|", "/") if worker.failures else ""
        lines.append(
            f"| {worker.worker} | {'pass' if worker.passed else 'FAIL'} | {len(worker.checks)} | "
            f"{_delays(worker.measured_s)} | {_delays(worker.expected_s)} | {first_failure} |"
        )
    where = f"run directory `{run_dir.name}`"
    lines += [
        "",
        f"Every record is in the {where}" + (f", artifacts of [this run]({url})." if url else "."),
    ]
    return "\n".join(lines) + "\n"


def write_job_summary(summary: RunSummary, run_dir: Path) -> Path | None:
    """Append the check's job summary where Actions reads it; None outside Actions."""
    target = os.environ.get(STEP_SUMMARY_VARIABLE)
    if not target:
        return None
    with Path(target).open("a", encoding="utf-8") as out:
        out.write(job_summary(summary, run_dir, run_url(os.environ)))
    return Path(target)
