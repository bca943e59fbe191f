"""Rich renderings of the harness's results (pure: data in, renderables out)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from harness.durations import format_duration
from harness.liveconfig import NodeConfigRow


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
