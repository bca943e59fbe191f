"""A run's summary for the terminal (pure: a RunSummary in, renderables out).

It reads at 80 columns, the width rich gives piped output, and at 100 in a
terminal. The table holds each worker's whole name and short numbers only; what
would wrap inside a cell (the rules not covered, each node's restart cost) is
listed under it, and a legend names the short headers. A name too long for the
table (an existing cluster's node with a variant's suffix, say) turns the rows
into one line per worker rather than cutting the name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from rich import box
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from crashloop_harness.model.subject import worker_of
from crashloop_harness.outputs.narrow import TableOrLines, legend
from crashloop_harness.outputs.summary import RestartCost, RunSummary, WorkerSummary

_INDENT: Final = (0, 0, 0, 2)
_TERMS: Final = (
    ("restarts", "restarts checked"),
    ("median, max", "how late the restarts that waited came, past their back-off"),
)
_SLOWDOWN_TERM: Final = ("slowdown", "the node's container restarts against the reference host's")


def summary_view(summary: RunSummary) -> RenderableType:
    """The run's verdict, a row per worker, what was not covered and each node's restart cost."""
    workers = summary.workers
    profiles = _profiles_differ(workers)
    costs = any(w.restart_cost is not None for w in workers)
    rows = [_cells(w, profiles=profiles, costs=costs) for w in workers]
    headers = _headers(profiles=profiles, costs=costs)
    shown: list[RenderableType] = [
        Text(_title(summary), style="bold"),
        TableOrLines(_table(headers, rows), Group(*(_line(headers, row) for row in rows))),
        legend([*_TERMS, _SLOWDOWN_TERM] if costs else _TERMS),
    ]
    shown += _not_covered(workers)
    shown += _costs(workers)
    return Group(*shown)


def _title(summary: RunSummary) -> str:
    title = f"{summary.kind} ({summary.profile}): {summary.status.upper()}"
    return f"{title} - {summary.reason}" if summary.reason else title


def _profiles_differ(workers: Sequence[WorkerSummary]) -> bool:
    # A kind worker is mostly named after its profile and an existing cluster's node has
    # none: the column would only repeat the worker's name or say "-".
    return any(w.profile not in (None, worker_of(w.worker)) for w in workers)


def _headers(*, profiles: bool, costs: bool) -> list[str]:
    headers = ["worker", "profile"] if profiles else ["worker"]
    headers += ["restarts", "median", "max", "verdict"]
    return [*headers, "slowdown"] if costs else headers


def _verdict_word(worker: WorkerSummary) -> Text:
    if worker.passed:
        return Text("PASS", style="bold green")
    # An error is the environment's (a pod its node refused, a node too slow), no failure.
    return Text("ERROR", style="bold yellow") if worker.in_error else Text("FAIL", style="bold red")


def _cells(worker: WorkerSummary, *, profiles: bool, costs: bool) -> list[Text]:
    cells = [Text(worker.worker)]  # Text: a name's "[" prints, not styles
    if profiles:
        cells.append(Text(worker.profile or "-"))
    cells += [
        Text(str(len(worker.checks))),
        Text(_seconds(worker.overshoot_median_s)),
        Text(_seconds(worker.overshoot_max_s)),
        # The word carries the verdict; the colour only helps (logs, screen readers).
        _verdict_word(worker),
    ]
    if costs:
        cost = worker.restart_cost
        cells.append(Text("-" if cost is None else f"{cost.slowdown:.2f}x"))
    return cells


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}s"


def _table(headers: Sequence[str], rows: Sequence[Sequence[Text]]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for index, header in enumerate(headers):
        numbers = header in ("restarts", "median", "max", "slowdown")
        table.add_column(header, justify="right" if numbers else "left", no_wrap=index == 0)
    for row in rows:
        table.add_row(*row)
    return table


def _line(headers: Sequence[str], row: Sequence[Text]) -> Text:
    """One worker's row as words: "name: PASS; restarts 9, median +0.4s, ...", wrapped."""
    named = dict(zip(headers, row, strict=True))
    line = Text.assemble(named.pop("worker"), ": ", named.pop("verdict"))
    if "profile" in named:
        line.append(f" (profile {named.pop('profile')})")
    line.append("; " + ", ".join(f"{header} {cell}" for header, cell in named.items()))
    return line


def _not_covered(workers: Sequence[WorkerSummary]) -> list[RenderableType]:
    """The rules each worker's verdict did not cover, one worker a line (names never cut)."""
    if not any(w.coverage for w in workers):
        return []  # a summary written before coverage was kept
    lines = [
        Padding(Text(f"{w.worker}: {', '.join(r.rule for r in w.not_covered)}"), _INDENT)
        for w in workers
        if w.not_covered
    ]
    return [Text("not covered:"), *lines] if lines else [Text("not covered: nothing")]


def _costs(workers: Sequence[WorkerSummary]) -> list[RenderableType]:
    costs = {w.restart_cost.node: w.restart_cost for w in workers if w.restart_cost}
    if not costs:
        return []
    lines = [
        Padding(Text(f"{node}: {cost_text(cost)}"), _INDENT) for node, cost in sorted(costs.items())
    ]
    return [Text("each node's restart cost, measured in this run:"), *lines]


def cost_text(cost: RestartCost) -> str:
    """What a restart cost the node, each number against its unit so that no wrap splits them.

    "1.36x (no back-off 0.93s over 9; start 668ms over 98): +2.04s after requeue,
    restart 1 <= 3.41s".
    """
    if cost.measured and cost.pace_samples and cost.pace_median_s is not None:
        # Probed beside the kubelet: the slowdown is the pace, the restarts only shown. Read
        # through the API alone, a node has no start of its own to show.
        start = (
            f"; start {cost.start_latency_median_s * 1000:.0f}ms over {cost.start_latency_samples}"
            if cost.start_latency_median_s is not None
            else ""
        )
        return (
            f"{cost.slowdown:.2f}x (pace {_ms(cost.pace_median_s)} over "
            f"{cost.pace_samples} probes{start}): +{cost.after_requeue_s:.2f}s after requeue, "
            f"restart 1 <= {cost.first_restart_bound_s:.2f}s"
        )
    if not cost.measured or cost.start_latency_median_s is None:
        return "not measured: the reference host's"
    first = (
        f"no back-off {cost.first_restart_median_s:.2f}s over {cost.first_restart_samples}"
        if cost.first_restart_median_s is not None
        else "no restart without back-off"
    )
    return (
        f"{cost.slowdown:.2f}x ({first}; start {cost.start_latency_median_s * 1000:.0f}ms "
        f"over {cost.start_latency_samples}): +{cost.after_requeue_s:.2f}s after requeue, "
        f"restart 1 <= {cost.first_restart_bound_s:.2f}s"
    )


def _ms(seconds: float) -> str:
    """A pace probe's time: whole ms from 10 ms, a tenth below (a burst takes 1.5-3 ms)."""
    return f"{seconds * 1000:.0f}ms" if seconds >= 0.01 else f"{seconds * 1000:.1f}ms"
