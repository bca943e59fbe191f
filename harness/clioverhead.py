"""`crashloop overhead`: what crash-looping pods cost a worker, per back-off config."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from harness.cliinfo import spec_of
from harness.cliout import SCREEN, emit
from harness.cluster import lifecycle
from harness.model.overhead import curve_breaks_at, talk_ratios
from harness.outputs.document import to_markdown
from harness.outputs.overheadout import OVERHEAD_FILE, overhead_table, workers_of
from harness.runs.overhead import run_overhead, write_overhead_run
from harness.runs.overheadplan import check_overhead_request, plan_overhead


def cmd_overhead(args: argparse.Namespace, progress: Callable[[str], None]) -> int:
    """Plan the sweep (refusing bad input before anything is created), run it, write it."""
    spec = spec_of(args)
    request = check_overhead_request(
        spec,
        workers=[w.strip() for w in args.workers.split(",") if w.strip()],
        pods=args.pods,
        duration_s=args.duration,
        warmup_s=args.warmup,
    )
    up = lifecycle.up(spec, progress, image=args.image)
    plan = plan_overhead(up.api(), up, request)
    cells = len(plan.cells())
    windows = ", ".join(f"{w} {s:.0f}s" for w, s in plan.windows_s.items())
    progress(f"overhead: {cells} cells, pods {list(plan.pods)}, windows {windows}")

    run = run_overhead(up, plan, progress, on_cell=write_overhead_run)
    write_overhead_run(run)
    SCREEN.tables.print(to_markdown([overhead_table(run.cells)]), soft_wrap=True)
    for worker in workers_of(run.cells):
        for ratio in talk_ratios(run.cells, worker):
            measured = "-" if ratio.measured is None else f"{ratio.measured:.2f} {ratio.unit}"
            SCREEN.tables.print(f"{worker}: {ratio.what}: {measured} (the talk: {ratio.talk})")
        at = curve_breaks_at(run.cells, worker)
        SCREEN.tables.print(
            f"{worker}: " + ("kept its curve" if at is None else f"off its curve from {at} pods")
        )
    SCREEN.tables.print(f"{run.status}: results in {run.run_dir / OVERHEAD_FILE}")
    emit({"run_dir": str(run.run_dir), "status": run.status})
    if run.status == "interrupted":
        return 130
    return 0 if run.status == "measured" else 1
