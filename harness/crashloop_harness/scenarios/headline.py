"""The one number per scenario and worker that the talk's takeaways show."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from crashloop_harness.scenarios import scenario_named
from crashloop_harness.scenarios.common import WorkerResult


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
    restarts: int | None = None  # the kubelet restarts ``expected`` spans
    # The window the kubelet's code allows (the scenario's accepted range, built with the
    # check's per-restart window); None: open on that side.
    lower: float | None = None
    upper: float | None = None

    @property
    def inside(self) -> bool | None:
        """Within the kubelet's window; None when not measured."""
        if self.measured is None:
            return None
        above = self.lower is None or self.measured >= self.lower
        return above and (self.upper is None or self.measured <= self.upper)

    def window_text(self) -> str:
        """The window as a reader writes it: "26-47.5", "≥ 10", "≤ 5"."""
        if self.lower is not None and self.upper is not None:
            return f"{self.lower:.3g}-{self.upper:.3g}"
        if self.lower is not None:
            return f"≥ {self.lower:.3g}"
        return "-" if self.upper is None else f"≤ {self.upper:.3g}"

    def with_restart_cost(self, per_restart_s: float | None) -> float | None:
        """The model plus each restart's cost on this machine (None when either is unknown).

        The nominal curve counts back-offs only; every restart also takes the
        kubelet's sync after the back-off and the runtime's start, measured on
        the bare curve of the same worker in the same run.
        """
        if per_restart_s is None or self.restarts is None:
            return None
        return self.expected + self.restarts * per_restart_s

    def ratio(self, per_restart_s: float | None = None) -> float | None:
        """Measured over the model (with the restart cost when given); None if not measured."""
        model = self.expected if per_restart_s is None else self.with_restart_cost(per_restart_s)
        if self.measured is None or not model:
            return None
        return self.measured / model


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
                    restarts=metric.restarts,
                    lower=metric.lower,
                    upper=metric.upper,
                )
            )
    return found
