"""The one number per scenario and worker that the talk's takeaways show."""

from __future__ import annotations

from typing import Final

from harness.outputs.plots import ScenarioMetric
from harness.runs.scenarios import ScenarioRun
from harness.scenarios import CRITICAL_SIDECAR, FAST_RESTART, TASK_ISOLATION

# scenario -> (metric name, what it says)
HEADLINES: Final = {
    TASK_ISOLATION: ("reset_mean_s", "mean in-place reset"),
    FAST_RESTART: ("time_to_ready_s", "first failure to Ready"),
    CRITICAL_SIDECAR: ("isolation_total_s", "app cut off in total"),
}


def headline_metrics(run: ScenarioRun) -> list[ScenarioMetric]:
    """Measured and predicted headline metric of every scenario on every worker."""
    found = []
    for scenario, by_worker in run.results.items():
        name, label = HEADLINES[scenario]
        for worker, result in by_worker.items():
            metric = next((m for m in result.metrics if m.name == name), None)
            if metric is None or metric.expected is None:
                continue
            found.append(
                ScenarioMetric(
                    scenario=scenario,
                    worker=worker,
                    metric=label,
                    unit=metric.unit,
                    expected=metric.expected,
                    measured=metric.measured,
                )
            )
    return found
