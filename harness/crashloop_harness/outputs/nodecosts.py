"""The report's table of each node's restart cost, as the run measured it."""

from __future__ import annotations

from collections.abc import Sequence

from crashloop_harness.outputs.document import Block, Heading, Paragraph, Table
from crashloop_harness.outputs.summary import WorkerSummary


def cost_blocks(workers: Sequence[WorkerSummary]) -> list[Block]:
    """Each node's restart cost as the run measured it, and the bounds it gave."""
    costs = {w.restart_cost.node: w.restart_cost for w in workers if w.restart_cost is not None}
    if not costs:
        return []
    rows = tuple(
        (
            node,
            f"{cost.slowdown:.2f}x",
            _seconds(cost.start_latency_median_s, ".3f"),
            _seconds(cost.start_latency_p95_s, ".3f"),
            str(cost.start_latency_samples),
            _seconds(cost.first_restart_median_s, ".3f"),
            str(cost.first_restart_samples),
            f"{cost.after_requeue_s:.2f} s",
            f"{cost.first_restart_bound_s:.2f} s",
            "too slow to judge"
            if cost.too_slow
            else ("levels fall behind" if cost.levels_fall_behind else "-"),
        )
        for node, cost in sorted(costs.items())
    )
    headers = (
        "node",
        "slowdown",
        "start latency median",
        "p95",
        "starts",
        "restart 1 median",
        "restart 1s",
        "cost allowed after requeue",
        "restart 1 bound",
        "judged",
    )
    return [
        Heading(3, "Restart cost per node (measured in this run)"),
        Paragraph(
            "Each node's slowdown is its runtime's median start latency (started - created) "
            "over the reference host's; its bounds are the sources' terms times it (bounds "
            "reference_start_latency, restart_overhead, pleg_relist_period)."
        ),
        Table(headers, rows),
    ]


def _seconds(value: float | None, spec: str) -> str:
    return "-" if value is None else f"{value:{spec}}s"
