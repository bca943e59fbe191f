"""The overhead tests' shared makings: cells, kept sweeps by their files, a sweep read back."""

from __future__ import annotations

from pathlib import Path

from crashloop_harness.overhead.analysis import (
    Cell,
    Overshoot,
    RequestRates,
    RequestSample,
    UsageSample,
)
from crashloop_harness.overhead.read import WrittenRun

REPO = Path(__file__).resolve().parents[3]
# Two real sweeps written before the request series were kept (the first comparison of two sweeps).
FIRST_RUN = REPO / "docs" / "overhead" / "overhead-20261201T033229Z.json"
RERUN = REPO / "docs" / "overhead" / "overhead-20261201T060857Z.json"
# A rerun of the fast worker alone.
RERUN_FAST_ONLY = REPO / "docs" / "overhead" / "overhead-20261203T124842Z.json"


def sweep(run_id: str, cells: list[Cell], *, has_series: bool = True) -> WrittenRun:
    """A finished sweep as read back, without the file."""
    return WrittenRun(
        path=Path(f"runs/{run_id}/overhead.json"),
        run_id=run_id,
        status="measured",
        reason="",
        plan={},
        cells=cells,
        has_series=has_series,
    )


# A sweep and its rerun (docs/results.md, "Repeatability"): 108 running pods cost the
# kubelet 0.073 cores in the first and 0.059 in the second.
SWEEP = REPO / "docs" / "overhead" / "overhead-20261203T081021Z.json"
RERUN_AN_HOUR_BEFORE = REPO / "docs" / "overhead" / "overhead-20261203T073842Z.json"
# Its rerun at 13:02, on a machine 38 % slower.
RERUN_SLOWER = REPO / "docs" / "overhead" / "overhead-20261203T130222Z.json"


def cell(worker: str, pods: int, *, crashing: bool, cores: float, keeps: bool = True) -> Cell:
    share = 1.0 if keeps else 0.5
    return Cell(
        worker=worker,
        pods=pods,
        crashing=crashing,
        window_s=60.0,
        kubelet_cpu_s=cores * 60.0,
        runtime_cpu_s=cores * 30.0,
        kubelet_rss_bytes=100 << 20,
        requests=RequestRates(1.0, 4.0 + pods / 10, {"PATCH": 1.0}, {"PATCH": 4.0}, 5.0),
        restarts=pods * 10,
        restarts_allowed=pods * 20,
        overshoot=Overshoot(5, 0.5, 1.0, 1.2, share)
        if crashing
        else Overshoot(0, None, None, None, None),
        request_samples=(RequestSample(0.0, {"PATCH": 0}), RequestSample(10.0, {"PATCH": 50})),
        usage_samples=(UsageSample(10.0, 1.5, 0.5),),
    )


CELLS = [
    cell("fast", 0, crashing=False, cores=0.05),
    cell("fast", 60, crashing=False, cores=0.10),
    cell("fast", 30, crashing=True, cores=0.15),
    cell("fast", 60, crashing=True, cores=0.25, keeps=False),
    cell("default", 60, crashing=True, cores=0.11),
]
