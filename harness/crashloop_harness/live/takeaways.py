"""The demo's takeaways, measured: what each worker's bare curve did, and the scenarios
against the model (pure: a run's summary and metrics in, tables out).

Read from the run's summary, so a replay of the run ends with the same tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from rich import box
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Column, Table
from rich.text import Text

from crashloop_harness.live.view import window_text, within
from crashloop_harness.model.subject import is_bare
from crashloop_harness.outputs.narrow import TableOrLines, legend
from crashloop_harness.outputs.summary import RunSummary, WorkerSummary
from crashloop_harness.recording.hostcpu import SATURATED
from crashloop_harness.scenarios.headline import ScenarioMetric

_TITLE: Final = "what each worker did (bare crashing container)"
# As many as the live view's panel shows: the curve's first levels, side by side.
FIRST_RESTARTS: Final = 6
_INDENT: Final = (0, 0, 0, 2)
_SCENARIOS_TITLE: Final = (
    "the scenarios, measured (model · the kubelet's window · model + restart cost)"
)
# The model as the window the kubelet's code allows each restart, not one number to hit.
_LEGEND: Final = (
    ("delay", "each restart's measured delay after the exit before it"),
    (
        "window",
        "its back-off, to the latest the kubelet's code allows on this node (the requeue's "
        "jitter, the sync and the restart's cost)",
    ),
    ("late, early", "outside that window"),
)


def takeaways(
    summary: RunSummary, under_load: Mapping[str, tuple[int, int]] | None = None
) -> RenderableType:
    """The talk's takeaways, measured: per worker, what the model predicted and what happened.

    Read from the run's summary (and its host CPU samples), so a replay of the
    run ends with the same table. ``under_load``: worker -> (restarts started
    with the host saturated, restarts with a sample).

    Each worker gets a line of counts and a small table of its first restarts,
    the measured delay above its window as in the live view: six windows side by
    side read at 80 columns, where a column of them wrapped each over five lines.
    """
    # A variant beside a worker is not one of the talk's three.
    workers = [w for w in summary.workers if is_bare(w.worker)]
    rows = {w.worker: _restart_rows(w) for w in workers}
    widths = _widths(list(rows.values()))
    shown: list[RenderableType] = [Text(_TITLE, style="bold")]
    for worker in workers:
        shown.append(Text(_counts(worker, (under_load or {}).get(worker.worker))))
        if worker.checks:
            delays, windows = rows[worker.worker]
            table = _restarts_table(delays, windows, widths)
            shown.append(Padding(TableOrLines(table, _restarts_lines(delays, windows)), _INDENT))
    shown.append(legend(_LEGEND))
    return Group(*shown)


def _counts(worker: WorkerSummary, under_load: tuple[int, int] | None) -> str:
    parts = [f"{max(worker.attempts_recorded - 1, 0)} restarts"]
    # A share, not a verdict: the demo runs everything at once on what may be a
    # small machine; the conformance check is where a red result counts.
    if worker.checks:
        parts.append(
            f"{sum(c.passed for c in worker.checks)}/{len(worker.checks)} within the window"
        )
    else:
        parts.append("no data")
    if under_load is not None and under_load[1]:
        saturated, sampled = under_load
        parts.append(f"{saturated}/{sampled} started at ≥{SATURATED:.0%} CPU")
    return f"{worker.worker}: {', '.join(parts)}"


def _restart_rows(worker: WorkerSummary) -> tuple[list[str], list[str]]:
    """The first restarts' measured delays and their windows, one cell per restart."""
    delays, windows = [], []
    for check in worker.checks[:FIRST_RESTARTS]:
        window = (check.expected_s, check.upper_bound_s)
        windows.append(window_text(window))
        delays.append(_delay(check.measured_s, window))
    return delays, windows


def _delay(measured_s: float | None, window: tuple[float, float]) -> str:
    if measured_s is None:
        return "-"
    if within(measured_s, window):
        return f"{measured_s:.1f}s"
    # Which side says more than "outside": early is the kubelet's bug, late may be the load.
    return f"{measured_s:.1f}s {'late' if measured_s > window[1] else 'early'}"


def _widths(rows: Sequence[tuple[list[str], list[str]]]) -> list[int]:
    """Each restart's column width over every worker, so the workers' tables line up."""
    widths = [len(str(n)) for n in range(1, FIRST_RESTARTS + 1)]
    for delays, windows in rows:
        for column, (delay, window) in enumerate(zip(delays, windows, strict=True)):
            widths[column] = max(widths[column], len(delay), len(window))
    return widths


def _restarts_table(delays: Sequence[str], windows: Sequence[str], widths: Sequence[int]) -> Table:
    columns = [Column("restart", no_wrap=True)]
    columns += [
        Column(str(n), min_width=width, justify="right", no_wrap=True)
        for n, width in zip(range(1, len(delays) + 1), widths, strict=False)
    ]
    table = Table(*columns, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_row("delay", *delays)
    table.add_row("window", *windows)
    return table


def _restarts_lines(delays: Sequence[str], windows: Sequence[str]) -> Text:
    """The same restarts as words, where even six columns are too wide."""
    restarts = enumerate(zip(delays, windows, strict=True), start=1)
    return Text("; ".join(f"restart {n}: {d}, window {w}" for n, (d, w) in restarts))


def scenario_takeaways(metrics: Sequence[ScenarioMetric], cost: float | None) -> RenderableType:
    """The talk's takeaways table: per scenario, per worker, measured against the model.

    Beside the nominal model, the model with this machine's fixed cost per
    restart (measured on the bare curves of this run): what is left above it
    is the kubelet's or the load's, not the price of starting a container.
    A table where its cells fit unwrapped; else, as at 80 or 100 columns, each
    scenario with a line per worker, where a cell's number keeps its unit.
    """
    workers = list(dict.fromkeys(metric.worker for metric in metrics))
    table = Table("scenario", *workers)
    listed: list[RenderableType] = []
    for scenario in dict.fromkeys(metric.scenario for metric in metrics):
        cells = {}
        for worker in workers:
            found = [m for m in metrics if m.scenario == scenario and m.worker == worker]
            cells[worker] = "-" if not found else _takeaway_cell(found[0], cost)
        label = next(m.metric for m in metrics if m.scenario == scenario)
        table.add_row(f"{scenario}: {label}", *cells.values())
        listed.append(Text(f"{scenario}: {label}"))
        listed += [Padding(Text(f"{w}: {cell}"), _INDENT) for w, cell in cells.items()]
    shown: list[RenderableType] = [Text(_SCENARIOS_TITLE), TableOrLines(table, Group(*listed))]
    if cost is not None:
        shown.append(
            Text(
                f"restart cost on this machine: {cost:.2f}s per restart (exit seen, kubelet "
                "sync, runtime start; the least over the bare curves)"
            )
        )
    return Group(*shown)


def _takeaway_cell(metric: ScenarioMetric, cost: float | None) -> str:
    parts = [f"{metric.expected:.1f}"]
    if metric.lower is not None or metric.upper is not None:
        parts.append(f"window {metric.window_text()}")
    with_cost = metric.with_restart_cost(cost)
    if with_cost is not None:
        parts.append(f"{with_cost:.1f}")
    model = " · ".join(parts)
    if metric.measured is None:
        return f"not reached ({model})"
    flag = " OUTSIDE its window" if metric.inside is False else ""
    return f"{metric.measured:.1f} {metric.unit}{flag} ({model})"


def verdict_line(summary: RunSummary) -> Text:
    """The run's verdict in one line, as the check's own exit code says it: passed, or
    failed or could not judge, with the first reason."""
    style = {"passed": "bold green", "failed": "bold red"}.get(summary.status, "bold yellow")
    line = Text("verdict: ")
    line.append(summary.status, style=style)
    reason = summary.reason or next(
        (failure for worker in summary.workers for failure in worker.failures), ""
    )
    if reason:
        line.append(f": {reason}")
    return line


def next_step(run_dir: str, *, replayed: bool) -> str:
    """What to do after the takeaways: a replay points at the live demo, a live run at its
    replay (the fallback when a venue's machine misbehaves)."""
    if replayed:
        return (
            "next: `make demo` runs this live on a kind cluster (root or a running Docker "
            "engine; docs/demo.md)"
        )
    return f"next: `crashloop demo --replay {run_dir}` plays this run again with no cluster"
