"""`crashloop overhead-compare` from the command line (its exit, its JSON, its text at 80
columns), a finished sweep read back from disk, and `crashloop overhead --from`."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from crashloop_harness.cli import app as cli
from crashloop_harness.cluster import lifecycle
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.overhead.analysis import PEAK_INTERVALS, Cell
from crashloop_harness.overhead.output import OVERHEAD_FILE, write_overhead
from crashloop_harness.overhead.read import read_overhead
from tests.unit.overhead.factories import (
    CELLS,
    FIRST_RUN,
    RERUN,
    RERUN_AN_HOUR_BEFORE,
    RERUN_FAST_ONLY,
    RERUN_SLOWER,
    SWEEP,
)


def _write_sweeps(directory: Path, sweeps: dict[str, list[Cell]]) -> None:
    """Each sweep's overhead.json in a run directory of its name under ``directory``."""
    for run_id, cells in sweeps.items():
        (directory / run_id).mkdir()
        write_overhead(
            directory / run_id, run_id=run_id, status="measured", reason="", plan={}, cells=cells
        )


@pytest.fixture(autouse=True)
def _piped(monkeypatch: pytest.MonkeyPatch) -> None:
    # Read as a pipe reads it: rich renders output that is not a terminal at 80 columns.
    monkeypatch.setenv("COLUMNS", "80")


@pytest.mark.parametrize(
    ("first", "second", "code"),
    [
        # The first comparison of two sweeps: the default worker's busiest-interval peak
        # moved +21 %.
        (FIRST_RUN, RERUN, 1),
        # The fast worker's figures moved 24 and 27 %, the machine 20 % faster: the pace
        # leaves 1 and 2 %, and every other figure moved less than 20 %.
        (SWEEP, RERUN_AN_HOUR_BEFORE, 0),
        # A wave's peak moved 28 % on a machine 38 % slower.
        (SWEEP, RERUN_SLOWER, 1),
        # The fast worker alone rerun, and it agrees: the others are not compared.
        (SWEEP, RERUN_FAST_ONLY, 0),
    ],
)
def test_the_command_exits_by_what_the_pace_leaves_and_reads_at_80_columns(
    capsys: pytest.CaptureFixture[str], first: Path, second: Path, code: int
) -> None:
    assert cli.main(["overhead-compare", str(first), str(second)]) == code
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert any(line.split()[:1] == ["peak"] and "QPS" in line for line in lines)


def test_a_doubtful_figure_an_unmeasured_pace_and_nothing_to_compare_exit_by_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    noisy = [replace(c, events_drained=False, drained_s=300.0) for c in CELLS]
    doubled = [c if c.crashing else replace(c, kubelet_cpu_s=c.kubelet_cpu_s * 2) for c in CELLS]
    _write_sweeps(tmp_path, {"clean": CELLS, "noisy": noisy, "doubled": doubled})
    clean = str(tmp_path / "clean")
    assert cli.main(["overhead-compare", clean, str(tmp_path / "noisy")]) == 1
    assert cli.main(["overhead-compare", clean, str(tmp_path / "doubled")]) == 1
    # A run against itself agrees.
    assert cli.main(["overhead-compare", clean, str(tmp_path / "clean" / OVERHEAD_FILE)]) == 0
    assert cli.main(["overhead-compare", str(tmp_path / "nothing"), clean]) == 2
    text = " ".join(capsys.readouterr().out.split())
    assert "cannot say: noisy: the kubelet's event writes had not drained in 300s" in text
    assert "that pace is outside -20% to +38%" in text


def test_the_json_is_on_stdout_and_the_comparison_on_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["overhead-compare", str(SWEEP), str(RERUN_AN_HOUR_BEFORE), "-o", "json"]) == 0
    out = capsys.readouterr()
    text = " ".join(out.err.split())
    assert "the machine's pace at 108 pods" in text
    assert "0.073 cores in 20261203T081021Z-overhead-912a and 0.059" in text
    assert "fast at 108 pods, off its curve in both runs (node-bound)" in text
    # The raw move (+24 %) beside what the pace leaves (-1 %): a repeat.
    assert "CPU 2.24x 2.77x +24% 2.78x -1% yes" in text
    document = json.loads(out.out)
    assert document["agree"] is True
    fast_cpu = next(f for f in document["figures"] if f["worker"] == "fast" and f["unit"] == "x")
    assert fast_cpu["node_bound"] is True
    assert fast_cpu["agrees"] is False
    assert fast_cpu["agrees_after_pace"] is True
    assert fast_cpu["pace"]["change"] == pytest.approx(0.803, abs=0.001)
    assert fast_cpu["after_pace"] == pytest.approx(-0.007, abs=0.001)


def test_a_worker_the_rerun_did_not_sweep_is_named_not_compared(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["overhead-compare", str(SWEEP), str(RERUN_FAST_ONLY)]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert (
        "not compared: default, reduced (20261203T124842Z-overhead-de9f did not sweep them)" in text
    )


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
