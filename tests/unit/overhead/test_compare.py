"""Two overhead sweeps side by side: the figures paired, how far apart, what the machine's
pace explains of it, and what keeps the two from comparing alike (pure)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from crashloop_harness.core.errors import HarnessError
from crashloop_harness.overhead.analysis import (
    REPEAT_WITHIN,
    Cell,
    FigureApart,
    talk_figures_apart,
    windows_apart,
)
from crashloop_harness.overhead.compare import (
    ClimbAgainstCap,
    OneWave,
    OnsetAgainstDrained,
    PeaksOverOneInterval,
    WindowApart,
    WindowsDiffer,
    compare_sweeps,
    comparison_document,
)
from crashloop_harness.overhead.read import read_overhead
from tests.unit.overhead.factories import (
    CELLS,
    FIRST_RUN,
    RERUN,
    RERUN_AN_HOUR_BEFORE,
    RERUN_FAST_ONLY,
    RERUN_SLOWER,
    SWEEP,
    sweep,
)


def _scaled(cells: list[Cell], worker: str, cpu: float, peak: float) -> list[Cell]:
    """The cells with one worker's crashing kubelet CPU and peak QPS multiplied."""
    scaled = []
    for cell in cells:
        if cell.crashing and cell.worker == worker and cell.requests is not None:
            requests = replace(cell.requests, peak_qps=cell.requests.peak_qps * peak)
            scaled.append(replace(cell, kubelet_cpu_s=cell.kubelet_cpu_s * cpu, requests=requests))
        else:
            scaled.append(cell)
    return scaled


# --- the figures paired (analysis.talk_figures_apart) ---------------------------------------


def test_a_figure_agrees_up_to_the_limit_and_not_past_it() -> None:
    assert pytest.approx(0.20) == REPEAT_WITHIN
    assert FigureApart("fast", "x", "x", 2.0, 2.4).agrees is True  # +20 %
    assert FigureApart("fast", "x", "x", 2.0, 2.42).agrees is False  # +21 %
    assert FigureApart("fast", "x", "x", 2.0, 1.58).agrees is False  # -21 %
    assert FigureApart("fast", "x", "x", 2.0, None).agrees is None  # not measured: no verdict
    assert FigureApart("fast", "x", "x", 0.0, 1.0).apart is None


def test_figures_are_paired_per_worker_and_by_what_they_are() -> None:
    figures = talk_figures_apart(CELLS, _scaled(CELLS, "fast", cpu=1.1, peak=0.7))
    assert [(f.worker, f.unit) for f in figures] == [
        ("fast", "x"),
        ("fast", "QPS"),
        ("default", "x"),
        ("default", "QPS"),
    ]
    cpu, peak = figures[0], figures[1]
    assert cpu.apart == pytest.approx(0.1)
    assert cpu.agrees is True
    assert peak.apart == pytest.approx(-0.3)
    assert peak.agrees is False
    assert all(f.agrees for f in figures[2:])  # the default worker did not move


def test_a_figure_the_rerun_lacks_is_not_measured() -> None:
    # The rerun went up to 30 pods only: the 60-pod figures have nothing to pair with.
    rerun = [c for c in CELLS if c.pods != 60]
    figures = talk_figures_apart(CELLS, rerun)
    assert figures[0].second is None
    assert figures[0].agrees is None


def test_peaks_over_one_interval_are_compared_when_asked() -> None:
    busier = [
        replace(c, requests=replace(c.requests, busiest_interval_qps=7.5))
        if c.requests is not None and c.crashing and c.worker == "fast"
        else c
        for c in CELLS
    ]
    figures = talk_figures_apart(CELLS, busier, peak_over_one_interval=True)
    peak = figures[1]
    assert "busiest sample interval" in peak.what
    assert peak.first == pytest.approx(5.0)
    assert peak.second == pytest.approx(7.5)
    # The two-interval peaks did not move.
    assert talk_figures_apart(CELLS, busier)[1].apart == pytest.approx(0.0)


def test_a_figure_from_a_window_with_a_caveat_never_agrees() -> None:
    short = [replace(c, at_cap=False, climb_s=400.0) if c.crashing else c for c in CELLS]
    figures = talk_figures_apart(CELLS, short, labels=("a", "b"))
    assert figures[0].apart == pytest.approx(0.0)
    assert figures[0].agrees is None  # the same number, but one of them read the climb
    assert figures[0].caveats == ("b: not every pod reached its cap in 400s",)
    back = talk_figures_apart(short, CELLS, labels=("a", "b"))
    assert back[1].caveats == ("a: not every pod reached its cap in 400s",)


def test_windows_apart_are_found_and_alike_ones_are_not() -> None:
    longer = [replace(c, window_s=180.0) if c.crashing and c.worker == "fast" else c for c in CELLS]
    assert windows_apart(CELLS, longer) == [("fast", 60.0, 180.0)]
    slightly = [replace(c, window_s=65.0) if c.crashing else c for c in CELLS]
    assert windows_apart(CELLS, slightly) == []  # a few seconds of reading time
    # Only the largest crashing cell carries the talk figures: a smaller one's window is moot.
    small_only = [replace(c, window_s=180.0) if c.crashing and c.pods < 60 else c for c in CELLS]
    assert windows_apart(CELLS, small_only) == []


# --- the comparison (compare.compare_sweeps) ------------------------------------------------


def test_a_sweep_against_itself_agrees_with_nothing_to_caveat() -> None:
    comparison = compare_sweeps(sweep("r1", CELLS), sweep("r2", CELLS))
    assert comparison.agree is True
    assert (comparison.not_compared, comparison.caveats, comparison.waves) == ((), (), ())
    assert [(w.worker, w.pods, w.node_bound) for w in comparison.workers] == [
        ("fast", 60, True),  # off its curve at 60 pods in both runs
        ("default", 60, False),
    ]
    assert [f.figure.unit for f in comparison.figures] == ["x", "QPS", "x", "QPS"]
    assert all(f.after_pace == pytest.approx(0.0) for f in comparison.figures)


def test_a_figure_moved_past_the_limit_fails_the_comparison() -> None:
    moved = sweep("moved", _scaled(CELLS, "fast", cpu=1.0, peak=0.7))
    comparison = compare_sweeps(sweep("r1", CELLS), moved)
    assert comparison.agree is False
    assert [f.agrees for f in comparison.figures] == [True, False, True, True]


def test_a_doubtful_figure_is_never_a_repeat() -> None:
    noisy = [replace(c, events_drained=False, drained_s=300.0) for c in CELLS]
    comparison = compare_sweeps(sweep("clean", CELLS), sweep("noisy", noisy))
    assert comparison.agree is False
    assert comparison.caveats == (OnsetAgainstDrained(early="clean", late="noisy"),)
    peak = comparison.figures[1]
    assert peak.figure.caveats == ("noisy: the kubelet's event writes had not drained in 300s",)
    assert peak.figure.apart == pytest.approx(0.0)
    assert peak.agrees is None


def test_a_run_from_the_cap_against_one_from_the_climb_is_a_caveat() -> None:
    capped = [replace(c, at_cap=True, climb_s=70.0) if c.crashing else c for c in CELLS]
    first = read_overhead(FIRST_RUN)
    comparison = compare_sweeps(first, sweep("capped", capped))
    assert ClimbAgainstCap(climbed=first.run_id, capped="capped") in comparison.caveats
    back = compare_sweeps(sweep("capped", capped), first)
    assert ClimbAgainstCap(climbed=first.run_id, capped="capped") in back.caveats


def test_windows_apart_are_a_caveat() -> None:
    longer = [replace(c, window_s=180.0) if c.crashing and c.worker == "fast" else c for c in CELLS]
    comparison = compare_sweeps(sweep("short", CELLS), sweep("long", longer))
    assert comparison.caveats == (WindowsDiffer((WindowApart("fast", 60.0, 180.0),)),)


def test_runs_without_series_compare_their_busiest_intervals() -> None:
    # The first comparison of two sweeps: the default worker's busiest-interval peak moved +21 %.
    comparison = compare_sweeps(read_overhead(FIRST_RUN), read_overhead(RERUN))
    assert PeaksOverOneInterval() in comparison.caveats
    assert comparison.agree is False
    default = next(w for w in comparison.workers if w.worker == "default")
    peak = default.figures[1].figure
    assert peak.what.endswith("(busiest sample interval)")
    assert peak.apart == pytest.approx(0.21, abs=0.005)


def test_the_verdict_is_on_what_the_pace_leaves() -> None:
    # The fast worker's figures moved 24 and 27 %, the machine 20 % faster: after the
    # pace 1 and 2 % are left, and every other figure moved less than 20 %.
    comparison = compare_sweeps(read_overhead(SWEEP), read_overhead(RERUN_AN_HOUR_BEFORE))
    assert comparison.agree is True
    (machine,) = comparison.paces
    assert machine.pace.pods == 108
    assert machine.pace.change == pytest.approx(0.803, abs=0.001)
    assert machine.shown is True
    fast = next(w for w in comparison.workers if w.worker == "fast")
    assert fast.node_bound is True
    cpu = fast.figures[0]
    assert cpu.figure.agrees is False  # the raw move
    assert cpu.agrees is True
    assert cpu.after_pace == pytest.approx(-0.007, abs=0.001)


def test_a_wave_s_peak_that_moved_past_the_limit_fails_and_is_named() -> None:
    comparison = compare_sweeps(read_overhead(SWEEP), read_overhead(RERUN_SLOWER))
    assert comparison.agree is False
    assert comparison.paces[0].pace.change == pytest.approx(1.38, abs=0.005)
    (wave,) = comparison.waves
    assert (wave.worker, wave.pods, wave.restarts) == ("default", 108, (108, 108))
    assert wave.mean_traffic_change == pytest.approx(-0.07, abs=0.005)


def test_a_wave_without_traffic_read_has_no_traffic_change() -> None:
    once = [
        replace(c, restarts=c.pods, requests=None) if c.crashing and c.worker == "default" else c
        for c in CELLS
    ]
    comparison = compare_sweeps(sweep("a", once), sweep("b", once))
    assert comparison.waves == (OneWave("default", 60, (60, 60), None),)


def test_a_pace_beyond_the_range_shown_decides_nothing() -> None:
    # The same cells, every running kubelet at twice the cost: the pace +100 %.
    doubled = [c if c.crashing else replace(c, kubelet_cpu_s=c.kubelet_cpu_s * 2) for c in CELLS]
    comparison = compare_sweeps(sweep("first", CELLS), sweep("doubled", doubled))
    (machine,) = comparison.paces
    assert machine.pace.change == pytest.approx(2.0)
    assert machine.shown is False
    assert comparison.agree is False
    assert [f.agrees for f in comparison.figures] == [None] * 4


def test_a_worker_the_rerun_did_not_sweep_is_named_not_compared() -> None:
    comparison = compare_sweeps(read_overhead(SWEEP), read_overhead(RERUN_FAST_ONLY))
    assert comparison.not_compared == ("default", "reduced")
    assert [w.worker for w in comparison.workers] == ["fast"]
    assert comparison.agree is True


def test_two_sweeps_with_no_crashing_cell_in_common_are_refused() -> None:
    others = [replace(c, worker="other") for c in CELLS]
    with pytest.raises(HarnessError, match="no crashing cell to compare") as error:
        compare_sweeps(sweep("r1", CELLS), sweep("r2", others))
    assert "r2 swept none of default, fast" in error.value.problem
    running = [c for c in CELLS if not c.crashing]
    with pytest.raises(HarnessError, match="no crashing cell to compare"):
        compare_sweeps(sweep("r1", running), sweep("r2", CELLS))


def test_the_json_document_keeps_its_shape() -> None:
    comparison = compare_sweeps(read_overhead(SWEEP), read_overhead(RERUN_AN_HOUR_BEFORE))
    document = comparison_document(comparison)
    assert list(document) == ["first", "second", "within", "pace_shown", "agree", "figures"]
    assert document["first"] == str(SWEEP)
    assert document["agree"] is True
    fast_cpu = document["figures"][2]
    assert list(fast_cpu) == [
        *("worker", "what", "unit", "first", "second", "caveats", "apart", "agrees", "pace"),
        *("node_bound", "expected_from_pace", "after_pace", "agrees_after_pace"),
    ]
    assert (fast_cpu["worker"], fast_cpu["unit"]) == ("fast", "x")
    assert fast_cpu["pace"]["change"] == pytest.approx(0.803, abs=0.001)
    assert (fast_cpu["agrees"], fast_cpu["agrees_after_pace"]) == (False, True)
