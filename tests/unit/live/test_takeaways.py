"""The demo's takeaways as the terminal shows them: whole at 80 columns piped and at 100."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

import pytest

from crashloop_harness.cli.demo import SHIPPED_DEMO_DIR
from crashloop_harness.live.replay import load_recording
from crashloop_harness.live.takeaways import FIRST_RESTARTS, scenario_takeaways, takeaways
from crashloop_harness.model.subject import is_bare
from crashloop_harness.outputs.summary import RunSummary, WorkerSummary
from crashloop_harness.recording.hostcpu import HOST_CPU_FILE, read_samples, restarts_under_load
from crashloop_harness.scenarios.headline import ScenarioMetric
from tests.unit.factories import default_verdict, fast_verdict, make_summary, scenario_metrics
from tests.unit.narrowtext import WIDTHS, not_whole, rendered, too_wide_or_cut

_WINDOW = re.compile(r"^(?P<low>[\d.]+)-(?P<high>[\d.]+)s$")


def _shipped() -> tuple[RunSummary, dict[str, tuple[int, int]]]:
    """The recording the package ships: a real v1.35.8 demo, and its host's CPU."""
    recording = load_recording(SHIPPED_DEMO_DIR)
    samples = read_samples(SHIPPED_DEMO_DIR / HOST_CPU_FILE)
    return recording.summary, restarts_under_load(samples, recording.attempts)


def _rows(lines: Sequence[str], worker: str) -> dict[str, list[str]]:
    """The worker's table rows under its line, by their first word (restart, delay, window)."""
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{worker}: "))
    rows: dict[str, list[str]] = {}
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        words = line.split()
        rows.setdefault(words[0], words[1:])
    return rows


def _delays(worker: WorkerSummary) -> list[str]:
    return [
        "-" if c.measured_s is None else f"{c.measured_s:.1f}s"
        for c in worker.checks[:FIRST_RESTARTS]
    ]


@pytest.mark.parametrize("width", WIDTHS)
def test_the_shipped_demo_s_takeaways_read_whole(width: int) -> None:
    summary, under_load = _shipped()
    lines = rendered(takeaways(summary, under_load), width)
    assert too_wide_or_cut(lines, width) == []
    workers = [w for w in summary.workers if is_bare(w.worker)]
    assert [w.worker for w in workers] == ["fast", "reduced", "default"]
    for worker in workers:
        saturated, sampled = under_load[worker.worker]
        assert _line(lines, worker.worker).endswith(f", {saturated}/{sampled} started at ≥90% CPU")
        rows = _rows(lines, worker.worker)
        shown = min(len(worker.checks), FIRST_RESTARTS)
        assert rows["restart"] == [str(n) for n in range(1, shown + 1)]
        # Each restart's measured delay stands above its window, every one whole in its column.
        assert rows["delay"] == _delays(worker)
        assert len(rows["window"]) == shown
        for window, check in zip(rows["window"], worker.checks, strict=False):
            found = _WINDOW.match(window)
            assert found is not None, window
            # The window shown holds the one judged, to a tenth of a second.
            assert float(found["low"]) == check.expected_s
            assert 0 <= float(found["high"]) - check.upper_bound_s < 0.1
        assert not_whole([*rows["delay"], *rows["window"]], lines) == []


def _line(lines: Sequence[str], worker: str) -> str:
    """The line of the worker's counts."""
    return next(line for line in lines if line.startswith(f"{worker}: "))


@pytest.mark.parametrize("width", WIDTHS)
def test_a_late_restart_is_called_late_beside_its_window(width: int) -> None:
    # The default worker's restart 3 waited 35s where its window closes at 31.5s.
    late = dataclasses.replace(default_verdict(), worker="plain-worker2", node="plain-worker2")
    summary = make_summary(fast_verdict(), late, attempts_recorded={"fast": 6, "plain-worker2": 4})
    lines = rendered(takeaways(summary), width)
    assert too_wide_or_cut(lines, width) == []
    rows = _rows(lines, "plain-worker2")
    assert rows["delay"] == ["0.4s", "10.6s", "35.0s", "late"]
    assert rows["window"] == ["0-5s", "10-16.5s", "20-31.5s"]
    assert not_whole(["plain-worker2", "35.0s late", "20-31.5s"], lines) == []
    assert _line(lines, "plain-worker2") == "plain-worker2: 3 restarts, 2/3 within the window"


def test_restarts_too_wide_for_a_table_read_as_words() -> None:
    summary, _ = _shipped()
    lines = rendered(takeaways(summary), 40)
    assert too_wide_or_cut(lines, 40) == []
    words = " ".join(" ".join(lines).split())
    assert "restart 5: 80.3s, window 80-111.8s" in words
    assert not_whole(["80-111.8s", "16-25.9s"], lines) == []


def test_a_worker_without_restarts_says_so_and_variants_are_left_out() -> None:
    summary = make_summary(fast_verdict(), dataclasses.replace(fast_verdict(), worker="fast/x"))
    empty = dataclasses.replace(summary.workers[0], checks=(), attempts_recorded=1)
    lines = rendered(takeaways(dataclasses.replace(summary, workers=(empty,))), 80)
    assert "fast: 0 restarts, no data" in lines
    assert not any(line.startswith("  restart") for line in lines)
    assert not any("fast/x" in line for line in rendered(takeaways(summary), 80))


def _talk_metrics() -> list[ScenarioMetric]:
    """The talk's three scenarios with their windows and restarts, as a demo measures them."""
    return [
        dataclasses.replace(m, restarts=3, lower=m.expected - 0.1, upper=m.expected * 2 + 2.3)
        if m.lower is None
        else m
        for m in scenario_metrics()
    ]


@pytest.mark.parametrize("width", WIDTHS)
def test_each_scenario_s_result_reads_on_one_line_per_worker(width: int) -> None:
    metrics = _talk_metrics()
    lines = rendered(scenario_takeaways(metrics, 0.83), width)
    assert too_wide_or_cut(lines, width) == []
    for metric in metrics:
        measured = "not reached" if metric.measured is None else f"{metric.measured:.1f} s"
        window = f"window {metric.window_text()}"
        assert any(
            line.strip().startswith(f"{metric.worker}: {measured}") and window in line
            for line in lines
        ), metric
    assert any("84.1 s OUTSIDE its window" in line for line in lines)
    assert any("0.83s per restart" in line for line in lines)
