"""Two overhead sweeps' comparison for the terminal (pure: a Comparison in, renderables out).

It must read at 80 columns, the width rich gives piped output: the prose wraps
between words, and the figures sit in one narrow table per worker whose cells
are short enough never to be cut (a run id, the figures' names and the
worker's bound go in headings and a legend, not in columns).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final

from rich import box
from rich.console import RenderableType
from rich.table import Column, Table
from rich.text import Text

from crashloop_harness.outputs.narrow import legend
from crashloop_harness.overhead.analysis import REPEAT_WITHIN
from crashloop_harness.overhead.compare import (
    Caveat,
    ClimbAgainstCap,
    Comparison,
    MachinePace,
    OneWave,
    OnsetAgainstDrained,
    PeaksOverOneInterval,
    WindowsDiffer,
    WorkerFigures,
)
from crashloop_harness.overhead.pace import PACE_SHOWN, PacedFigure

_WITHIN: Final = f"within {REPEAT_WITHIN:.0%}"
_HEADERS: Final = ("figure", "first", "second", "apart", "expected", "left", _WITHIN)
# The figure's short name in the table, by its unit; the legend says what it is.
_SHORT: Final = {"x": "CPU", "QPS": "peak"}
_NUMBERS: Final = (False, True, True, True, True, True, False)  # right-aligned, per header


def comparison_view(comparison: Comparison) -> list[RenderableType]:
    """What `crashloop overhead-compare` prints, in order: what was left out and what
    keeps the runs from comparing alike, the machine's pace, then each worker's figures."""
    labels = (comparison.first.run_id, comparison.second.run_id)
    lines: list[str] = []
    if comparison.not_compared:
        left_out = comparison.not_compared
        lines.append(
            f"not compared: {', '.join(left_out)} ({labels[1]} did not sweep "
            f"{'it' if len(left_out) == 1 else 'them'})"
        )
    lines += [caveat_text(caveat) for caveat in comparison.caveats]
    for pace in comparison.paces:
        lines += pace_lines(pace, labels)
    lines += [wave_text(wave) for wave in comparison.waves]
    shown: list[RenderableType] = [Text(line) for line in lines]
    shown += [Text(""), legend((("first", labels[0]), ("second", labels[1])))]
    widths = _widths([_row(f) for w in comparison.workers for f in w.figures])
    for worker in comparison.workers:
        shown += [Text(""), Text(_heading(worker), style="bold"), _table(worker, widths)]
        shown += [Text(note) for note in _notes(worker)]
    shown += [Text(""), legend(_LEGEND)]
    return shown


def caveat_text(caveat: Caveat) -> str:
    match caveat:
        case PeaksOverOneInterval():
            return (
                "a run kept no request series: the peaks compared are each run's busiest "
                "single sample interval"
            )
        case ClimbAgainstCap(climbed, capped):
            return (
                f"{climbed} measured its crashing pods while they climbed their curve, "
                f"{capped} from their cap: the two do not measure the same place"
            )
        case OnsetAgainstDrained(early, late):
            return (
                f"{early} opened its windows without waiting for the kubelet's onset events "
                f"to drain, {late} after: a peak of the first may be an onset"
            )
        case WindowsDiffer(windows):
            apart = ", ".join(
                f"{w.worker} {w.first_s:.0f}s against {w.second_s:.0f}s" for w in windows
            )
            return (
                f"the windows differ ({apart}): a longer one averages more of the kubelet's "
                "swings, so its figures may move with it"
            )


def pace_lines(machine: MachinePace, labels: tuple[str, str]) -> list[str]:
    """How the machine's pace moved at one pod count, and whether it can decide anything."""
    pace, (first, second) = machine.pace, labels
    lines = [
        f"the machine's pace at {pace.pods} pods: the same running pods cost the kubelet "
        f"{pace.first_cores:.3f} cores in {first} and {pace.second_cores:.3f} in {second} "
        f"({pace.change - 1:+.0%}); a worker off its curve in both runs restarts as fast "
        "as the machine lets it, so its figures are expected to move by the inverse, "
        "one on its curve not at all"
    ]
    if not machine.shown:
        low, high = PACE_SHOWN
        lines.append(
            f"that pace is outside {low - 1:+.0%} to {high - 1:+.0%}, the range over which "
            "this account was shown to hold (docs/results.md): no figure is called a repeat "
            "after it"
        )
    return lines


def wave_text(wave: OneWave) -> str:
    moved = (
        ""
        if wave.mean_traffic_change is None
        else f"; the window's mean traffic moved {wave.mean_traffic_change:+.0%}"
    )
    first, second = wave.restarts
    return (
        f"{wave.worker}: its {wave.pods} pods restarted about once each in the window "
        f"({first} and {second} restarts): one wave, whose width the kubelet's requeue "
        "jitter draws pod by pod, so its peak is that wave's and moves more than the "
        f"traffic it carries{moved}"
    )


def _heading(worker: WorkerFigures) -> str:
    if worker.node_bound:
        bound = "off its curve in both runs (node-bound): expected to move by the pace's inverse"
    else:
        bound = "on its curve: expected not to move"
    return f"{worker.worker} at {worker.pods} pods, {bound}"


def _value(value: float | None, unit: str) -> str:
    if value is None:
        return "-"  # the within column says it was not measured
    return f"{value:.2f}x" if unit == "x" else f"{value:.2f} QPS"


def _change(value: float | None) -> str:
    return "-" if value is None else f"{value:+.0%}"


def _verdict(paced: PacedFigure) -> str:
    if paced.figure.caveats:
        return "cannot say"  # the notes under the table say why
    if paced.pace is not None and not paced.pace_shown:
        return "cannot say"  # the pace line above says why
    return {True: "yes", False: "NO", None: "not measured"}[paced.agrees]


def _row(paced: PacedFigure) -> tuple[str, ...]:
    figure = paced.figure
    return (
        _SHORT.get(figure.unit, figure.unit),
        _value(figure.first, figure.unit),
        _value(figure.second, figure.unit),
        _change(figure.apart),
        _value(paced.expected, figure.unit) if figure.second is not None else "-",
        _change(paced.after_pace),
        _verdict(paced),
    )


def _widths(rows: Sequence[tuple[str, ...]]) -> list[int]:
    """Each column's width over every worker's rows, so the workers' tables line up."""
    return [max(len(cell) for cell in column) for column in zip(_HEADERS, *rows, strict=True)]


def _table(worker: WorkerFigures, widths: Sequence[int]) -> Table:
    # No cell wraps: each is a word or a number with its unit, and a row of the widest
    # cells ("1234.56 QPS", "not measured") is 78 columns.
    columns = [
        Column(header, min_width=width, no_wrap=True, justify="right" if number else "left")
        for header, width, number in zip(_HEADERS, widths, _NUMBERS, strict=True)
    ]
    table = Table(*columns, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for paced in worker.figures:
        table.add_row(*_row(paced))
    return table


def _notes(worker: WorkerFigures) -> Iterator[str]:
    """Why a figure cannot be called a repeat: what made either run's reading doubtful."""
    for figure in (paced.figure for paced in worker.figures):
        if figure.caveats:
            yield f"{_SHORT.get(figure.unit, figure.unit)}: cannot say: {'; '.join(figure.caveats)}"


_LEGEND: Final = (
    ("CPU", "the kubelet's CPU with the crashing pods over its CPU with as many running"),
    ("peak", "its API requests per second at their peak, with the crashing pods"),
    ("apart", "second against first: the raw move"),
    ("expected", "the second's figure predicted from the first's and the machine's pace"),
    ("left", "second against expected: what the pace leaves"),
    (
        _WITHIN,
        f"whether what the pace leaves is within {REPEAT_WITHIN:.0%}: the verdict, exit 1 "
        "unless every figure's is yes",
    ),
)
