"""`crashloop overhead`: what crash-looping pods cost a worker, per back-off config;
`crashloop overhead-compare`: whether a rerun agrees with the first."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from crashloop_harness.cli import common
from crashloop_harness.cli.codes import COMPARE_CODES, OVERHEAD_CODES
from crashloop_harness.cli.out import SCREEN, emit
from crashloop_harness.cluster import lifecycle
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.exitcodes import INTERRUPTED
from crashloop_harness.outputs.render import document_table
from crashloop_harness.overhead.analysis import (
    PEAK_INTERVALS,
    REPEAT_WITHIN,
    Cell,
    curve_breaks_at,
    largest_crashing,
    talk_ratios,
)
from crashloop_harness.overhead.compare import compare_sweeps, comparison_document
from crashloop_harness.overhead.compareview import comparison_view
from crashloop_harness.overhead.output import (
    OVERHEAD_FILE,
    overhead_table,
    ratio_text,
    workers_of,
    write_overhead,
)
from crashloop_harness.overhead.pace import node_bound
from crashloop_harness.overhead.plan import (
    DEFAULT_PODS,
    DEFAULT_WARMUP_S,
    DEFAULT_WORKERS,
    check_overhead_request,
    plan_overhead,
)
from crashloop_harness.overhead.read import read_overhead
from crashloop_harness.overhead.sweep import run_overhead, write_overhead_run
from crashloop_harness.runs.lifecycle import point_latest_at


def register(commands: common.Commands, parents: common.Parents) -> None:
    _add_overhead(commands, parents)
    _add_compare(commands, parents)


def _add_overhead(commands: common.Commands, parents: common.Parents) -> None:
    overhead = common.add_command(
        commands, "overhead", cmd_overhead, codes=OVERHEAD_CODES, parents=(parents.spec_and_image,)
    )
    # --pods, --workers and --warmup default to None so that --from, which runs
    # nothing, can refuse them when given; cmd_overhead fills in the defaults.
    overhead.add_argument(
        "--pods",
        help=f"pod counts, comma-separated; 'full': as many as the node takes (default "
        f"{DEFAULT_PODS})",
    )
    overhead.add_argument(
        "--workers", help=f"workers to load, one at a time (default {DEFAULT_WORKERS})"
    )
    overhead.add_argument(
        "--duration",
        type=common.seconds,
        metavar="DURATION",
        help=(
            "each crashing cell's measured window (default per worker: 180s, or its cap "
            "plus 10%% where that is longer; a baseline's is 60s)"
        ),
    )
    overhead.add_argument(
        "--warmup",
        type=float,
        metavar="S",
        help="settling time before the window, after every pod started (crashing pods: "
        "after every one reached its back-off cap); the window then also waits for the "
        "kubelet's event writes to fall to a trickle "
        f"(default {DEFAULT_WARMUP_S:g})",
    )
    overhead.add_argument(
        "--from",
        dest="overhead_from",
        type=Path,
        metavar="RUN_DIR",
        help="run nothing: write a finished sweep's overhead.json, table, plots and report "
        "again with the current analysis (peaks recomputed from the series it kept)",
    )
    common.output_option(overhead)


def _add_compare(commands: common.Commands, parents: common.Parents) -> None:
    compare = common.add_command(
        commands,
        "overhead-compare",
        cmd_overhead_compare,
        codes=COMPARE_CODES,
        words={"within": REPEAT_WITHIN * 100},
    )
    compare.add_argument(
        "first", type=Path, metavar="FIRST", help="a sweep's run directory or overhead.json"
    )
    compare.add_argument("second", type=Path, metavar="SECOND", help="the rerun, likewise")
    common.output_option(compare)


def cmd_overhead(args: argparse.Namespace) -> int:
    """what N crash-looping pods cost a worker's kubelet and runtime, per back-off config

    The talk's cost analysis: for each worker and pod count, N crash-looping pods on that worker
    alone (and N running pods as the baseline); the kubelet's and the runtime's CPU, the kubelet's
    memory and API request rate, restarts achieved against the curve. Each cell starts once every
    worker's runtime is rid of the cells before it; its window opens once the pods are at their cap
    and the kubelet's onset events are sent. overhead.json, a table, plots and a report.
    """
    # Plan the sweep (refusing bad input before anything is created), run it, write it; with
    # --from, rewrite a finished sweep's outputs instead and run nothing.
    sweep_options = {
        "--pods": args.pods,
        "--workers": args.workers,
        "--duration": args.duration,
        "--warmup": args.warmup,
    }
    if args.overhead_from is not None:
        given = [option for option, value in sweep_options.items() if value is not None]
        if given:
            raise HarnessError(
                f"{', '.join(given)} with --from: --from runs nothing, it writes a finished "
                "sweep's outputs again, so a sweep's options cannot apply",
                "leave them out to rewrite the sweep, or leave out --from to run a new one",
            )
        return _rewrite(args.overhead_from)
    spec = common.spec_of(args)
    workers = DEFAULT_WORKERS if args.workers is None else args.workers
    request = check_overhead_request(
        spec,
        workers=[w.strip() for w in workers.split(",") if w.strip()],
        pods=DEFAULT_PODS if args.pods is None else args.pods,
        duration_s=args.duration,
        warmup_s=DEFAULT_WARMUP_S if args.warmup is None else args.warmup,
    )
    up = lifecycle.up(spec, common.progress, image=args.image)
    plan = plan_overhead(up.api(), up, request)
    cells = len(plan.cells())
    windows = ", ".join(f"{w} {s:.0f}s" for w, s in plan.windows_s.items())
    common.progress(f"overhead: {cells} cells, pods {list(plan.pods)}, windows {windows}")

    run = run_overhead(up, plan, common.progress, on_cell=write_overhead_run)
    write_overhead_run(run)
    point_latest_at(run.run_dir)
    return _show(run.cells, run.status, run.run_dir)


def _rewrite(path: Path) -> int:
    """A finished sweep's outputs written again with the current analysis, in its directory:
    the readings stay as measured, the peaks are recomputed from the series it kept."""
    written = read_overhead(path)
    plan = {**written.plan, "peak_intervals": PEAK_INTERVALS if written.has_series else 1}
    write_overhead(
        written.path.parent,
        run_id=written.run_id,
        status=written.status,
        reason=written.reason,
        plan=plan,
        cells=written.cells,
    )
    return _show(written.cells, written.status, written.path.parent)


def _show(cells: Sequence[Cell], status: str, run_dir: Path) -> int:
    SCREEN.tables.print(document_table(overhead_table(cells)))
    for worker in workers_of(cells):
        for ratio in talk_ratios(cells, worker):
            SCREEN.tables.print(f"{worker}: {ratio_text(ratio)}")
        at = curve_breaks_at(cells, worker)
        SCREEN.tables.print(
            f"{worker}: " + ("kept its curve" if at is None else f"off its curve from {at} pods")
        )
        top = largest_crashing(cells, worker)
        if top is not None and node_bound(top):
            SCREEN.tables.print(
                f"{worker}: at {top.pods} pods it restarts as fast as the machine lets it, so "
                "its figures there move with the machine's pace from run to run "
                "(`crashloop overhead-compare` sets the pace beside them)"
            )
    SCREEN.tables.print(f"{status}: results in {run_dir / OVERHEAD_FILE}")
    emit({"run_dir": str(run_dir), "status": status})
    if status == "interrupted":
        return INTERRUPTED
    return 0 if status == "measured" else 1


def cmd_overhead_compare(args: argparse.Namespace) -> int:
    """set two finished overhead sweeps' talk figures side by side; exit 1 when one moved more than
    {within:.0f}%% beyond what the machine's pace explains

    Set two finished overhead sweeps side by side: each talk figure (crashing / running kubelet CPU,
    peak API requests) from both runs and how far apart they are. Peaks are recomputed from the
    runs' request series; a run that kept none is compared on its busiest single sample interval.
    The machine's pace comes first (what the same running pods cost the kubelet in each run), and
    beside each figure what the pace predicts of it: a worker off its curve restarts as fast as the
    machine lets it, so its figures move by the pace's inverse. The verdict is on what the pace
    leaves.
    """
    # 0 when every figure agrees after the pace (Comparison.agree); 1 when one does not.
    comparison = compare_sweeps(read_overhead(args.first), read_overhead(args.second))
    for shown in comparison_view(comparison):
        SCREEN.tables.print(shown)
    emit(comparison_document(comparison))
    return 0 if comparison.agree else 1
