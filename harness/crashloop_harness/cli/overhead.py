"""`crashloop overhead`: what crash-looping pods cost a worker, per back-off config;
`crashloop overhead-compare`: whether a rerun agrees with the first."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from crashloop_harness.cli import common
from crashloop_harness.cli.codes import COMPARE_CODES, OVERHEAD_CODES
from crashloop_harness.cli.out import SCREEN, emit
from crashloop_harness.cluster import lifecycle
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.outputs.document import Table
from crashloop_harness.outputs.render import document_table
from crashloop_harness.overhead.analysis import (
    PEAK_INTERVALS,
    REPEAT_WITHIN,
    Cell,
    FigureApart,
    curve_breaks_at,
    largest_crashing,
    talk_figures_apart,
    talk_ratios,
    windows_apart,
)
from crashloop_harness.overhead.output import (
    OVERHEAD_FILE,
    overhead_table,
    ratio_text,
    workers_of,
    write_overhead,
)
from crashloop_harness.overhead.pace import PACE_SHOWN, PacedFigure, node_bound, one_wave, paced
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
        return 130
    return 0 if status == "measured" else 1


def _apart_text(figure: FigureApart) -> str:
    apart = figure.apart
    return "-" if apart is None else f"{apart:+.0%}"


def _agrees_text(figure: FigureApart) -> str:
    if figure.caveats:
        return "cannot say: " + "; ".join(figure.caveats)
    return {True: "yes", False: "NO", None: "not measured"}[figure.agrees]


def _value_text(value: float | None, unit: str) -> str:
    return "not measured" if value is None else f"{value:.2f}{unit}"


def _pace_lines(figures: Sequence[PacedFigure], labels: tuple[str, str]) -> list[str]:
    """One line per pod count the figures were read at: how the machine's pace moved."""
    first, second = labels
    low, high = PACE_SHOWN
    shown = f"{low - 1:+.0%} to {high - 1:+.0%}"
    lines = []
    for pace in dict.fromkeys(f.pace for f in figures if f.pace is not None):
        lines.append(
            f"the machine's pace at {pace.pods} pods: the same running pods cost the kubelet "
            f"{pace.first_cores:.3f} cores in {first} and {pace.second_cores:.3f} in {second} "
            f"({pace.change - 1:+.0%}); a worker off its curve in both runs restarts as fast "
            "as the machine lets it, so its figures are expected to move by the inverse, "
            "one on its curve not at all"
        )
        if not low <= pace.change <= high:
            lines.append(
                f"that pace is outside {shown}, the range over which this account was shown "
                "to hold (docs/results.md): no figure is called a repeat after it"
            )
    return lines


def _wave_lines(first: Sequence[Cell], second: Sequence[Cell]) -> list[str]:
    """A worker whose talk-figure cell restarted in one wave: why its peak moves."""
    lines = []
    for worker in dict.fromkeys(c.worker for c in first if c.crashing):
        mine, theirs = largest_crashing(first, worker), largest_crashing(second, worker)
        if mine is None or theirs is None or not (one_wave(mine) or one_wave(theirs)):
            continue
        means = [c.requests.mean_qps if c.requests else None for c in (mine, theirs)]
        moved = (
            f"; the window's mean traffic moved {means[1] / means[0] - 1:+.0%}"
            if means[0] and means[1] is not None
            else ""
        )
        lines.append(
            f"{worker}: its {mine.pods} pods restarted about once each in the window "
            f"({mine.restarts} and {theirs.restarts} restarts): one wave, whose width the "
            "kubelet's requeue jitter draws pod by pod, so its peak is that wave's and moves "
            f"more than the traffic it carries{moved}"
        )
    return lines


def _expected_text(figure: PacedFigure) -> str:
    expected = figure.expected
    if expected is None or figure.figure.second is None:
        return "-"  # nothing of the second run's to set it beside, nor to call it bound
    unit = "x" if figure.figure.unit == "x" else " QPS"
    why = "node-bound" if figure.node_bound else "on its curve"
    return f"{expected:.2f}{unit} ({why})"


def _after_pace_text(figure: PacedFigure) -> str:
    left = figure.after_pace
    return "-" if left is None else f"{left:+.0%}"


def _agrees_after_pace_text(figure: PacedFigure) -> str:
    if figure.figure.caveats:
        return "cannot say"
    if figure.pace is not None and not figure.pace_shown:
        return "cannot say: pace outside the range shown"
    return {True: "yes", False: "NO", None: "not measured"}[figure.agrees]


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
    # 0 when every figure agrees; 1 when one moved more than REPEAT_WITHIN or either run did
    # not measure it.
    first, second = read_overhead(args.first), read_overhead(args.second)
    one_interval = not (first.has_series and second.has_series)
    figures = talk_figures_apart(
        first.cells,
        second.cells,
        peak_over_one_interval=one_interval,
        labels=(first.run_id, second.run_id),
    )
    swept = {c.worker for c in second.cells}
    if left_out := sorted({f.worker for f in figures} - swept):
        # A rerun of some workers only (--workers): the others are not compared, and say so.
        SCREEN.tables.print(
            f"not compared: {', '.join(left_out)} ({second.run_id} did not sweep "
            f"{'it' if len(left_out) == 1 else 'them'})"
        )
        figures = [f for f in figures if f.worker in swept]
    if not figures:
        raise HarnessError(
            f"{first.path}: no crashing cell to compare",
            "compare two sweeps that measured crashing pods (`crashloop overhead`)",
        )
    if one_interval:
        SCREEN.tables.print(
            "a run kept no request series: the peaks compared are each run's busiest "
            "single sample interval"
        )
    if first.from_cap != second.from_cap:
        climbed, capped = (second, first) if first.from_cap else (first, second)
        SCREEN.tables.print(
            f"{climbed.run_id} measured its crashing pods while they climbed their curve, "
            f"{capped.run_id} from their cap: the two do not measure the same place"
        )
    if first.after_events != second.after_events:
        early, late = (second, first) if first.after_events else (first, second)
        SCREEN.tables.print(
            f"{early.run_id} opened its windows without waiting for the kubelet's onset events "
            f"to drain, {late.run_id} after: a peak of the first may be an onset"
        )
    if apart := windows_apart(first.cells, second.cells):
        windows = ", ".join(f"{w} {a:.0f}s against {b:.0f}s" for w, a, b in apart)
        SCREEN.tables.print(
            f"the windows differ ({windows}): a longer one averages more of the kubelet's "
            "swings, so its figures may move with it"
        )
    with_pace = paced(figures, first.cells, second.cells)
    for line in _pace_lines(with_pace, (first.run_id, second.run_id)):
        SCREEN.tables.print(line)
    for line in _wave_lines(first.cells, second.cells):
        SCREEN.tables.print(line)
    rows = tuple(
        (
            f.worker,
            f.what,
            _value_text(f.first, "x" if f.unit == "x" else " QPS"),
            _value_text(f.second, "x" if f.unit == "x" else " QPS"),
            _apart_text(f),
            _agrees_text(f),
            _expected_text(p),
            _after_pace_text(p),
            _agrees_after_pace_text(p),
        )
        for f, p in zip(figures, with_pace, strict=True)
    )
    within = f"within {REPEAT_WITHIN:.0%}"
    headers = (
        "worker",
        "figure",
        first.run_id,
        second.run_id,
        "apart",
        within,
        "expected from the pace",
        "left after the pace",
        f"after the pace {within}",
    )
    SCREEN.tables.print(document_table(Table(headers, rows)))
    # The exit is on what the pace leaves: on this machine the same work costs up to
    # 70 % more CPU at one hour than another, so a raw 20 % would fail on the hour,
    # not on the kubelet; the raw figures stay beside them, and a pace outside the
    # range the account was shown over decides nothing.
    agree = all(p.agrees for p in with_pace)
    emit(
        {
            "first": str(first.path),
            "second": str(second.path),
            "within": REPEAT_WITHIN,
            "pace_shown": list(PACE_SHOWN),
            "agree": agree,
            "figures": [
                {
                    **asdict(f),
                    "apart": f.apart,
                    "agrees": f.agrees,
                    "pace": None if p.pace is None else {**asdict(p.pace), "change": p.pace.change},
                    "node_bound": p.node_bound,
                    "expected_from_pace": p.expected,
                    "after_pace": p.after_pace,
                    "agrees_after_pace": p.agrees,
                }
                for f, p in zip(figures, with_pace, strict=True)
            ],
        }
    )
    return 0 if agree else 1
