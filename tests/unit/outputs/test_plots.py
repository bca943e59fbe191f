"""Plots of a run (crashloop_harness.outputs.plots), from a real quick run and from synthetic
data."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from crashloop_harness.outputs.plots import (
    KNOWN_STYLES,
    plot_delays,
    plot_scenario_metrics,
    plot_start_latency,
    plot_timeline,
    restart_times_s,
    styles_for,
)
from tests.unit.factories import (
    PNG_MAGIC,
    WORKERS,
    failing_summary,
    quick_attempts,
    quick_summary,
    scenario_metrics,
)


def svg_of(paths: list[Path]) -> str:
    return next(p for p in paths if p.suffix == ".svg").read_text(encoding="utf-8")


def assert_png_and_svg(paths: list[Path], stem: Path) -> None:
    assert paths == [stem.with_name(f"{stem.name}.png"), stem.with_name(f"{stem.name}.svg")]
    assert paths[0].read_bytes().startswith(PNG_MAGIC)
    assert paths[1].read_text(encoding="utf-8").lstrip().startswith("<?xml")
    assert all(p.stat().st_size > 1000 for p in paths)


def test_delays_plot_has_units_every_worker_and_the_band(tmp_path: Path) -> None:
    paths = plot_delays(quick_summary(), tmp_path / "delays")
    assert_png_and_svg(paths, tmp_path / "delays")
    svg = svg_of(paths)
    assert "restart number n (count)" in svg
    assert "delay before restart n (s)" in svg
    assert "the kubelet's window" in svg
    for label in ("fast (2s..2s)", "reduced (1s..60s)", "default (10s..300s)"):
        assert f"{label}: measured" in svg
        assert f"{label}: model" in svg
    assert "failed check" not in svg


def test_delays_plot_marks_failed_restarts(tmp_path: Path) -> None:
    assert "failed check" in svg_of(plot_delays(failing_summary(), tmp_path / "delays"))


def test_plots_of_nothing_say_so(tmp_path: Path) -> None:
    empty = dataclasses.replace(quick_summary(), workers=())
    assert "no restart was measured" in svg_of(plot_delays(empty, tmp_path / "d"))
    assert "no container attempt was recorded" in svg_of(plot_timeline({}, tmp_path / "t"))


def test_start_latency_plot_has_units_and_every_worker_with_creation_times(
    tmp_path: Path,
) -> None:
    summary = quick_summary()  # recorded before creation times: nothing to plot
    assert "no creation time was recorded" in svg_of(plot_start_latency(summary, tmp_path / "none"))
    with_latency = dataclasses.replace(
        summary,
        workers=tuple(
            dataclasses.replace(
                worker,
                checks=tuple(
                    dataclasses.replace(check, start_latency_s=0.4) for check in worker.checks
                ),
            )
            for worker in summary.workers
        ),
    )
    paths = plot_start_latency(with_latency, tmp_path / "start-latency")
    assert_png_and_svg(paths, tmp_path / "start-latency")
    svg = svg_of(paths)
    assert "started - created (s)" in svg
    for label in ("fast (2s..2s)", "reduced (1s..60s)", "default (10s..300s)"):
        assert label in svg


def test_timeline_counts_restarts_per_worker(tmp_path: Path) -> None:
    paths = plot_timeline(quick_attempts(), tmp_path / "timeline")
    assert_png_and_svg(paths, tmp_path / "timeline")
    svg = svg_of(paths)
    assert "elapsed time since the first container start (s)" in svg
    assert "restarts so far (count)" in svg
    for legend in ("fast (11 restarts)", "reduced (8 restarts)", "default (5 restarts)"):
        assert legend in svg


def test_restart_times_are_attempt_starts_after_the_first() -> None:
    records = quick_attempts()["default"]
    origin = min(r.started_at_ns for r in records)
    times = restart_times_s(records, origin)
    assert len(times) == 5
    assert times == sorted(times)
    # The default curve waits 10s, 20s, 40s, 80s: the fifth restart is over 150s in.
    assert 150 < times[-1] < 200


def test_scenario_bars_have_units_scenarios_and_workers(tmp_path: Path) -> None:
    paths = plot_scenario_metrics(scenario_metrics(), tmp_path / "scenarios")
    assert_png_and_svg(paths, tmp_path / "scenarios")
    svg = svg_of(paths)
    for text in ("reset time (s)", "time to healthy (s)", "app isolated (s)", *WORKERS):
        assert text in svg
    for text in ("task isolation", "transient failure", "critical sidecar"):
        assert text in svg
    assert "measured" in svg
    assert "model" in svg
    # The window as a whisker, and the bar that comes out of it said to be outside.
    assert "the kubelet's window" in svg
    assert "84.1 outside" in svg
    assert "n/a" in svg


def test_scenario_bars_need_metrics(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no scenario metrics"):
        plot_scenario_metrics([], tmp_path / "scenarios")


def test_plots_are_byte_for_byte_reproducible(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    for directory in (first, second):
        plot_delays(quick_summary(), directory / "delays")
        plot_timeline(quick_attempts(), directory / "timeline")
    for name in ("delays.png", "delays.svg", "timeline.png", "timeline.svg"):
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    assert "<dc:date>" not in (first / "delays.svg").read_text(encoding="utf-8")


def test_a_dotted_stem_keeps_its_name(tmp_path: Path) -> None:
    stem = tmp_path / "run.1" / "delays.v2"
    stem.parent.mkdir()
    paths = plot_delays(quick_summary(), stem)
    assert [p.name for p in paths] == ["delays.v2.png", "delays.v2.svg"]


def test_workers_differ_in_marker_and_line_style_not_only_colour() -> None:
    styles = styles_for([*WORKERS, "extra-1", "extra-2"])
    assert styles["fast"] == KNOWN_STYLES["fast"]
    markers = [s.marker for s in styles.values()]
    lines = [str(s.linestyle) for s in styles.values()]
    assert len(set(markers)) == len(markers)
    assert len(set(lines)) == len(lines)
