"""The overhead sweep's outputs: overhead.json, a table, plots and a report in its run directory.

Written after every cell, so an interrupted sweep keeps what it measured.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from crashloop_harness.core.atomicfile import write_atomically
from crashloop_harness.core.version import produced_by
from crashloop_harness.outputs.document import (
    Block,
    Bullets,
    Heading,
    Image,
    Paragraph,
    Table,
    write_report_pages,
)
from crashloop_harness.overhead.analysis import (
    PEAK_INTERVALS,
    Cell,
    TalkRatio,
    curve_breaks_at,
    kubelet_cores_over_time,
    requests_over_time,
    talk_ratios,
)

if TYPE_CHECKING:
    from crashloop_harness.outputs.plots import OverheadSeries

OVERHEAD_FILE: Final = "overhead.json"
# overhead.json's layout; bumped when a field changes meaning or goes.
OVERHEAD_SCHEMA_VERSION: Final = 1
_MIB: Final = 1 << 20


def cell_document(cell: Cell) -> dict[str, Any]:
    """One cell with its derived numbers, as overhead.json keeps it."""
    return {
        **asdict(cell),
        "kubelet_cores": cell.kubelet_cores,
        "runtime_cores": cell.runtime_cores,
        "restarts_per_minute": cell.restarts_per_minute,
        "achieved_share": cell.achieved_share,
        "keeps_curve": cell.overshoot.keeps_curve,
    }


def workers_of(cells: Sequence[Cell]) -> list[str]:
    return list(dict.fromkeys(c.worker for c in cells if c.crashing))


def overhead_document(
    *, run_id: str, status: str, reason: str, plan: Mapping[str, Any], cells: Sequence[Cell]
) -> dict[str, Any]:
    workers = workers_of(cells)
    return {
        "run_id": run_id,
        "status": status,
        "reason": reason,
        "plan": dict(plan),
        "cells": [cell_document(c) for c in cells],
        "talk": {w: [asdict(r) for r in talk_ratios(cells, w)] for w in workers},
        "curve_breaks_at": {w: curve_breaks_at(cells, w) for w in workers},
    }


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def overhead_table(cells: Sequence[Cell]) -> Table:
    rows = []
    for c in cells:
        over = c.overshoot
        rows.append(
            (
                c.worker if c.crashing else f"baseline ({c.worker})",
                str(c.pods),
                _num(c.kubelet_cores, 3),
                _num(c.runtime_cores, 3),
                f"{c.kubelet_rss_bytes / _MIB:.0f}",
                _num(c.requests.mean_qps if c.requests else None),
                _num(c.requests.peak_qps if c.requests else None),
                _num(c.restarts_per_minute, 1),
                _num(c.achieved_share),
                f"{_num(over.median_s)} / {_num(over.p95_s)}",
                "-" if over.keeps_curve is None else ("yes" if over.keeps_curve else "no"),
                _at_cap_text(c),
                _drained_text(c),
            )
        )
    headers = (
        "worker",
        "pods",
        "kubelet cores",
        "runtime cores",
        "kubelet MiB",
        "QPS mean",
        f"QPS peak ({PEAK_INTERVALS} intervals)",
        "restarts/min",
        "achieved/allowed",
        "overshoot median / p95 (s)",
        "keeps curve",
        "at cap after (s)",
        "events drained after (s)",
    )
    return Table(headers, tuple(rows))


def _at_cap_text(cell: Cell) -> str:
    """How long the pods climbed to their cap; a window that began short of it says so."""
    if cell.at_cap is None or cell.climb_s is None:
        return "-"
    return f"{cell.climb_s:.0f}" if cell.at_cap else f"not in {cell.climb_s:.0f}"


def _drained_text(cell: Cell) -> str:
    """How long after the pods started the kubelet's event writes fell to a trickle."""
    if cell.events_drained is None or cell.drained_s is None:
        return "-"
    return f"{cell.drained_s:.0f}" if cell.events_drained else f"not in {cell.drained_s:.0f}"


def ratio_text(ratio: TalkRatio) -> str:
    """A talk figure as measured, beside the talk's, with what makes it doubtful."""
    measured = "not measured" if ratio.measured is None else f"{ratio.measured:.2f} {ratio.unit}"
    text = f"{ratio.what}: {measured} (the talk: {ratio.talk})"
    if ratio.caveats:
        text += f"; NOT a steady figure: {'; '.join(ratio.caveats)}"
    return text


def _series(cells: Sequence[Cell], value: Any) -> list[OverheadSeries]:
    from crashloop_harness.outputs.plots import OverheadSeries  # noqa: PLC0415 (when drawn)

    lines = [
        OverheadSeries(
            worker,
            worker,
            tuple(
                (c.pods, v)
                for c in cells
                if c.crashing and c.worker == worker
                if (v := value(c)) is not None
            ),
        )
        for worker in workers_of(cells)
    ]
    baseline = tuple((c.pods, v) for c in cells if not c.crashing if (v := value(c)) is not None)
    if baseline:
        lines.append(OverheadSeries("running, never crashing", "", baseline))
    return lines


def _largest_cells(cells: Sequence[Cell]) -> list[tuple[str, str, Cell]]:
    """(label, style, cell): each worker's largest crashing cell, and the largest baseline."""
    found = []
    for worker in workers_of(cells):
        top = max((c for c in cells if c.crashing and c.worker == worker), key=lambda c: c.pods)
        found.append((f"{worker}, {top.pods} pods", worker, top))
    baselines = [c for c in cells if not c.crashing]
    if baselines:
        top = max(baselines, key=lambda c: c.pods)
        found.append((f"running, never crashing, {top.pods} pods", "", top))
    return found


def _time_series(
    cells: Sequence[Cell], over_time: Callable[[Cell], list[tuple[float, float]]]
) -> list[OverheadSeries]:
    from crashloop_harness.outputs.plots import OverheadSeries  # noqa: PLC0415 (when drawn)

    return [
        OverheadSeries(label, style, tuple(over_time(cell)))
        for label, style, cell in _largest_cells(cells)
    ]


def write_overhead(
    run_dir: Path,
    *,
    run_id: str,
    status: str,
    reason: str,
    plan: Mapping[str, Any],
    cells: Sequence[Cell],
) -> Path:
    """overhead.json, the plots and report.md/html; the HTML report's path."""
    # Imported when drawn: matplotlib takes half a second to import, which every
    # command would otherwise pay at start-up (--help included).
    from crashloop_harness.outputs.plots import plot_overhead  # noqa: PLC0415

    document = {
        "schema_version": OVERHEAD_SCHEMA_VERSION,
        **produced_by(),
        **overhead_document(run_id=run_id, status=status, reason=reason, plan=plan, cells=cells),
    }
    write_atomically(
        run_dir / OVERHEAD_FILE, (json.dumps(document, indent=2) + "\n").encode("utf-8")
    )
    plots = [
        (
            "overhead-cpu",
            "kubelet CPU (cores)",
            "kubelet CPU against pods",
            lambda c: c.kubelet_cores,
        ),
        (
            "overhead-qps",
            "kubelet API requests per second (peak)",
            "kubelet API traffic against pods",
            lambda c: c.requests.peak_qps if c.requests else None,
        ),
        (
            "overhead-overshoot",
            "restart delay over the curve, p95 (s)",
            "how late restarts come against pods",
            lambda c: c.overshoot.p95_s,
        ),
    ]
    images = [
        Image(plot_overhead(_series(cells, value), ylabel, title, run_dir / stem)[0], title)
        for stem, ylabel, title, value in plots
    ]
    # The largest cells as they went: the load comes in waves when the pods crash in step.
    over_time = [
        (
            "overhead-cpu-time",
            "kubelet CPU (cores, per sample interval)",
            "kubelet CPU through the window, largest cells",
            lambda c: kubelet_cores_over_time(c.usage_samples),
        ),
        (
            "overhead-qps-time",
            "kubelet API requests per second (per sample interval)",
            "kubelet API traffic through the window, largest cells",
            lambda c: requests_over_time(c.request_samples),
        ),
    ]
    images += [
        Image(
            plot_overhead(
                _time_series(cells, series),
                ylabel,
                title,
                run_dir / stem,
                xlabel="seconds into the measured window",
            )[0],
            title,
        )
        for stem, ylabel, title, series in over_time
    ]
    blocks = _report_blocks(run_id, status, reason, cells, images)
    return write_report_pages(run_dir, blocks, f"Kubelet overhead, run {run_id}")


def _report_blocks(
    run_id: str, status: str, reason: str, cells: Sequence[Cell], images: Sequence[Image]
) -> list[Block]:
    workers = workers_of(cells)
    ratios = [f"{w}: {ratio_text(r)}" for w in workers for r in talk_ratios(cells, w)]
    breaks = []
    for worker in workers:
        at = curve_breaks_at(cells, worker)
        breaks.append(
            f"{worker}: kept its curve at every pod count measured"
            if at is None
            else f"{worker}: stopped keeping its curve at {at} pods"
        )
    blocks: list[Block] = [
        Heading(1, f"Kubelet overhead of crash-looping pods, run {run_id}"),
        Paragraph(f"status: {status}" + (f" ({reason})" if reason else "")),
        Heading(2, "The talk's figures, measured here"),
        Bullets(tuple(ratios or ["no crashing cell was measured"])),
        Heading(2, "Where each config stops keeping its curve"),
        Bullets(tuple(breaks or ["no crashing cell was measured"])),
        Heading(2, "Every cell"),
        overhead_table(cells),
        Heading(2, "Plots"),
        *images,
    ]
    return blocks
