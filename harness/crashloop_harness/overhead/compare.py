"""Two finished overhead sweeps set side by side (pure): each talk figure from both, what
the machine's pace between them predicts of it, and what keeps the two from comparing alike.

`crashloop overhead-compare` renders a :class:`Comparison`; its exit is on
:attr:`Comparison.agree`, and its JSON is :func:`comparison_document`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from crashloop_harness.core.errors import HarnessError
from crashloop_harness.overhead.analysis import (
    REPEAT_WITHIN,
    Cell,
    largest_crashing,
    talk_figures_apart,
    windows_apart,
)
from crashloop_harness.overhead.pace import (
    PACE_SHOWN,
    Pace,
    PacedFigure,
    one_wave,
    paced,
    worker_node_bound,
)
from crashloop_harness.overhead.read import WrittenRun

# --- what keeps two sweeps from comparing alike --------------------------------------------


@dataclass(frozen=True)
class PeaksOverOneInterval:
    """A run kept no request series: the peaks compared are each run's busiest single
    sample interval, not the peak over PEAK_INTERVALS."""


@dataclass(frozen=True)
class ClimbAgainstCap:
    """One run measured its crashing pods while they climbed their curve, the other from
    their cap: the two do not measure the same place."""

    climbed: str  # run id
    capped: str


@dataclass(frozen=True)
class OnsetAgainstDrained:
    """One run opened its windows among the kubelet's onset events, the other after they
    drained: a peak of the first may be an onset."""

    early: str  # run id
    late: str


@dataclass(frozen=True)
class WindowApart:
    """One worker's talk-figure window in each run (s)."""

    worker: str
    first_s: float
    second_s: float


@dataclass(frozen=True)
class WindowsDiffer:
    """Workers whose talk-figure windows differ: a longer one averages more of the
    kubelet's swings, so its figures may move with it."""

    windows: tuple[WindowApart, ...]


Caveat = PeaksOverOneInterval | ClimbAgainstCap | OnsetAgainstDrained | WindowsDiffer


# --- the comparison --------------------------------------------------------------------------


@dataclass(frozen=True)
class MachinePace:
    """The machine's pace at one pod count, and whether it lies where the account of
    what it does to a figure was shown to hold (PACE_SHOWN)."""

    pace: Pace
    shown: bool


@dataclass(frozen=True)
class OneWave:
    """A worker whose talk-figure cell restarted about once per pod in a run's window:
    its peak is one wave's, whose width the kubelet's requeue jitter draws, so it moves
    more than the traffic the wave carries."""

    worker: str
    pods: int
    restarts: tuple[int, int]  # first run, second run
    mean_traffic_change: float | None  # second / first - 1 of the window's mean request rate


@dataclass(frozen=True)
class WorkerFigures:
    """One worker's talk figures from both runs, read at its largest crashing pod count."""

    worker: str
    pods: int
    node_bound: bool  # off its curve in both runs: its figures move by the pace's inverse
    figures: tuple[PacedFigure, ...]


@dataclass(frozen=True)
class Comparison:
    """The second sweep set against the first, everything a reader needs to judge it."""

    first: WrittenRun
    second: WrittenRun
    not_compared: tuple[str, ...]  # workers the second run did not sweep
    caveats: tuple[Caveat, ...]
    paces: tuple[MachinePace, ...]
    waves: tuple[OneWave, ...]
    workers: tuple[WorkerFigures, ...]

    @property
    def figures(self) -> tuple[PacedFigure, ...]:
        return tuple(f for w in self.workers for f in w.figures)

    @property
    def agree(self) -> bool:
        """Every figure within REPEAT_WITHIN of what the first run and the pace predict.

        The verdict is on what the pace leaves: on a shared machine the same work costs
        up to 70 % more CPU at one hour than another, so a raw 20 % would fail on the
        hour, not on the kubelet; a pace outside PACE_SHOWN decides nothing (no figure
        agrees), nor does a figure either run did not measure or read with a caveat.
        """
        return all(f.agrees for f in self.figures)


def compare_sweeps(first: WrittenRun, second: WrittenRun) -> Comparison:
    """``second`` set against ``first``: a HarnessError when they share no crashing cell."""
    one_interval = not (first.has_series and second.has_series)
    figures = talk_figures_apart(
        first.cells,
        second.cells,
        peak_over_one_interval=one_interval,
        labels=(first.run_id, second.run_id),
    )
    # A rerun of some workers only (--workers): the others are not compared, and say so.
    swept = {c.worker for c in second.cells}
    not_compared = tuple(sorted({f.worker for f in figures} - swept))
    figures = [f for f in figures if f.worker in swept]
    if not figures:
        unswept = f" ({second.run_id} swept none of {', '.join(not_compared)})"
        raise HarnessError(
            f"{first.path}: no crashing cell to compare" + (unswept if not_compared else ""),
            "compare two sweeps that measured crashing pods (`crashloop overhead`)",
        )
    with_pace = paced(figures, first.cells, second.cells)
    return Comparison(
        first=first,
        second=second,
        not_compared=not_compared,
        caveats=_caveats(first, second, one_interval=one_interval),
        paces=tuple(
            MachinePace(pace, PACE_SHOWN[0] <= pace.change <= PACE_SHOWN[1])
            for pace in dict.fromkeys(f.pace for f in with_pace if f.pace is not None)
        ),
        waves=_waves(first.cells, second.cells),
        workers=_by_worker(with_pace, first.cells, second.cells),
    )


def _caveats(first: WrittenRun, second: WrittenRun, *, one_interval: bool) -> tuple[Caveat, ...]:
    found: list[Caveat] = []
    if one_interval:
        found.append(PeaksOverOneInterval())
    if first.from_cap != second.from_cap:
        climbed, capped = (second, first) if first.from_cap else (first, second)
        found.append(ClimbAgainstCap(climbed.run_id, capped.run_id))
    if first.after_events != second.after_events:
        early, late = (second, first) if first.after_events else (first, second)
        found.append(OnsetAgainstDrained(early.run_id, late.run_id))
    if apart := windows_apart(first.cells, second.cells):
        found.append(WindowsDiffer(tuple(WindowApart(*window) for window in apart)))
    return tuple(found)


def _waves(first: Sequence[Cell], second: Sequence[Cell]) -> tuple[OneWave, ...]:
    found = []
    for worker in dict.fromkeys(c.worker for c in first if c.crashing):
        mine, theirs = largest_crashing(first, worker), largest_crashing(second, worker)
        if mine is None or theirs is None or not (one_wave(mine) or one_wave(theirs)):
            continue
        means = [c.requests.mean_qps if c.requests else None for c in (mine, theirs)]
        change = means[1] / means[0] - 1 if means[0] and means[1] is not None else None
        found.append(OneWave(worker, mine.pods, (mine.restarts, theirs.restarts), change))
    return tuple(found)


def _by_worker(
    figures: Sequence[PacedFigure], first: Sequence[Cell], second: Sequence[Cell]
) -> tuple[WorkerFigures, ...]:
    """The figures grouped by worker, in their order (talk_figures_apart keeps a worker's
    figures together)."""
    grouped = []
    for worker in dict.fromkeys(f.figure.worker for f in figures):
        # The talk figures' cell: the first run's largest crashing one (analysis.talk_ratios).
        pods = max(c.pods for c in first if c.crashing and c.worker == worker)
        mine = tuple(f for f in figures if f.figure.worker == worker)
        grouped.append(WorkerFigures(worker, pods, worker_node_bound(first, second, worker), mine))
    return tuple(grouped)


def comparison_document(comparison: Comparison) -> dict[str, Any]:
    """The comparison for `--output json`: both runs' paths, the verdict, and every figure
    with its raw move, its pace and what the pace leaves."""
    return {
        "first": str(comparison.first.path),
        "second": str(comparison.second.path),
        "within": REPEAT_WITHIN,
        "pace_shown": list(PACE_SHOWN),
        "agree": comparison.agree,
        "figures": [_figure_document(p) for p in comparison.figures],
    }


def _figure_document(paced_figure: PacedFigure) -> dict[str, Any]:
    figure, pace = paced_figure.figure, paced_figure.pace
    return {
        **asdict(figure),
        "apart": figure.apart,
        "agrees": figure.agrees,
        "pace": None if pace is None else {**asdict(pace), "change": pace.change},
        "node_bound": paced_figure.node_bound,
        "expected_from_pace": paced_figure.expected,
        "after_pace": paced_figure.after_pace,
        "agrees_after_pace": paced_figure.agrees,
    }
