"""The machine's pace between two sweeps, and what it predicts of each talk figure."""

from __future__ import annotations

from dataclasses import replace

import pytest

from crashloop_harness.overhead.analysis import Cell, FigureApart, talk_figures_apart
from crashloop_harness.overhead.pace import (
    PACE_SHOWN,
    Pace,
    PacedFigure,
    node_bound,
    one_wave,
    pace_between,
    paced,
    worker_node_bound,
)
from crashloop_harness.overhead.read import read_overhead
from tests.unit.overhead.factories import CELLS, RERUN_AN_HOUR_BEFORE, RERUN_SLOWER, SWEEP


def _slower(cells: list[Cell], by: float) -> list[Cell]:
    """The same sweep on a machine ``by`` times slower: each baseline and each cell on
    its curve costs ``by`` times the CPU; a node-bound cell keeps its CPU, and its
    restarts and API traffic fall by the same factor."""
    moved = []
    for cell in cells:
        if node_bound(cell) and cell.requests is not None:
            requests = replace(cell.requests, peak_qps=cell.requests.peak_qps / by)
            moved.append(replace(cell, requests=requests, restarts=round(cell.restarts / by)))
        else:
            moved.append(replace(cell, kubelet_cpu_s=cell.kubelet_cpu_s * by))
    return moved


def test_the_pace_is_the_baselines_cost_second_over_first() -> None:
    pace = pace_between(CELLS, _slower(CELLS, 1.25), 60)
    assert pace is not None
    assert (pace.first_cores, pace.second_cores) == pytest.approx((0.10, 0.125))
    assert pace.change == pytest.approx(1.25)


def test_no_pace_without_a_baseline_at_that_count_in_both_runs() -> None:
    assert pace_between(CELLS, CELLS, 30) is None  # no baseline at 30 pods
    no_baseline = [c for c in CELLS if c.crashing]
    assert pace_between(CELLS, no_baseline, 60) is None
    idle = [replace(c, kubelet_cpu_s=0.0) if not c.crashing else c for c in CELLS]
    assert pace_between(idle, CELLS, 60) is None  # nothing to divide by


def test_a_cell_is_node_bound_only_when_it_fell_off_its_curve() -> None:
    fast_30, fast_60, default_60 = CELLS[2], CELLS[3], CELLS[4]
    assert node_bound(fast_60) is True
    assert node_bound(fast_30) is False
    assert node_bound(default_60) is False
    assert node_bound(CELLS[1]) is False  # a baseline restarts nothing
    unmeasured = replace(fast_60, overshoot=replace(fast_60.overshoot, on_curve_share=None))
    assert node_bound(unmeasured) is False  # no evidence it fell off


def test_a_worker_is_node_bound_only_when_both_runs_found_it_so() -> None:
    assert worker_node_bound(CELLS, CELLS, "fast") is True
    kept = [
        replace(c, overshoot=replace(c.overshoot, on_curve_share=1.0)) if c.crashing else c
        for c in CELLS
    ]
    assert worker_node_bound(CELLS, kept, "fast") is False
    assert worker_node_bound(CELLS, CELLS, "default") is False
    assert worker_node_bound(CELLS, CELLS, "reduced") is False  # no cell at all


def test_a_slower_machine_moves_a_node_bound_figure_by_the_inverse_and_explains_it() -> None:
    slower = _slower(CELLS, 1.3)
    figures = paced(talk_figures_apart(CELLS, slower), CELLS, slower)
    fast_cpu, fast_peak, default_cpu, default_peak = figures
    # As measured, the fast figures fell by 23 %: past what a repeat allows.
    assert fast_cpu.figure.apart == pytest.approx(1 / 1.3 - 1)
    assert fast_peak.figure.apart == pytest.approx(1 / 1.3 - 1)
    assert fast_cpu.figure.agrees is False
    assert fast_cpu.node_bound is True
    assert fast_cpu.expected == pytest.approx(2.5 / 1.3)  # 2.5x on a machine 1.3 times slower
    assert fast_cpu.after_pace == pytest.approx(0.0)
    assert fast_peak.after_pace == pytest.approx(0.0)
    # The default worker kept its curve: its ratio did not move, nothing to explain.
    assert default_cpu.node_bound is False
    assert default_cpu.figure.apart == pytest.approx(0.0)
    assert default_cpu.after_pace == pytest.approx(0.0)
    assert default_peak.expected == default_peak.figure.first


def test_what_the_pace_does_not_explain_is_left_over() -> None:
    slower = _slower(CELLS, 1.25)
    # The fast kubelet also took 10 % more CPU than the machine alone would explain.
    changed = [
        replace(c, kubelet_cpu_s=c.kubelet_cpu_s * 1.1) if node_bound(c) else c for c in slower
    ]
    fast_cpu = paced(talk_figures_apart(CELLS, changed), CELLS, changed)[0]
    assert fast_cpu.after_pace == pytest.approx(0.1)


def test_a_figure_without_a_first_value_or_a_pace_has_no_expectation() -> None:
    unmeasured = PacedFigure(FigureApart("fast", "x", "x", None, 2.0), Pace(60, 0.1, 0.1), False)
    assert unmeasured.expected is None
    assert unmeasured.after_pace is None
    no_pace = PacedFigure(FigureApart("fast", "x", "x", 2.0, 2.0), None, True)
    assert no_pace.expected is None
    second_missing = PacedFigure(FigureApart("fast", "x", "x", 2.0, None), Pace(60, 0.1, 0.1), True)
    assert second_missing.expected == pytest.approx(2.0)
    assert second_missing.after_pace is None


def test_the_kept_sweep_and_rerun_the_fast_figures_moved_with_the_pace() -> None:
    sweep, rerun = read_overhead(SWEEP), read_overhead(RERUN_AN_HOUR_BEFORE)
    figures = {
        (p.figure.worker, p.figure.unit): p
        for p in paced(talk_figures_apart(sweep.cells, rerun.cells), sweep.cells, rerun.cells)
    }
    fast_cpu = figures[("fast", "x")]
    assert fast_cpu.pace is not None
    assert fast_cpu.pace.change == pytest.approx(0.803, abs=0.001)
    assert fast_cpu.figure.agrees is False  # +24 % as measured
    assert fast_cpu.node_bound is True
    assert fast_cpu.after_pace == pytest.approx(-0.007, abs=0.001)
    assert figures[("reduced", "x")].node_bound is False


def test_a_figure_repeats_when_what_the_pace_leaves_is_within_the_limit() -> None:
    pace = Pace(108, 0.1, 0.125)  # +25 %, inside the range shown
    assert PacedFigure(FigureApart("fast", "x", "x", 2.0, 1.6), pace, True).agrees is True
    # Node-bound: expected 1.6; 1.93 is +21 % beyond it.
    assert PacedFigure(FigureApart("fast", "x", "x", 2.0, 1.93), pace, True).agrees is False
    # On its curve the pace predicts no move: +21 % as measured is +21 % left.
    assert PacedFigure(FigureApart("reduced", "x", "x", 2.0, 2.42), pace, False).agrees is False


def test_outside_the_pace_the_account_was_shown_over_nothing_is_called_a_repeat() -> None:
    low, high = PACE_SHOWN
    figure = FigureApart("fast", "x", "x", 2.0, 2.0)
    assert PacedFigure(figure, Pace(108, 0.1, 0.1 * high), False).agrees is True
    assert PacedFigure(figure, Pace(108, 0.1, 0.1 * high * 1.01), False).agrees is None
    assert PacedFigure(figure, Pace(108, 0.1, 0.1 * low * 0.99), False).agrees is None
    assert PacedFigure(figure, None, False).agrees is None
    caveat = FigureApart("fast", "x", "x", 2.0, 2.0, caveats=("second: onset events",))
    assert PacedFigure(caveat, Pace(108, 0.1, 0.1), False).agrees is None


def test_the_kept_reruns_pace_changes_are_the_range_shown() -> None:
    sweep = read_overhead(SWEEP)
    changes = []
    for rerun in (RERUN_AN_HOUR_BEFORE, RERUN_SLOWER):
        pace = pace_between(sweep.cells, read_overhead(rerun).cells, 108)
        assert pace is not None
        changes.append(pace.change)
    assert changes[0] == pytest.approx(PACE_SHOWN[0], abs=1e-5)
    assert changes[1] == pytest.approx(PACE_SHOWN[1], abs=1e-5)
    assert PACE_SHOWN[0] <= changes[0]
    assert changes[1] <= PACE_SHOWN[1]


def test_the_default_worker_restarts_in_one_wave_and_the_fast_one_does_not() -> None:
    cells = {c.worker: c for c in read_overhead(RERUN_SLOWER).cells if c.pods == 108}
    assert one_wave(cells["default"])  # 108 restarts of 108 pods at its 300 s cap
    assert not one_wave(cells["reduced"])
    assert not one_wave(cells["fast"])
