"""A finished overhead sweep read back from its overhead.json, to set two runs side by side.

A cell's request rates are recomputed from its series when the run kept one,
so a change in how a peak is read applies to earlier runs too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crashloop_harness.core.errors import HarnessError
from crashloop_harness.overhead.analysis import (
    Cell,
    Overshoot,
    RequestRates,
    RequestSample,
    UsageSample,
    request_rates,
)
from crashloop_harness.overhead.output import OVERHEAD_FILE


def cell_from_document(item: Mapping[str, Any]) -> Cell:
    """A cell back from overhead.json; its request rates recomputed from its series when the
    run kept one (so the current definitions apply), else as written."""
    request_samples = tuple(
        RequestSample(float(s["at_s"]), dict(s["counts"])) for s in item.get("request_samples", ())
    )
    usage_samples = tuple(
        UsageSample(float(s["at_s"]), float(s["kubelet_cpu_s"]), float(s["runtime_cpu_s"]))
        for s in item.get("usage_samples", ())
    )
    written = item.get("requests")
    requests = request_rates(request_samples) if request_samples else None
    if requests is None and written is not None:
        # Runs that kept no series took their peak over one sample interval.
        busiest = written.get("busiest_interval_qps", written["peak_qps"])
        requests = RequestRates(
            mean_qps=written["mean_qps"],
            peak_qps=written["peak_qps"],
            mean_by_verb=dict(written["mean_by_verb"]),
            peak_by_verb=dict(written["peak_by_verb"]),
            busiest_interval_qps=busiest,
        )
    over = item["overshoot"]
    return Cell(
        worker=item["worker"],
        pods=int(item["pods"]),
        crashing=bool(item["crashing"]),
        window_s=float(item["window_s"]),
        kubelet_cpu_s=float(item["kubelet_cpu_s"]),
        runtime_cpu_s=float(item["runtime_cpu_s"]),
        kubelet_rss_bytes=int(item["kubelet_rss_bytes"]),
        requests=requests,
        restarts=int(item["restarts"]),
        restarts_allowed=int(item["restarts_allowed"]),
        overshoot=Overshoot(
            restarts=int(over["restarts"]),
            median_s=over["median_s"],
            p95_s=over["p95_s"],
            max_s=over["max_s"],
            on_curve_share=over["on_curve_share"],
        ),
        request_samples=request_samples,
        usage_samples=usage_samples,
        at_cap=item.get("at_cap"),
        climb_s=item.get("climb_s"),
        events_drained=item.get("events_drained"),
        drained_s=item.get("drained_s"),
    )


@dataclass(frozen=True)
class WrittenRun:
    """A finished sweep read back: its cells, and whether it kept its request series."""

    path: Path
    run_id: str
    status: str
    reason: str
    plan: dict[str, Any]
    cells: list[Cell]
    has_series: bool

    @property
    def from_cap(self) -> bool:
        """Its crashing cells waited for every pod to reach its cap (runs before that did not)."""
        crashing = [c for c in self.cells if c.crashing]
        return bool(crashing) and all(c.at_cap is not None for c in crashing)

    @property
    def after_events(self) -> bool:
        """Its windows waited for the kubelet's onset events to drain (runs before that did
        not, and some read a peak among them)."""
        return bool(self.cells) and all(c.events_drained is not None for c in self.cells)


def read_overhead(path: Path) -> WrittenRun:
    """overhead.json, or a run directory holding one; a clear error when it is neither."""
    source = path / OVERHEAD_FILE if path.is_dir() else path
    fix = f"give a sweep's run directory or its {OVERHEAD_FILE} (`crashloop overhead` writes one)"
    try:
        document = json.loads(source.read_text(encoding="utf-8"))
        cells = [cell_from_document(item) for item in document["cells"]]
    except FileNotFoundError as error:
        raise HarnessError(f"{source}: no such file", fix) from error
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise HarnessError(
            f"{source}: not an overhead sweep's {OVERHEAD_FILE} ({error})", fix
        ) from error
    crashing = [c for c in cells if c.crashing]
    return WrittenRun(
        path=source,
        run_id=str(document.get("run_id", source.parent.name)),
        status=str(document.get("status", "")),
        reason=str(document.get("reason", "")),
        plan=dict(document.get("plan", {})),
        cells=cells,
        has_series=bool(crashing) and all(c.request_samples for c in crashing),
    )
