"""What a restart costs its node in this run: the part of a delay no back-off timer decides.

The node's pace comes first from its pace probes (crashloop_harness.recording.pace):
a fixed burst of CPU in the node, beside the kubelet, timed on the node. No
kubelet code is on that path, so the kubelet under test cannot move it: the
pace is their median (read at its upper confidence bound) over the reference
host's (bound ``reference_pace``; a trace made before the burst carries the
runtime's own run of a container, bound ``reference_runtime_run``). What follows describes
the measure of runs recorded before nodes were probed (kept traces), which is
used only where a node has no pace sample.

A measured delay is the kubelet's wait (the back-off and the requeue jitter its
release allows, read in source) plus the node's cost of a restart: the exit
noticed, the pod synced, the container created. That cost is the host's, and
hosts differ (a CI runner, a laptop, a pool's node), so each node's bounds take
it from the run itself rather than from the host the sources were checked on.

The measure is the node's restarts that wait no back-off: every subject's
restart 1, and the restart-cost probes the check starts on each node through
the run (pods.skeleton.probe_pod: a container that fails once, then runs). Their
median over the reference host's (bound ``reference_first_restart``) is how much
slower the node restarts a container.

That measure is a restart the kubelet makes, so a kubelet that waited before
restart 1 would inflate it. The runtime's own start latency (started -
created, which no kubelet timer touches) caps it: a node is never taken as
slower than its runtime shows it is. The runtime's latency grows faster than a
restart's cost on a starved node (17x against about 3x at a tenth of a core,
run 20261206T072242Z-check-quick-1e90), so as a cap it never cuts a true
slowdown short; on a host whose runtime reads slow for other reasons (1.8x on
the reference host's own cluster one day, run 20261206T071852Z-check-quick-9cf8)
a kubelet's wait before restart 1 can widen its bounds up to that ratio and no
further. A node with no runtime timestamps (an existing cluster read through the
API alone) is judged at the reference host's cost, and says so.
"""

from __future__ import annotations

import dataclasses
import functools
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from crashloop_harness.model.backoff import UNMEASURED, BackoffCurve, CostAllowance
from crashloop_harness.model.bounds import BOUNDS
from crashloop_harness.model.durations import NS_PER_S, format_duration
from crashloop_harness.recording.pace import CPU_BURST, POD_BURST, RUNTIME_RUN
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.verdict.medians import uniform_median_quantile
from crashloop_harness.verdict.restart import decided_at, latency_of
from crashloop_harness.verdict.samples import (
    REFERENCE_START_P95_S,
    SLOWDOWN_CONFIDENCE,
    median_upper_bound,
    quantile,
    reference_start_at,
)
from crashloop_harness.verdict.tolerances import (
    MAX_JUDGEABLE_PACE,
    MAX_JUDGEABLE_SLOWDOWN,
    SLOW_LEVELS_FROM,
)

REFERENCE_START_S: Final = BOUNDS["reference_start_latency"].as_seconds()
REFERENCE_FIRST_RESTART_S: Final = BOUNDS["reference_first_restart"].as_seconds()
REFERENCE_COST_MEDIAN_S: Final = BOUNDS["reference_cost_median"].as_seconds()
REFERENCE_PACE_S: Final = BOUNDS["reference_pace"].as_seconds()
# Each pace probe's time on the reference host (crashloop_harness.recording.pace):
# a node's samples are read against the reference of the probe that made them.
PACE_REFERENCES_S: Final = {
    CPU_BURST: REFERENCE_PACE_S,
    RUNTIME_RUN: BOUNDS["reference_runtime_run"].as_seconds(),
    POD_BURST: BOUNDS["reference_pod_pace"].as_seconds(),
}
# By the probe's reference median, what a node's bursts' mean is read against
# (NodeCost.wait_pace): the burst's mean on the reference host, and how long a runtime's
# start waits for each second the bursts wait in mean on a node held to a CPU quota. The
# node's burst and the pace pod's each have their own: the pod's, half as long, meets
# the quota's end less often (bounds burst_wait_to_start, pod_burst_wait_to_start).
WAIT_READINGS: Final = {
    REFERENCE_PACE_S: (
        BOUNDS["reference_pace_mean"].as_seconds(),
        BOUNDS["burst_wait_to_start"].as_ratio(),
    ),
    PACE_REFERENCES_S[POD_BURST]: (
        BOUNDS["reference_pod_pace_mean"].as_seconds(),
        BOUNDS["pod_burst_wait_to_start"].as_ratio(),
    ),
}
CFS_PERIOD_S: Final = BOUNDS["cfs_period"].as_seconds()
# The fewest pace probes whose median says a node is too slow to judge (three rounds,
# PACE_EVERY_S apart): fewer leave it judged at the widest window it can be.
TOO_SLOW_FROM_PROBES: Final = 3


@dataclass(frozen=True, kw_only=True)
class NodeCost:
    """One node's restart cost as this run measured it, and the allowance it gives."""

    node: str
    # started - created of every attempt on the node: the runtime's own part.
    start_latencies_s: tuple[float, ...]
    # created - previous finished of every restart that waited no back-off.
    first_restarts_s: tuple[float, ...]
    # Every pace probe's time on the node (crashloop_harness.recording.pace).
    pace_s: tuple[float, ...] = ()
    # What the probe that made them took on the reference host (PACE_REFERENCES_S).
    pace_reference_s: float = REFERENCE_PACE_S
    # Whether its delays run to the container's start, not its creation: a node read
    # through the API alone, whose attempts carry no creation time.
    to_start: bool = False

    @property
    def measured(self) -> bool:
        return bool(self.start_latencies_s) or self.paced

    @property
    def paced(self) -> bool:
        """Whether the node's pace was probed beside the kubelet (runs since the probes)."""
        return bool(self.pace_s)

    @functools.cached_property
    def pace(self) -> float:
        """How much slower than the reference host the node does a restart's work, never
        below 1: the larger of its probes' two readings.

        Their median over the reference's, read at its upper confidence bound
        (:func:`median_upper_bound`): a host whose CPUs are shared slows every burst
        alike, and a bound from ten samples must not come out short of the node's true
        pace one run in ten. And :attr:`wait_pace`: a node held to a CPU quota leaves most
        bursts as fast as ever and makes the rest wait for its next period, which the
        median does not see and a restart's many steps do.
        """
        if not self.pace_s:
            return 1.0
        return max(1.0, median_upper_bound(self.pace_s) / self.pace_reference_s, self.wait_pace)

    @property
    def wait_pace(self) -> float:
        """The pace the bursts' waits give: their mean's excess over the reference's, times
        how much a runtime's start waits for each second of it (bound burst_wait_to_start),
        over the reference's start (bound reference_start_latency). 1 for a probe with no
        measured mean (WAIT_READINGS)."""
        reading = WAIT_READINGS.get(self.pace_reference_s)
        if not self.pace_s or reading is None:
            return 1.0
        reference, wait_to_start = reading
        # A quota makes a burst wait at most about one period: a probe held longer (a host
        # that froze for a moment) counts as one period, not as its whole time.
        waits = [min(s, reference + CFS_PERIOD_S) for s in self.pace_s]
        excess = max(0.0, statistics.fmean(waits) - reference)
        return 1.0 + wait_to_start * excess / REFERENCE_START_S

    @property
    def pace_median(self) -> float:
        """The probes' plain median over the reference's (or their waits' pace, the larger),
        never below 1: what says a node is too slow to judge. The upper bound (:attr:`pace`)
        widens the windows, so a few probes err towards a wider window; only a node whose
        probes are slow in median, or wait as a starved node's do, goes without an answer."""
        if not self.pace_s:
            return 1.0
        return max(1.0, statistics.median(self.pace_s) / self.pace_reference_s, self.wait_pace)

    @functools.cached_property
    def slowdown(self) -> float:
        """How much slower than the reference host the node restarts, never below 1.

        Its zero-back-off restarts' median over the reference's, capped by its
        runtime's (:attr:`runtime_slowdown`); 1 with no zero-back-off restart yet.
        The node's median is read at its upper confidence bound
        (:func:`median_upper_bound`): a bound from ten samples must not come out
        short of the node's true cost one run in ten.
        """
        if self.paced:
            # Measured beside the kubelet: nothing the kubelet does moves it.
            return self.pace
        if not self.first_restarts_s or not self.start_latencies_s:
            return 1.0
        restarts = median_upper_bound(self.first_restarts_s) / REFERENCE_FIRST_RESTART_S
        return max(1.0, min(restarts, self.runtime_slowdown))

    @functools.cached_property
    def runtime_slowdown(self) -> float:
        """The node's median start latency over the reference host's, never below 1.

        Over the reference's percentile that a median of as many starts reaches
        by chance once in four (SLOWDOWN_CONFIDENCE): a node with two starts is
        not slow for one that took 0.4 s; fifty starts at twice the reference's
        read as about twice.
        """
        if not self.start_latencies_s:
            return 1.0
        count = len(self.start_latencies_s)
        reference = reference_start_at(uniform_median_quantile(count, SLOWDOWN_CONFIDENCE))
        return max(1.0, statistics.median(self.start_latencies_s) / reference)

    @property
    def allowance(self) -> CostAllowance:
        """What a restart may cost on this node: the sources' terms times its slowdown."""
        if self.paced:
            # Never wider than the widest window the verdict judges at, at which an early
            # decision was made: the end of a run cannot overturn it.
            # A delay read through the API runs to the start: the reference's p95 start
            # (bound reference_start_latency) is work the pace slows too.
            to_start = timedelta(seconds=REFERENCE_START_P95_S if self.to_start else 0.0)
            return CostAllowance.paced(min(self.pace, MAX_JUDGEABLE_PACE), to_start=to_start)
        return CostAllowance.scaled(self.slowdown) if self.measured else UNMEASURED

    @property
    def too_slow(self) -> bool:
        if self.paced:
            # A median of one or two probes is one busy moment, not the node: a mutation
            # drill decided 7 s in, on a host kept busy, called a sound node too slow from
            # its only probe, 78 ms (run 20261207T161539Z-check-mutation-f7b0).
            enough = len(self.pace_s) >= TOO_SLOW_FROM_PROBES
            return enough and self.pace_median > MAX_JUDGEABLE_PACE
        return self.slowdown > self.max_judgeable

    @property
    def max_judgeable(self) -> float:
        """The slowest this node's measure is judged at (bounds max_judgeable_pace and
        max_judgeable_slowdown: the same widest window in either measure)."""
        return MAX_JUDGEABLE_PACE if self.paced else MAX_JUDGEABLE_SLOWDOWN

    def widest(self) -> NodeCost:
        """This node at the slowest pace still judged: what an early decision is judged
        against, so that no later reading of the pace can overturn it. A node measured by
        its restarts (no pace probed) stays as it is."""
        if not self.paced:
            return self
        return dataclasses.replace(self, pace_s=(self.pace_reference_s * MAX_JUDGEABLE_PACE,))

    @property
    def levels_fall_behind(self) -> bool:
        """Whether the node is slow enough that its status writes miss levels.

        A paced node's pace over-reads a starved node (its probe slows faster than the
        kubelet's status writes): the fast worker's node at a fifth of a core read 11.9x
        and its levels were seen before 38 of 39 restarts (run
        20261207T030201Z-check-quick-9a8d), at half a core 2.5x and 55 of 55
        (20261207T025443Z-check-quick-d793). So a paced node's levels count as falling
        behind only where its windows were cut to the widest judged: its pace, read at its
        upper bound, past max_judgeable_pace. At a tenth of a core, read through the API, a
        node's pods' bursts read 3.6x in median and 64x at the bound, and its levels were
        seen before 5 of 11 restarts (run 20261207T191910Z-check-quick-6c1c). A node measured
        by its restarts keeps ``slow_levels_from``.
        """
        if self.paced:
            return self.too_slow or self.pace > MAX_JUDGEABLE_PACE
        return self.slowdown >= SLOW_LEVELS_FROM

    def levels_words(self) -> str:
        """Why a level not seen on this node is its own and not the kubelet's."""
        if self.paced:
            return (
                f"node {self.node}'s pace reads up to {self.pace:.2f}x the reference host's, "
                f"past the {MAX_JUDGEABLE_PACE:g}x its windows are judged at (bound "
                "max_judgeable_pace): its status writes, which carry the level, fall behind "
                "its restarts"
            )
        return (
            f"node {self.node} is {self.slowdown:.2f}x slower than the reference host at "
            f"restarting (bound slow_levels_from {SLOW_LEVELS_FROM:g}x): its status writes, "
            "which carry the level, fall behind its restarts"
        )

    def cap_median_shift_s(self) -> float:
        """How much further past the cap a sound kubelet's median restart sits on this node."""
        return (self.slowdown - 1.0) * REFERENCE_COST_MEDIAN_S

    def describe(self) -> str:
        """One line for a reader: the measure, its samples, what it allows."""
        if not self.measured:
            return (
                f"node {self.node}: no runtime timestamps, judged at the reference host's "
                "restart cost"
            )
        allowance = self.allowance
        paced = (
            f"pace {self.pace:.2f}x: its pace probe beside the kubelet took "
            f"{_seconds(statistics.median(self.pace_s))} in median over {len(self.pace_s)} "
            f"probes against the reference host's {_seconds(self.pace_reference_s)}; "
            if self.paced
            else ""
        )
        first = (
            f"; a restart with no back-off took "
            f"{_seconds(statistics.median(self.first_restarts_s))} in median over "
            f"{len(self.first_restarts_s)}"
            if self.first_restarts_s
            else "; no restart without back-off yet"
        )
        latency = (
            f"start latency {_ms(statistics.median(self.start_latencies_s))} "
            f"in median, p95 {_ms(quantile(self.start_latencies_s))} over "
            f"{len(self.start_latencies_s)} starts ({self.runtime_slowdown:.2f}x)"
            if self.start_latencies_s
            else "no start recorded yet"
        )
        return (
            f"node {self.node}: {paced}{latency}{first}; "
            f"slowdown {self.slowdown:.2f}x, so a restart may cost "
            f"{_td(allowance.after_requeue)} after its requeue and restart 1 may take "
            f"{_td(allowance.first_restart)}"
        )

    def too_slow_message(self, curve: BackoffCurve) -> str:
        if self.paced:
            return (
                f"node {self.node} too slow to judge back-off {format_duration(curve.maximum)}: "
                f"its pace probe beside the kubelet took p95 "
                f"{_seconds(quantile(self.pace_s))} and {_seconds(statistics.median(self.pace_s))} "
                f"in median over {len(self.pace_s)} probes, {self.pace_median:.2f}x the "
                "reference host's in median, past the "
                f"{MAX_JUDGEABLE_PACE:g}x a paced node is judged at (bound "
                "max_judgeable_pace): its windows can no longer tell the curve from its "
                "neighbour's"
            )
        return (
            f"node {self.node} too slow to judge back-off {format_duration(curve.maximum)}: "
            f"a restart with no back-off took p95 {_seconds(quantile(self.first_restarts_s))} "
            f"over {len(self.first_restarts_s)} samples, {self.slowdown:.2f}x the reference host, "
            f"past the {MAX_JUDGEABLE_SLOWDOWN:g}x the verdict is proven on (bound "
            "max_judgeable_slowdown): its windows can no longer tell the curve from its "
            "neighbour's"
        )

    def to_dict(self) -> dict[str, Any]:
        """The node's measure for summary.json: samples counted, quantiles, what it allowed."""
        allowance = self.allowance
        return {
            "node": self.node,
            "measured": self.measured,
            "start_latency_samples": len(self.start_latencies_s),
            "start_latency_median_s": _median(self.start_latencies_s),
            "start_latency_p95_s": _rounded(quantile(self.start_latencies_s)),
            "first_restart_samples": len(self.first_restarts_s),
            "first_restart_median_s": _median(self.first_restarts_s),
            "first_restart_p95_s": _rounded(quantile(self.first_restarts_s)),
            "pace_samples": len(self.pace_s),
            "pace_median_s": _median(self.pace_s),
            "pace_p95_s": _rounded(quantile(self.pace_s)),
            "pace": round(self.pace, 3),
            "runtime_slowdown": round(self.runtime_slowdown, 3),
            "slowdown": round(self.slowdown, 3),
            "after_requeue_s": round(allowance.after_requeue.total_seconds(), 3),
            "first_restart_bound_s": round(allowance.first_restart.total_seconds(), 3),
            "too_slow": self.too_slow,
            "levels_fall_behind": self.levels_fall_behind,
        }


def node_costs(
    attempts: Mapping[str, Sequence[AttemptRecord]],
    nodes: Mapping[str, str],
    probes: Mapping[str, Sequence[Sequence[AttemptRecord]]] | None = None,
    pace: Mapping[str, Sequence[float]] | None = None,
    *,
    pace_probe: str = CPU_BURST,
) -> dict[str, NodeCost]:
    """node -> its cost, from every subject's attempts on it (subject -> node in ``nodes``),
    its restart-cost probes' (node -> one sequence of attempts per probe) and its pace
    probes' times (node -> seconds each, all made by ``pace_probe``)."""
    by_node: dict[str, list[Sequence[AttemptRecord]]] = {}
    for subject, node in nodes.items():
        by_node.setdefault(node, []).append(attempts.get(subject, ()))
    for node, containers in (probes or {}).items():
        by_node.setdefault(node, []).extend(containers)
    paces = pace or {}
    return {
        node: dataclasses.replace(
            cost_of(node, groups),
            pace_s=tuple(paces.get(node, ())),
            pace_reference_s=PACE_REFERENCES_S[pace_probe],
            # The pod probe runs exactly where no command runs in a node: there every
            # attempt is read through the API, its delay to the container's start.
            to_start=pace_probe == POD_BURST,
        )
        for node, groups in by_node.items()
    }


def cost_of(node: str, containers: Iterable[Sequence[AttemptRecord]]) -> NodeCost:
    """One node's cost from the attempts of each container on it (one sequence each)."""
    starts: list[float] = []
    firsts: list[float] = []
    for records in containers:
        by_attempt = {r.attempt: r for r in records}
        starts += [s for r in records if (s := latency_of(r)) is not None]
        first, before = by_attempt.get(1), by_attempt.get(0)
        if first is not None and before is not None and before.finished_at_ns is not None:
            firsts.append((decided_at(first) - before.finished_at_ns) / NS_PER_S)
    return NodeCost(node=node, start_latencies_s=tuple(starts), first_restarts_s=tuple(firsts))


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 4) if values else None


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.0f} ms"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}s"


def _td(value: timedelta) -> str:
    return f"{value.total_seconds():.2f}s"
