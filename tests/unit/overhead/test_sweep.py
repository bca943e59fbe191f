"""The overhead sweep in the one lifecycle: its cells as its observation, its ending as any run's.

The cells themselves (pods on a node, its /proc and /metrics) are the e2e
tier's (tests/e2e/test_overhead.py); here each cell is a recorded call.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import pytest

from crashloop_harness.cluster.target import RunEnding, RunTarget
from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.overhead import sweep as sweep_module
from crashloop_harness.overhead.analysis import Cell
from crashloop_harness.overhead.plan import OverheadPlan, WorkerTarget
from crashloop_harness.overhead.sweep import OverheadRun, _Sweep, _SweepSteps
from crashloop_harness.recording.norecorder import NoRecorder
from crashloop_harness.runs import execute as lifecycle_module
from crashloop_harness.runs.execute import execute
from crashloop_harness.runs.lifecycle import RunSetup

FAST = BackoffCurve(timedelta(seconds=1), timedelta(seconds=2))
PLAN = OverheadPlan(
    targets=(WorkerTarget("fast", "node-fast", FAST, 110, 2),),
    pods=(0, 5),
    warmup_s=30.0,
    windows_s={"fast": 120.0},
    baseline_worker="fast",
)
NO_ENDING = RunEnding((), {}, None)


@pytest.fixture
def cells(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int, bool]]:
    """Every cell measured, in order; the cluster-facing steps of the lifecycle recorded away."""
    measured: list[tuple[str, int, bool]] = []

    def measure(sweep: _Sweep, target: WorkerTarget, *, pods: int, crashing: bool) -> Cell:
        measured.append((target.worker, pods, crashing))
        return cast(Cell, (target.worker, pods, crashing))

    monkeypatch.setattr(sweep_module, "_measure_cell", measure)
    monkeypatch.setattr(sweep_module, "write_overhead_run", lambda run: run.run_dir)
    for name in ("trace_outcome", "clean_up"):
        monkeypatch.setattr(lifecycle_module, name, lambda *_a, **_k: None)
    return measured


@dataclass
class _Cluster:
    """The cluster-facing half of a run: kubelets read with the ending it is given."""

    ending_is: RunEnding = NO_ENDING

    def kubelets_at_start(self, api: object, nodes: object) -> _Cluster:
        return self

    def ending(self, confirm: object = (), made: object = None) -> RunEnding:
        return self.ending_is

    def gather_evidence(self, api: object, namespace: str, into: Path, *, run: object) -> None:
        pass


def _sweep(
    *,
    stop: threading.Event | None = None,
    on_cell: Any = None,
    tmp: Path = Path("runs/r"),
    cluster: _Cluster | None = None,
) -> OverheadRun:
    setup = cast(
        RunSetup,
        type(
            "Setup",
            (),
            {
                "api": None,
                "run_id": "r",
                "nodes": {"fast": "node-fast"},
                "namespace": "ns",
                "run_dir": tmp,
                "owns_namespace": True,
                "recorder": NoRecorder(),
            },
        )(),
    )
    sweep = _Sweep(None, "ns", "r", tmp, "img", PLAN, stop or threading.Event(), lambda _m: None)
    result = OverheadRun(run_id="r", run_dir=tmp, plan=PLAN)
    target = cast(RunTarget, cluster or _Cluster())
    return execute(target, setup, result, _SweepSteps(sweep, on_cell))


def test_every_cell_is_measured_in_the_plans_order_and_handed_on_at_once(
    cells: list[tuple[str, int, bool]],
) -> None:
    handed: list[int] = []
    run = _sweep(on_cell=lambda r: handed.append(len(r.cells)))
    assert cells == [(target.worker, pods, crashing) for target, pods, crashing in PLAN.cells()]
    assert handed == list(range(1, len(cells) + 1))
    assert run.status == "measured"


def test_a_stop_between_cells_ends_the_sweep_interrupted_with_what_it_measured(
    cells: list[tuple[str, int, bool]],
) -> None:
    stop = threading.Event()
    run = _sweep(stop=stop, on_cell=lambda _r: stop.set())
    assert len(cells) == 1
    assert len(run.cells) == 1
    assert (run.status, run.reason) == ("interrupted", "stopped before every cell")


def test_a_kubelet_restarted_during_the_sweep_makes_it_an_error(
    cells: list[tuple[str, int, bool]],
) -> None:
    restarted = RunEnding(("the kubelet of node node-fast restarted",), {}, None)
    run = _sweep(cluster=_Cluster(restarted))
    assert run.status == "error"
    assert "node-fast restarted" in run.reason


def test_a_signal_mid_cell_is_an_interruption_judged_like_any_run(
    cells: list[tuple[str, int, bool]], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*_a: object, **_k: object) -> Cell:
        raise KeyboardInterrupt

    monkeypatch.setattr(sweep_module, "_measure_cell", interrupted)
    run = _sweep()
    assert run.status == "interrupted"
    assert run.reason == _SweepSteps.interrupted_reason
    assert run.finished_at is not None
