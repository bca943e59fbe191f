"""Two sweeps' comparison as the terminal shows it: whole at 80 columns, the width rich
gives piped output."""

from __future__ import annotations

import io
from dataclasses import replace

import pytest
from rich.console import Console

from crashloop_harness.overhead.compare import (
    Caveat,
    ClimbAgainstCap,
    Comparison,
    OnsetAgainstDrained,
    PeaksOverOneInterval,
    WindowApart,
    WindowsDiffer,
    compare_sweeps,
)
from crashloop_harness.overhead.compareview import caveat_text, comparison_view
from crashloop_harness.overhead.read import read_overhead
from tests.unit.overhead.factories import CELLS, FIRST_RUN, RERUN_SLOWER, SWEEP, sweep

WIDTH = 80


def _shown(comparison: Comparison) -> list[str]:
    console = Console(width=WIDTH, record=True, file=io.StringIO())
    for renderable in comparison_view(comparison):
        console.print(renderable)
    return console.export_text().splitlines()


def _value(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}x" if unit == "x" else f"{value:.2f} QPS"


def _change(value: float | None) -> str:
    return "-" if value is None else f"{value:+.0%}"


def _comparisons() -> dict[str, Comparison]:
    noisy = [replace(c, events_drained=False, drained_s=300.0) for c in CELLS]
    doubled = [c if c.crashing else replace(c, kubelet_cpu_s=c.kubelet_cpu_s * 2) for c in CELLS]
    return {
        # A rerun on a machine 38 % slower: a node-bound worker, a wave, a figure that moved.
        "slower machine": compare_sweeps(read_overhead(SWEEP), read_overhead(RERUN_SLOWER)),
        # Every caveat at once: no series, climb against cap, onsets, windows apart.
        "every caveat": compare_sweeps(read_overhead(FIRST_RUN), read_overhead(SWEEP)),
        "doubtful figures": compare_sweeps(sweep("clean", CELLS), sweep("noisy", noisy)),
        "pace beyond the range": compare_sweeps(sweep("first", CELLS), sweep("doubled", doubled)),
    }


@pytest.mark.parametrize("name", list(_comparisons()))
def test_every_row_and_number_reads_whole_at_80_columns(name: str) -> None:
    comparison = _comparisons()[name]
    lines = _shown(comparison)
    assert max(len(line) for line in lines) <= WIDTH
    assert not any("…" in line for line in lines)  # nothing cut short
    words = {tuple(line.split()) for line in lines}
    for paced in comparison.figures:
        figure = paced.figure
        expected = paced.expected if figure.second is not None else None
        cells = [
            _value(figure.first, figure.unit),
            _value(figure.second, figure.unit),
            _change(figure.apart),
            _value(expected, figure.unit),
            _change(paced.after_pace),
        ]
        # Each figure's row on one line, every number with its unit whole and in its column.
        row = tuple(" ".join(cells).split())
        assert any(line[1 : 1 + len(row)] == row for line in words), (name, row, lines)
    for run_id in (comparison.first.run_id, comparison.second.run_id):
        assert any(run_id in line.split() for line in lines), run_id


def test_the_table_has_the_columns_a_reader_needs_and_the_verdict() -> None:
    lines = _shown(_comparisons()["slower machine"])
    text = "\n".join(lines)
    header = next(line for line in lines if line.startswith("figure"))
    assert header.split() == [
        *("figure", "first", "second", "apart", "expected", "left", "within", "20%")
    ]
    # The default worker's peak (a wave's) moved 28 % on its curve: the verdict is NO.
    default = lines.index("default at 108 pods, on its curve: expected not to move")
    assert lines[default + 4].split()[0] == "peak"
    assert lines[default + 4].split()[-1] == "NO"
    assert "first   20261203T081021Z-overhead-912a" in text
    assert "second  20261203T130222Z-overhead-9711" in text


def test_a_doubtful_figure_says_why_it_cannot_be_called_a_repeat() -> None:
    text = " ".join(" ".join(_shown(_comparisons()["doubtful figures"])).split())
    assert "peak: cannot say: noisy: the kubelet's event writes had not drained in 300s" in text
    assert "clean opened its windows without waiting for the kubelet's onset events" in text


def test_a_pace_beyond_the_range_shown_is_said_and_decides_nothing() -> None:
    lines = _shown(_comparisons()["pace beyond the range"])
    text = " ".join(" ".join(lines).split())
    assert "that pace is outside -20% to +38%" in text
    rows = [line.split() for line in lines if line.startswith(("CPU", "peak")) and "%" in line]
    assert len(rows) == 4
    assert all(row[-2:] == ["cannot", "say"] for row in rows)


@pytest.mark.parametrize(
    ("caveat", "said"),
    [
        (PeaksOverOneInterval(), "the peaks compared are each run's busiest single sample"),
        (
            ClimbAgainstCap("old", "new"),
            "old measured its crashing pods while they climbed their curve, new from their cap",
        ),
        (OnsetAgainstDrained("old", "new"), "old opened its windows without waiting"),
        (
            WindowsDiffer((WindowApart("fast", 60.0, 180.0), WindowApart("slow", 70, 181))),
            "the windows differ (fast 60s against 180s, slow 70s against 181s)",
        ),
    ],
)
def test_each_caveat_says_what_it_is(caveat: Caveat, said: str) -> None:
    assert said in caveat_text(caveat)
