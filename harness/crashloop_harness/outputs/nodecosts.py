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
            _seconds(cost.first_restart_median_s, ".3f"),
            _seconds(cost.first_restart_p95_s, ".3f"),
            str(cost.first_restart_samples),
            _seconds(cost.start_latency_median_s, ".3f"),
            f"{cost.runtime_slowdown:.2f}x",
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
        "no back-off: median",
        "p95",
        "restarts",
        "start latency median",
        "runtime (the cap)",
        "cost allowed after requeue",
        "restart 1 bound",
        "judged",
    )
    return [
        Heading(3, "Restart cost per node (measured in this run)"),
        Paragraph(
            "Each node's slowdown is how much longer than the reference host's its restarts "
            "that wait no back-off take (each subject's restart 1 and the restart-cost "
            "probes'), capped by how much slower its runtime starts a container (started - "
            "created); its bounds are the sources' terms times it (bounds "
            "reference_first_restart, reference_start_latency, restart_overhead, "
            "pleg_relist_period)."
        ),
        Table(headers, rows),
    ]


def _seconds(value: float | None, spec: str) -> str:
    return "-" if value is None else f"{value:{spec}}s"
