"""Checks in a row on one cluster, or the summaries of finished ones: a flakiness series.

Whatever ends a series early (Ctrl-C, a check that could not finish), the
summaries of the checks that finished are kept for pooling.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import urllib3
from kubernetes.client import ApiException

from crashloop_harness.core.errors import HarnessError, first_line
from crashloop_harness.core.progress import Progress
from crashloop_harness.outputs.summary import SUMMARY_FILE, RunSummary, require_pooled_check
from crashloop_harness.outputs.summaryfile import read_summary
from crashloop_harness.runs.check import CheckResult


@dataclass
class Series:
    """The summaries of the checks that finished, and what ended the series early."""

    summaries: list[RunSummary] = field(default_factory=list)
    interrupted: bool = False
    error: str | None = None


def summaries_in(run_dirs: Sequence[Path]) -> Series:
    """A series of checks already run, from their run directories: quick or full checks only.

    A scenario run, a demo or a drill measured something else; pooled with
    the checks it would pass for one of them.
    """
    summaries = []
    for run_dir in run_dirs:
        path = run_dir / SUMMARY_FILE
        if not path.is_file():
            raise HarnessError(
                f"{run_dir} holds no {SUMMARY_FILE}: name the run directories of finished checks "
                "(runs/<id>-check-<profile>-<hex>)"
            )
        summary = read_summary(path)
        require_pooled_check(summary, run_dir)
        summaries.append(summary)
    return Series(summaries)


def checks_in_a_row(
    count: int, run_one: Callable[[], tuple[CheckResult, RunSummary]], progress: Progress
) -> Series:
    """``count`` checks one after the other; stops early on Ctrl-C or a check that cannot finish."""
    series = Series()
    for number in range(1, count + 1):
        progress(f"check {number} of {count}")
        try:
            result, summary = run_one()
        except KeyboardInterrupt:
            series.interrupted = True
            return series
        except (HarnessError, ApiException, urllib3.exceptions.HTTPError) as error:
            series.error = f"check {number} of {count} could not finish: {first_line(error)}"
            return series
        series.summaries.append(summary)
        if result.status == "interrupted":
            series.interrupted = True
            return series
    return series
