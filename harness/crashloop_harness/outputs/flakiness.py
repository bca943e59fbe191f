"""Many checks in a row on one cluster, and what they add up to.

A green nightly run is only worth something if green is not luck. This
module reads the summaries of consecutive check runs and reports how many
passed and, per worker, the distribution of the overshoot (measured delay
minus the model's back-off) over every restart that waited, together with
the headroom: how far the closest restart stayed under its upper bound. The
tolerance is tuned from these numbers, never from one run.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final

from crashloop_harness.core.version import produced_by
from crashloop_harness.outputs.summary import RunSummary
from crashloop_harness.verdict import RestartCheck, waited_restarts

# flakiness.json's layout; bumped when a field changes meaning or goes.
FLAKINESS_SCHEMA_VERSION: Final = 1


@dataclass(frozen=True)
class RunOutcomeRow:
    run_id: str
    status: str
    passed: bool
    reason: str


@dataclass(frozen=True)
class OvershootDistribution:
    """One worker's overshoot over every waited restart of every run, in seconds."""

    worker: str
    restarts: int
    minimum_s: float
    median_s: float
    p95_s: float
    maximum_s: float
    # min(upper bound - measured) over those: how close the worst came to failing.
    headroom_s: float
    # Over every restart checked, the first of a curve and unmeasured ones included.
    failed_restarts: int
    unmeasured_restarts: int


@dataclass(frozen=True)
class ObserverSeries:
    """What observing cost over the runs that measured it (older summaries did not)."""

    runs: int
    share_of_core_median: float | None
    share_of_core_max: float | None
    sight_median_ms: float | None  # median of the runs' medians
    sight_max_ms: float | None


@dataclass(frozen=True)
class FlakinessReport:
    runs: tuple[RunOutcomeRow, ...]
    workers: tuple[OvershootDistribution, ...]
    observer: ObserverSeries | None = None

    @property
    def passed_runs(self) -> int:
        return sum(run.passed for run in self.runs)

    @property
    def all_passed(self) -> bool:
        return bool(self.runs) and self.passed_runs == len(self.runs)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": FLAKINESS_SCHEMA_VERSION,
            **produced_by(),
            "runs": [asdict(run) for run in self.runs],
            "passed_runs": self.passed_runs,
            "total_runs": len(self.runs),
            "workers": [asdict(worker) for worker in self.workers],
            "observer": None if self.observer is None else asdict(self.observer),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"


def p95(values: Sequence[float]) -> float:
    """The 95th percentile, interpolated between the closest ranks (the max of a single value)."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=20, method="inclusive")[18]


def distribution(worker: str, checks: Sequence[RestartCheck]) -> OvershootDistribution | None:
    counted = waited_restarts(checks)
    if not counted:
        return None
    margins = sorted(c.margin_s for c in counted if c.margin_s is not None)
    headroom = min(c.upper_bound_s - c.measured_s for c in counted if c.measured_s is not None)
    return OvershootDistribution(
        worker=worker,
        restarts=len(margins),
        minimum_s=margins[0],
        median_s=statistics.median(margins),
        p95_s=p95(margins),
        maximum_s=margins[-1],
        headroom_s=headroom,
        failed_restarts=sum(not c.passed for c in checks),
        unmeasured_restarts=sum(c.measured_s is None for c in checks),
    )


def flakiness_of(summaries: Sequence[RunSummary]) -> FlakinessReport:
    """Pass count and per-worker overshoot over ``summaries``, in the order given."""
    runs = tuple(
        RunOutcomeRow(summary.run_id, summary.status, summary.passed, summary.reason)
        for summary in summaries
    )
    checks_by_worker: dict[str, list[RestartCheck]] = {}
    for summary in summaries:
        for worker in summary.workers:
            checks_by_worker.setdefault(worker.worker, []).extend(worker.checks)
    workers = tuple(
        found
        for worker, checks in checks_by_worker.items()
        if (found := distribution(worker, checks)) is not None
    )
    return FlakinessReport(runs, workers, observer_series(summaries))


def observer_series(summaries: Sequence[RunSummary]) -> ObserverSeries | None:
    """The observer's cost over the runs whose summaries carry it; None when none does."""
    costs = [s.observer for s in summaries if s.observer is not None]
    if not costs:
        return None
    shares = [c.share_of_core for c in costs if c.share_of_core is not None]
    sights = [c.latency_median_ms for c in costs if c.latency_median_ms is not None]
    maxima = [c.latency_max_ms for c in costs if c.latency_max_ms is not None]
    return ObserverSeries(
        runs=len(costs),
        share_of_core_median=statistics.median(shares) if shares else None,
        share_of_core_max=max(shares, default=None),
        sight_median_ms=statistics.median(sights) if sights else None,
        sight_max_ms=max(maxima, default=None),
    )
