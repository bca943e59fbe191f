"""Two overhead sweeps side by side: the figures paired, how far apart, and read back from disk."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from crashloop_harness.cli import app as cli
from crashloop_harness.cluster import lifecycle
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.overhead.analysis import (
    PEAK_INTERVALS,
    REPEAT_WITHIN,
    Cell,
    FigureApart,
    talk_figures_apart,
    windows_apart,
)
from crashloop_harness.overhead.output import OVERHEAD_FILE, write_overhead
from crashloop_harness.overhead.read import read_overhead
from tests.unit.overhead.test_analysis import CELLS
from tests.unit.overhead.test_pace import RERUN as RERUN_AN_HOUR_BEFORE
from tests.unit.overhead.test_pace import RERUN_SLOWER, SWEEP

REPO = Path(__file__).resolve().parents[3]
# Two real sweeps written before the request series were kept (the first comparison of two sweeps).
FIRST_RUN = REPO / "docs" / "overhead" / "overhead-20261201T033229Z.json"
RERUN = REPO / "docs" / "overhead" / "overhead-20261201T060857Z.json"
# A rerun of the fast worker alone.
RERUN_FAST_ONLY = REPO / "docs" / "overhead" / "overhead-20261203T124842Z.json"


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


def _write_sweeps(directory: Path, sweeps: dict[str, list[Cell]]) -> None:
    """Each sweep's overhead.json in a run directory of its name under ``directory``."""
    for run_id, cells in sweeps.items():
        (directory / run_id).mkdir()
        write_overhead(
            directory / run_id, run_id=run_id, status="measured", reason="", plan={}, cells=cells
        )


@pytest.fixture(autouse=True)
def _a_terminal_wide_enough_for_a_row_per_line(monkeypatch: pytest.MonkeyPatch) -> None:
    # The table wraps its cells to the terminal; these tests read a row on one line.
    monkeypatch.setenv("COLUMNS", "400")


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


def test_a_written_sweep_reads_back_with_its_peaks_recomputed_from_its_series(
    tmp_path: Path,
) -> None:
    write_overhead(tmp_path, run_id="r1", status="measured", reason="", plan={}, cells=CELLS)
    run = read_overhead(tmp_path)
    assert run.run_id == "r1"
    assert run.has_series is True
    assert [(c.worker, c.pods, c.crashing) for c in run.cells] == [
        (c.worker, c.pods, c.crashing) for c in CELLS
    ]
    back = run.cells[3]
    assert back.kubelet_cpu_s == pytest.approx(CELLS[3].kubelet_cpu_s)
    assert back.overshoot == CELLS[3].overshoot
    assert back.usage_samples == CELLS[3].usage_samples
    # Written as 10 QPS; its series says 50 requests in 10 s.
    assert back.requests is not None
    assert back.requests.peak_qps == pytest.approx(5.0)
    assert (back.at_cap, back.climb_s) == (None, None)


def test_whether_the_pods_were_at_their_cap_reads_back(tmp_path: Path) -> None:
    climbed = replace(CELLS[3], at_cap=False, climb_s=512.5)
    write_overhead(tmp_path, run_id="r1", status="measured", reason="", plan={}, cells=[climbed])
    back = read_overhead(tmp_path).cells[0]
    assert (back.at_cap, back.climb_s) == (False, 512.5)


def test_whether_the_events_drained_reads_back(tmp_path: Path) -> None:
    waited = [replace(c, events_drained=c.crashing, drained_s=234.0) for c in CELLS]
    write_overhead(tmp_path, run_id="r1", status="measured", reason="", plan={}, cells=waited)
    back = read_overhead(tmp_path)
    assert [(c.events_drained, c.drained_s) for c in back.cells][:2] == [(False, 234.0)] * 2
    assert back.after_events is True
    assert read_overhead(FIRST_RUN).after_events is False


def test_a_figure_from_a_window_with_a_caveat_never_agrees() -> None:
    short = [replace(c, at_cap=False, climb_s=400.0) if c.crashing else c for c in CELLS]
    figures = talk_figures_apart(CELLS, short, labels=("a", "b"))
    assert figures[0].apart == pytest.approx(0.0)
    assert figures[0].agrees is None  # the same number, but one of them read the climb
    assert figures[0].caveats == ("b: not every pod reached its cap in 400s",)
    back = talk_figures_apart(short, CELLS, labels=("a", "b"))
    assert back[1].caveats == ("a: not every pod reached its cap in 400s",)


def test_the_command_cannot_call_a_doubtful_figure_a_repeat(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    noisy = [replace(c, events_drained=False, drained_s=300.0) for c in CELLS]
    _write_sweeps(tmp_path, {"clean": CELLS, "noisy": noisy})
    assert cli.main(["overhead-compare", str(tmp_path / "clean"), str(tmp_path / "noisy")]) == 1
    text = " ".join(capsys.readouterr().out.split())
    assert "cannot say: noisy: the kubelet's event writes had not drained in 300s" in text
    assert "clean opened its windows without waiting for the kubelet's onset events" in text


def test_a_sweep_without_series_keeps_its_written_peak_as_its_busiest_interval() -> None:
    run = read_overhead(FIRST_RUN)
    assert run.has_series is False
    default = next(c for c in run.cells if c.worker == "default" and c.pods == 108)
    assert default.requests is not None
    assert default.requests.mean_qps == pytest.approx(8.90, abs=0.01)
    assert default.requests.peak_qps == pytest.approx(26.92, abs=0.01)
    assert default.requests.busiest_interval_qps == default.requests.peak_qps


@pytest.mark.parametrize(
    "bad",
    ["missing.json", "not-json", "no-cells"],
)
def test_what_is_not_a_sweep_is_refused_naming_the_file(tmp_path: Path, bad: str) -> None:
    path = tmp_path / bad
    if bad == "not-json":
        path.write_text("{")
    elif bad == "no-cells":
        path.write_text(json.dumps({"run_id": "x"}))
    with pytest.raises(HarnessError, match=bad) as error:
        read_overhead(path)
    assert OVERHEAD_FILE in error.value.fix


def test_the_command_says_which_figure_moved_and_exits_by_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The first comparison of two sweeps: the default worker's busiest-interval peak moved +21 %.
    assert cli.main(["overhead-compare", str(FIRST_RUN), str(RERUN)]) == 1
    out = capsys.readouterr()
    text = out.out + out.err
    assert "+21%" in text
    assert "busiest single sample interval" in " ".join(text.split())
    # A run against itself agrees.
    write_overhead(tmp_path, run_id="r1", status="measured", reason="", plan={}, cells=CELLS)
    assert cli.main(["overhead-compare", str(tmp_path), str(tmp_path / OVERHEAD_FILE)]) == 0
    assert cli.main(["overhead-compare", str(tmp_path / "nothing"), str(tmp_path)]) == 2


def test_a_run_from_the_cap_against_one_from_the_climb_is_called_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capped = [replace(c, at_cap=True, climb_s=70.0) if c.crashing else c for c in CELLS]
    write_overhead(tmp_path, run_id="capped", status="measured", reason="", plan={}, cells=capped)
    assert read_overhead(tmp_path).from_cap is True
    assert read_overhead(FIRST_RUN).from_cap is False
    cli.main(["overhead-compare", str(FIRST_RUN), str(tmp_path)])
    text = " ".join(capsys.readouterr().out.split())
    assert "while they climbed their curve, capped from their cap" in text


def test_windows_apart_are_called_out_and_alike_ones_are_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    longer = [replace(c, window_s=180.0) if c.crashing and c.worker == "fast" else c for c in CELLS]
    assert windows_apart(CELLS, longer) == [("fast", 60.0, 180.0)]
    slightly = [replace(c, window_s=65.0) if c.crashing else c for c in CELLS]
    assert windows_apart(CELLS, slightly) == []  # a few seconds of reading time
    # Only the largest crashing cell carries the talk figures: a smaller one's window is moot.
    small_only = [replace(c, window_s=180.0) if c.crashing and c.pods < 60 else c for c in CELLS]
    assert windows_apart(CELLS, small_only) == []
    _write_sweeps(tmp_path, {"short": CELLS, "long": longer})
    cli.main(["overhead-compare", str(tmp_path / "short"), str(tmp_path / "long")])
    text = " ".join(capsys.readouterr().out.split())
    assert "the windows differ (fast 60s against 180s)" in text


def test_a_finished_sweep_is_written_again_with_the_current_analysis_and_nothing_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("--from must run nothing")

    monkeypatch.setattr(lifecycle, "up", refuse)
    write_overhead(
        tmp_path, run_id="r1", status="measured", reason="", plan={"pods": [60]}, cells=CELLS
    )
    (tmp_path / "report.md").unlink()
    assert cli.main(["overhead", "--from", str(tmp_path)]) == 0
    document = json.loads((tmp_path / OVERHEAD_FILE).read_text())
    assert document["plan"] == {"pods": [60], "peak_intervals": PEAK_INTERVALS}
    # Written as 10 QPS; recomputed from its series, 5.
    assert document["cells"][3]["requests"]["peak_qps"] == pytest.approx(5.0)
    assert document["cells"][3]["request_samples"]  # the readings stay
    assert (tmp_path / "report.md").is_file()
    assert cli.main(["overhead", "--from", str(tmp_path / "missing")]) == 2


@pytest.mark.parametrize(
    "option", [["--pods", "0,10"], ["--workers", "fast"], ["--duration", "90"], ["--warmup", "0"]]
)
def test_a_sweep_option_beside_from_is_refused_before_anything_is_written(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    option: list[str],
) -> None:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("--from must run nothing")

    monkeypatch.setattr(lifecycle, "up", refuse)
    write_overhead(tmp_path, run_id="r1", status="measured", reason="", plan={}, cells=CELLS)
    (tmp_path / "report.md").unlink()
    assert cli.main(["overhead", "--from", str(tmp_path), *option]) == 2
    text = " ".join(capsys.readouterr().err.split())
    assert f"{option[0]} with --from" in text
    assert "leave out --from to run a new one" in text
    assert not (tmp_path / "report.md").exists()


@pytest.mark.parametrize(
    ("option", "problem"), [("--pods", "is not a pod count"), ("--workers", "no worker")]
)
def test_an_empty_sweep_option_is_refused_not_taken_for_its_default(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], option: str, problem: str
) -> None:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("nothing may be created for bad input")

    monkeypatch.setattr(lifecycle, "up", refuse)
    assert cli.main(["overhead", option, ""]) == 2
    assert problem in capsys.readouterr().err


def test_the_command_decides_on_what_the_pace_leaves_and_shows_the_raw_move(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The fast worker's figures moved 24 and 27 %, the machine 20 % faster: after the
    # pace 1 and 2 % are left, and every other figure moved less than 20 %.
    assert cli.main(["overhead-compare", str(SWEEP), str(RERUN_AN_HOUR_BEFORE), "-o", "json"]) == 0
    out = capsys.readouterr()
    text = " ".join(out.err.split())
    assert "the machine's pace at 108 pods" in text
    assert "0.073 cores in 20261203T081021Z-overhead-912a and 0.059" in text
    assert "(-20%)" in text
    assert "2.78x (node-bound)" in text
    assert "1.23x (on its curve)" in text
    assert "+24% │ NO" in text  # the raw move, still shown
    document = json.loads(out.out)
    assert document["agree"] is True
    fast_cpu = next(f for f in document["figures"] if f["worker"] == "fast" and f["unit"] == "x")
    assert fast_cpu["node_bound"] is True
    assert fast_cpu["agrees"] is False
    assert fast_cpu["agrees_after_pace"] is True
    assert fast_cpu["pace"]["change"] == pytest.approx(0.803, abs=0.001)
    assert fast_cpu["after_pace"] == pytest.approx(-0.007, abs=0.001)


def test_a_wave_s_peak_that_moved_past_the_limit_fails_and_says_why_it_moves(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["overhead-compare", str(SWEEP), str(RERUN_SLOWER)]) == 1
    text = " ".join(capsys.readouterr().out.split())
    assert "(+38%)" in text
    assert "default: its 108 pods restarted about once each in the window" in text
    assert "the window's mean traffic moved -7%" in text


def test_a_pace_beyond_the_range_shown_decides_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The same cells, every running kubelet at twice the cost: the pace +100 %.
    doubled = [c if c.crashing else replace(c, kubelet_cpu_s=c.kubelet_cpu_s * 2) for c in CELLS]
    _write_sweeps(tmp_path, {"first": CELLS, "doubled": doubled})
    assert cli.main(["overhead-compare", str(tmp_path / "first"), str(tmp_path / "doubled")]) == 1
    text = " ".join(capsys.readouterr().out.split())
    assert "that pace is outside -20% to +38%" in text
    assert "cannot say: pace outside the range shown" in text


def test_a_worker_the_rerun_did_not_sweep_is_named_not_compared(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["overhead-compare", str(SWEEP), str(RERUN_FAST_ONLY)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert (
        "not compared: default, reduced (20261203T124842Z-overhead-de9f did not sweep them)" in text
    )


def test_a_sweep_says_which_workers_figures_move_with_the_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("--from must run nothing")

    monkeypatch.setattr(lifecycle, "up", refuse)
    write_overhead(tmp_path, run_id="r1", status="measured", reason="", plan={}, cells=CELLS)
    assert cli.main(["overhead", "--from", str(tmp_path)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    # fast fell off its curve at 60 pods, its largest: default kept its curve.
    assert "fast: at 60 pods it restarts as fast as the machine lets it" in text
    assert "default: at" not in text
