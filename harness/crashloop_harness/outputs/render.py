"""Rich renderings of the harness's results (pure: data in, renderables out)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text

from crashloop_harness.cluster.liveconfig import NodeConfigRow
from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.model.durations import format_duration
from crashloop_harness.outputs.document import Table as DocumentTable
from crashloop_harness.outputs.flakiness import FlakinessReport
from crashloop_harness.outputs.matrix import TABLE_HEADERS, Matrix, table_rows
from crashloop_harness.verdict import RestartCheck, WorkerVerdict


def _gates(gates: dict[str, bool]) -> str:
    return "\n".join(f"{name}={'on' if value else 'off'}" for name, value in gates.items())


def config_table(rows: Sequence[NodeConfigRow], title: str = "live kubelet backoff") -> Table:
    """One row per node: what its kubelet runs and the curve that implies."""
    table = Table(title=title)
    for column in (
        "node",
        "profile",
        "maxContainerRestartPeriod",
        "feature gates",
        "initial",
        "max",
        "expected delays (restart 1, 2, ...)",
        "matches profile",
    ):
        table.add_column(column)
    for row in rows:
        table.add_row(
            row.node,
            row.profile or "-",
            row.max_container_restart_period,
            _gates(row.feature_gates),
            format_duration(row.curve.initial),
            format_duration(row.curve.maximum),
            row.preview(),
            "yes" if row.matches else "[bold red]NO[/bold red]",
        )
    return table


# --- verdicts and run summaries ------------------------------------------------------------
# Cells are Text objects, not markup strings: reasons and names come from the
# kubelet and the user, and a "[" in them must print, not style.


def _result(passed: bool) -> Text:
    # The word carries the verdict; the colour only helps (logs, screen readers).
    return Text("PASS", style="bold green") if passed else Text("FAIL", style="bold red")


def _seconds(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else f"{value:{spec}}s"


def restart_cells(check: RestartCheck) -> tuple[str, ...]:
    """One restart's cells, shared by the terminal table and the report.

    restart n, expected, measured, margin, upper bound, kubelet reported:
    times in seconds, measured ones to the millisecond.
    """
    return (
        str(check.n),
        _seconds(check.expected_s, "g"),
        _seconds(check.measured_s),
        _seconds(check.margin_s, "+.3f"),
        _seconds(check.upper_bound_s, "g"),
        _seconds(check.reported_s, "g"),
    )


def verdict_table(verdict: WorkerVerdict, curve: BackoffCurve) -> Table:
    """One row per restart: expected vs measured delay, the bound, the kubelet's report.

    Measured delays and margins are shown to the millisecond, the precision
    the harness claims; the caption lists every failure and note in full.
    """
    table = Table(title=Text(f"{verdict.worker} on {verdict.node}: {curve.describe()}"))
    for column in ("restart", "expected", "measured", "margin", "bound", "kubelet reported"):
        table.add_column(column, justify="right")
    table.add_column("result")
    for check in verdict.checks:
        result = Text("ASIDE", style="bold yellow") if check.set_aside else _result(check.passed)
        table.add_row(*restart_cells(check), result)
    lines = [
        *(f.words for f in verdict.failures),
        *(f"restart {c.n}: {c.set_aside}" for c in verdict.set_aside),
        *(f"note: {note}" for note in verdict.notes),
    ]
    if not verdict.checks and not verdict.problems:
        lines.append("no restart observed yet")
    if lines:
        table.caption = Text("\n".join(lines), justify="left")
    return table


def flakiness_table(report: FlakinessReport) -> Table:
    """One row per worker: the overshoot over every run, and how close the worst came to failing."""
    title = f"{report.passed_runs} of {len(report.runs)} checks passed"
    table = Table(title=Text(title))
    table.add_column("worker")
    for column in ("restarts", "min", "median", "p95", "max", "headroom", "failed", "unmeasured"):
        table.add_column(column, justify="right")
    for worker in report.workers:
        table.add_row(
            Text(worker.worker),
            str(worker.restarts),
            *(
                _seconds(value, "+.2f")
                for value in (worker.minimum_s, worker.median_s, worker.p95_s, worker.maximum_s)
            ),
            _seconds(worker.headroom_s, ".2f"),
            str(worker.failed_restarts),
            str(worker.unmeasured_restarts),
        )
    lines = [
        f"{run.run_id}: {run.status}" + (f" - {run.reason}" if run.reason else "")
        for run in report.runs
        if not run.passed
    ]
    observer = report.observer
    if observer is not None and observer.share_of_core_median is not None:
        lines.append(
            f"observer over {observer.runs} runs: {100 * observer.share_of_core_median:.1f}% of "
            f"one core (median; max {100 * (observer.share_of_core_max or 0):.1f}%), starts seen "
            f"{observer.sight_median_ms or 0:.0f} ms after they happened (median)"
        )
    if lines:
        table.caption = Text("\n".join(lines), justify="left")
    return table


def matrix_table(matrix: Matrix) -> Table:
    """The version matrix: one row per release and worker."""
    table = Table(title=f"version matrix ({matrix.profile} check)")
    for header in TABLE_HEADERS:
        table.add_column(header)
    for row in table_rows(matrix):
        table.add_row(*row)
    return table


def document_table(table: DocumentTable) -> Table:
    """A report's table for the terminal: columns that wrap to its width, where the report's
    Markdown keeps one line per row (readable in a file, not at 100 columns)."""
    rendered = Table(*table.headers, show_lines=False)
    for row in table.rows:
        rendered.add_row(*row)
    return rendered
