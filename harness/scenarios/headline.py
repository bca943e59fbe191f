"""The one number per scenario and worker that the talk's takeaways show."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from harness.scenarios import scenario_named
from harness.scenarios.common import WorkerResult


@dataclass(frozen=True)
class ScenarioMetric:
    """One number a scenario measured on one worker, next to the model's prediction.

    ``measured`` is None when the scenario did not get that far on that worker.
    """

    scenario: str
    worker: str
    metric: str  # what it says, for people
    unit: str
    expected: float
    measured: float | None


def headline_metrics(
    results: Mapping[str, Mapping[str, WorkerResult]],
) -> list[ScenarioMetric]:
    """Measured and predicted headline metric of every scenario (scenario -> worker -> result)."""
    found = []
    for scenario, by_worker in results.items():
        headline = scenario_named(scenario).headline
        for worker, result in by_worker.items():
            metric = next((m for m in result.metrics if m.name == headline.metric), None)
            if metric is None or metric.expected is None:
                continue
            found.append(
                ScenarioMetric(
                    scenario=scenario,
                    worker=worker,
                    metric=headline.label,
                    unit=metric.unit,
                    expected=metric.expected,
                    measured=metric.measured,
                )
            )
    return found
