"""How far the machine's pace moved between two sweeps, and how much of a talk
figure's move that explains (pure).

On a shared machine the same work costs more CPU at one hour than at another:
at 108 pods the same running pods on the same kubelet cost it 0.059 cores in
one sweep and 0.085 in another. The baseline is the gauge: the same pods on the
same worker, so its cost moves with the machine alone. Its ratio between two
runs is the pace change (above 1: the second run's machine was slower).

What a slower machine does to a talk figure depends on what bounds the cell:
- A cell that keeps its curve restarts as often as the back-off allows. Its
  kubelet does the same work, at the same pace as the baseline, so its CPU ratio
  and its API traffic should not move.
- A cell off its curve restarts as fast as the node manages: the machine's cores
  are the limit. Its kubelet gets the same share of them either way (0.16-0.17
  cores on the fast worker in every run at 108 pods), and does less work with it
  on a slower machine: fewer restarts, fewer status updates. So its CPU ratio
  and its peak API traffic both move by the inverse of the pace.

The figure expected from the first run and the pace, and what is left between it
and the second run, tell a kubelet that changed from a machine that did. For a
node-bound CPU ratio the baseline cancels out: what is left is the crashing
kubelet's own change in cores. For a node-bound peak the pace comes from another
cell than the figure, so how well the two agree tests the account itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from crashloop_harness.overhead.analysis import (
    REPEAT_WITHIN,
    Cell,
    FigureApart,
    baseline_for,
    largest_crashing,
)

# The pace changes over which the account was shown to hold, as measured (rounded
# outward to 5 places): the sweep 20261203T081021Z against its reruns 073842Z
# (0.803492, the machine 20 % faster), 124842Z (1.159420) and 130222Z (1.382580,
# 38 % slower); after the pace, the fast
# worker's node-bound figures agreed within 1-6 % over that whole range. Outside it
# the account is untested, and a figure it explains is not called a repeat.
PACE_SHOWN: Final = (0.80349, 1.38259)


@dataclass(frozen=True)
class Pace:
    """The baseline at one pod count in two runs: what the same running pods cost
    each run's kubelet (cores)."""

    pods: int
    first_cores: float
    second_cores: float

    @property
    def change(self) -> float:
        """second / first: above 1, the same work took more CPU in the second run."""
        return self.second_cores / self.first_cores


def pace_between(first: Sequence[Cell], second: Sequence[Cell], pods: int) -> Pace | None:
    """The pace change at ``pods`` from both runs' baselines; None when either run
    lacks that baseline or measured it at no cost."""
    mine, theirs = baseline_for(first, pods), baseline_for(second, pods)
    if mine is None or theirs is None or mine.kubelet_cores <= 0 or theirs.kubelet_cores <= 0:
        return None
    return Pace(pods, mine.kubelet_cores, theirs.kubelet_cores)


def node_bound(cell: Cell) -> bool:
    """Whether a crashing cell restarted as fast as the node let it, not as its
    curve asked: it fell off its curve."""
    return cell.crashing and cell.overshoot.keeps_curve is False


def worker_node_bound(first: Sequence[Cell], second: Sequence[Cell], worker: str) -> bool:
    """Whether ``worker``'s talk-figure cell (its largest crashing one) was bound by
    the node in both runs: only then does the pace predict its figures' move."""
    mine, theirs = largest_crashing(first, worker), largest_crashing(second, worker)
    return mine is not None and theirs is not None and node_bound(mine) and node_bound(theirs)


@dataclass(frozen=True)
class PacedFigure:
    """A talk figure from two runs, with what the machine's pace change predicts of it."""

    figure: FigureApart
    pace: Pace | None  # at the figure's pod count; None: a run lacks its baseline
    node_bound: bool  # its cell was off its curve in both runs

    @property
    def expected(self) -> float | None:
        """The second run's figure expected from the first's and the pace: moved by
        the pace's inverse for a node-bound cell, unmoved for one on its curve."""
        first = self.figure.first
        if first is None or self.pace is None:
            return None
        return first / self.pace.change if self.node_bound else first

    @property
    def after_pace(self) -> float | None:
        """(second - expected) / expected: what the pace leaves unexplained."""
        expected, second = self.expected, self.figure.second
        if expected is None or second is None or expected == 0:
            return None
        return (second - expected) / expected

    @property
    def pace_shown(self) -> bool:
        """Whether the pace change lies where the account was shown to hold (PACE_SHOWN)."""
        low, high = PACE_SHOWN
        return self.pace is not None and low <= self.pace.change <= high

    @property
    def agrees(self) -> bool | None:
        """What is left after the pace within REPEAT_WITHIN: the repeat the sweep promises.

        None when it cannot be said: a figure either run did not measure or read
        with a caveat, no pace to set it by, or a pace outside PACE_SHOWN.
        """
        left = self.after_pace
        if left is None or self.figure.caveats or not self.pace_shown:
            return None
        return abs(left) <= REPEAT_WITHIN


def paced(
    figures: Sequence[FigureApart], first: Sequence[Cell], second: Sequence[Cell]
) -> list[PacedFigure]:
    """Each figure with the pace at its worker's talk-figure pod count (the first
    run's largest crashing cell) and whether that cell was node-bound in both runs."""
    found = []
    for figure in figures:
        top = largest_crashing(first, figure.worker)
        pace = None if top is None else pace_between(first, second, top.pods)
        bound = worker_node_bound(first, second, figure.worker)
        found.append(PacedFigure(figure, pace, bound))
    return found


# A crashing cell whose pods restarted at most this many times each over its window
# restarted in one wave (the default worker: 108 restarts of 108 pods at its 300 s cap).
ONE_WAVE_RESTARTS_PER_POD: Final = 1.5


def one_wave(cell: Cell) -> bool:
    """Whether a crashing cell's window held about one restart of each pod: one wave.

    Its peak is that wave's, and how tightly the wave comes is drawn per pod by
    the kubelet's requeue jitter (up to half the back-off, at most 60 s, from
    1.35), so the peak moves between runs more than the traffic the wave carries.
    """
    return cell.crashing and cell.restarts <= ONE_WAVE_RESTARTS_PER_POD * cell.pods
