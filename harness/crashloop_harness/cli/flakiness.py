"""`crashloop flakiness`: checks in a row on one cluster, or finished ones pooled."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.text import Text

from crashloop_harness.cli import common
from crashloop_harness.cli.codes import MEASURING_CODES
from crashloop_harness.cli.measure import profile_option, run_and_report_check
from crashloop_harness.cli.out import SCREEN, emit
from crashloop_harness.cluster import lifecycle
from crashloop_harness.core.atomicfile import write_atomically
from crashloop_harness.core.exitcodes import INTERRUPTED
from crashloop_harness.outputs.flakiness import flakiness_of
from crashloop_harness.outputs.render import flakiness_table
from crashloop_harness.outputs.report import write_report
from crashloop_harness.outputs.summary import RunSummary
from crashloop_harness.runs.check import CheckResult
from crashloop_harness.runs.lifecycle import new_run_dir, point_latest_at
from crashloop_harness.runs.series import Series, checks_in_a_row, summaries_in


def register(commands: common.Commands, parents: common.Parents) -> None:
    flakiness = common.add_command(
        commands,
        "flakiness",
        _cmd_flakiness,
        codes=MEASURING_CODES,
        parents=(parents.spec_and_image,),
    )
    profile_option(flakiness, "quick")
    common.observer_option(flakiness)
    common.output_option(flakiness)
    source = flakiness.add_mutually_exclusive_group()
    source.add_argument(
        "--runs", type=common.positive_int, default=10, help="how many checks to run (default 10)"
    )
    source.add_argument(
        "--from",
        dest="runs_from",
        nargs="+",
        metavar="RUN_DIR",
        help="run nothing: aggregate the summaries of these finished quick or full check runs "
        "(a demo, a drill or a scenario run is refused)",
    )


def _cmd_flakiness(args: argparse.Namespace) -> int:
    """run the check many times in a row on one cluster; pass count and overshoot spread

    Run the check many times in a row on one cluster (or pool finished runs): the pass count and the
    spread of the overshoot.
    """
    if args.runs_from:
        series = summaries_in([Path(run_dir) for run_dir in args.runs_from])
    else:
        series = _checks_in_a_row(args)
    # Whatever ended the series, what finished is pooled and written.
    report = flakiness_of(series.summaries)
    _, run_dir = new_run_dir("flakiness")
    written = write_atomically(run_dir / "flakiness.json", report.to_json().encode())
    point_latest_at(run_dir)
    SCREEN.tables.print(flakiness_table(report))
    SCREEN.tables.print(f"flakiness of {len(series.summaries)} runs in {written}")
    emit({"run_dir": str(run_dir), "flakiness": json.loads(report.to_json())})
    if series.error is not None:
        common.console.print(Text("error: ", style="bold red") + Text(series.error), soft_wrap=True)
        return 2
    if series.interrupted:
        return INTERRUPTED
    return 0 if report.all_passed else 1


def _checks_in_a_row(args: argparse.Namespace) -> Series:
    up = lifecycle.up(common.spec_of(args), common.progress, image=args.image)

    def run_one() -> tuple[CheckResult, RunSummary]:
        result, summary = run_and_report_check(up, args.profile, args.observer)
        write_report(result.run_dir, summary, result.attempts)
        return result, summary

    return checks_in_a_row(args.runs, run_one, common.progress)
