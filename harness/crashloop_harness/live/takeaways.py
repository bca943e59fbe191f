"""The demo's takeaways, measured: what each worker's bare curve did, and the scenarios
against the model (pure: a run's summary and metrics in, tables out).

Read from the run's summary, so a replay of the run ends with the same tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.table import Table

from crashloop_harness.live.view import within
from crashloop_harness.outputs.summary import RunSummary
from crashloop_harness.recording.hostcpu import SATURATED
from crashloop_harness.scenarios.headline import ScenarioMetric


def takeaways(
    summary: RunSummary, under_load: Mapping[str, tuple[int, int]] | None = None
) -> Table:
    """The talk's takeaways, measured: per worker, what the model predicted and what happened.

    Read from the run's summary (and its host CPU samples), so a replay of the
    run ends with the same table. ``under_load``: worker -> (restarts started
    with the host saturated, restarts with a sample).
    """
    table = Table(title="what each worker did (bare crashing container)")
    # The model as the window the kubelet's code allows each restart (its back-off, to
    # the requeue's jitter, the sync and the restart's cost): not one number to hit.
    columns = ["worker", "restarts", "the kubelet's window: first delays", "measured: first delays"]
    columns += ["within the window"]
    if under_load:
        columns.append(f"started at ≥{SATURATED:.0%} CPU")
    for column in columns:
        table.add_column(column)
    for worker in summary.workers:
        if "/" in worker.worker:  # a variant beside a worker, not one of the talk's three
            continue
        cells = [
            worker.worker,
            str(max(worker.attempts_recorded - 1, 0)),
            ", ".join(f"{c.expected_s:g}-{c.upper_bound_s:g}s" for c in worker.checks[:6]),
            ", ".join(
                f"{c.measured_s:.1f}s"
                + ("" if within(c.measured_s, (c.expected_s, c.upper_bound_s)) else " (outside)")
                for c in worker.checks[:6]
                if c.measured_s is not None
            ),
            # A share, not a verdict: the demo runs everything at once on what may be a
            # small machine; the conformance check is where a red result counts.
            f"{sum(c.passed for c in worker.checks)}/{len(worker.checks)} restarts"
            if worker.checks
            else "no data",
        ]
        if under_load:
            saturated, sampled = under_load.get(worker.worker, (0, 0))
            cells.append(f"{saturated}/{sampled}" if sampled else "-")
        table.add_row(*cells)
    return table


def scenario_takeaways(metrics: Sequence[ScenarioMetric], cost: float | None) -> Table:
    """The talk's takeaways table: per scenario, per worker, measured against the model.

    Beside the nominal model, the model with this machine's fixed cost per
    restart (measured on the bare curves of this run): what is left above it
    is the kubelet's or the load's, not the price of starting a container.
    """
    workers = list(dict.fromkeys(metric.worker for metric in metrics))
    table = Table(
        title="the scenarios, measured (model · the kubelet's window · model + restart cost)"
    )
    table.add_column("scenario")
    for worker in workers:
        table.add_column(worker)
    for scenario in dict.fromkeys(metric.scenario for metric in metrics):
        cells = []
        for worker in workers:
            found = [m for m in metrics if m.scenario == scenario and m.worker == worker]
            cells.append("-" if not found else _takeaway_cell(found[0], cost))
        label = next(m.metric for m in metrics if m.scenario == scenario)
        table.add_row(f"{scenario}: {label}", *cells)
    if cost is not None:
        table.caption = (
            f"restart cost on this machine: {cost:.2f}s per restart (exit seen, kubelet sync, "
            "runtime start; the least over the bare curves)"
        )
    return table


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
