"""What crash-looping pods cost a node, from readings taken around a window (pure).

A cell of the sweep is one worker with N pods, crashing or (the baseline)
running and never crashing. Around its measured window the harness reads the
node's processes (``/proc/<pid>/stat``: the kubelet's CPU and memory; the
container runtime's CPU, containerd and its shims), the kubelet's own API
client counters (``rest_client_requests_total`` from its ``/metrics``), the
pods' restart counts, and a few sampled pods' attempts. This module turns
those readings into the cell's numbers; it reads nothing itself.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Final

from crashloop_harness.model.backoff import BackoffCurve

KUBELET: Final = "kubelet"
# comm is cut at 15 characters: containerd-shim-runc-v2 reads "containerd-shim".
RUNTIME: Final = frozenset({"containerd", "containerd-shim"})
# A cell keeps its curve while at least this share of its restarts came
# within the verdict's tolerance of the back-off.
ON_CURVE_SHARE: Final = 0.95
# A bound on one pod's restarts in any window (only restart 1 waits nothing).
_MOST_RESTARTS: Final = 100_000

_REQUESTS: Final = re.compile(
    r"^rest_client_requests_total\{(?P<labels>[^}]*)\}\s+(?P<value>[0-9.eE+-]+)\s*$", re.MULTILINE
)
_METHOD: Final = re.compile(r'method="(?P<method>[A-Z]+)"')


@dataclass(frozen=True)
class ProcessTimes:
    """One process's CPU so far (seconds, its own and its reaped children's) and its RSS."""

    pid: int
    comm: str
    cpu_s: float
    rss_bytes: int


def parse_proc_stats(text: str, *, ticks_per_s: int, page_bytes: int) -> list[ProcessTimes]:
    """Every ``/proc/<pid>/stat`` line in ``text`` (lines that do not parse are skipped).

    The command name sits in parentheses and may itself hold spaces or
    parentheses, so the fields are counted from the last ``)``.
    """
    found = []
    for line in text.splitlines():
        open_at, close_at = line.find("("), line.rfind(")")
        if open_at < 0 or close_at < open_at:
            continue
        fields = line[close_at + 2 :].split()
        try:
            pid = int(line[:open_at])
            # utime, stime, cutime, cstime are fields 14-17; rss is field 24.
            ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))
            rss_pages = int(fields[21])
        except (ValueError, IndexError):
            continue
        found.append(
            ProcessTimes(
                pid, line[open_at + 1 : close_at], ticks / ticks_per_s, rss_pages * page_bytes
            )
        )
    return found


def cpu_between(
    before: Iterable[ProcessTimes], after: Iterable[ProcessTimes], comms: Iterable[str]
) -> float:
    """CPU seconds the processes named ``comms`` used between two readings.

    Counted per process: one that started in between counts from zero, one
    that ended in between is lost (its time is gone with it), never negative.
    """
    names = set(comms)
    start = {p.pid: p.cpu_s for p in before if p.comm in names}
    return sum(max(p.cpu_s - start.get(p.pid, 0.0), 0.0) for p in after if p.comm in names)


def rss_of(reading: Iterable[ProcessTimes], comm: str) -> int:
    return sum(p.rss_bytes for p in reading if p.comm == comm)


def parse_request_counts(metrics: str) -> dict[str, float]:
    """The kubelet's API requests so far, by verb (summed over codes and hosts)."""
    counts: dict[str, float] = {}
    for found in _REQUESTS.finditer(metrics):
        method = _METHOD.search(found.group("labels"))
        if method is not None:
            verb = method.group("method")
            counts[verb] = counts.get(verb, 0.0) + float(found.group("value"))
    return counts


@dataclass(frozen=True)
class RequestSample:
    """The kubelet's request counters at one moment (seconds from the window's start)."""

    at_s: float
    counts: Mapping[str, float]


@dataclass(frozen=True)
class UsageSample:
    """CPU seconds the kubelet and the runtime used from the window's start to ``at_s``."""

    at_s: float
    kubelet_cpu_s: float
    runtime_cpu_s: float


# The peak request rate is taken over at least this many consecutive sample intervals
# (40 s at one sample per 10 s), as a dashboard reads a counter: a rate over at
# least four scrape intervals, the usual practice with Prometheus' rate(). Over
# one interval the peak depends on where the samples fall: pods that crashed
# together update their status in bursts, and a burst split across two samples
# reads as half the rate it has inside one; and a saturated kubelet's traffic
# swings between 20 and 50 QPS from one 10 s interval to the next. Any burst up
# to three intervals long lies wholly inside some span, whatever the phase. A
# window shorter than the span takes its peak over the whole window.
PEAK_INTERVALS: Final = 4


@dataclass(frozen=True)
class RequestRates:
    """The kubelet's API request rate over a window, in total and by verb.

    ``peak_qps`` is over at least PEAK_INTERVALS consecutive intervals;
    ``busiest_interval_qps`` over one, as runs before the change reported
    their peak (kept so the two can be set side by side).
    """

    mean_qps: float
    peak_qps: float
    mean_by_verb: Mapping[str, float]
    peak_by_verb: Mapping[str, float]
    busiest_interval_qps: float


@dataclass(frozen=True)
class _Span:
    """The kubelet's requests by verb between two samples."""

    start_s: float
    end_s: float
    by_verb: Mapping[str, float]

    @property
    def qps(self) -> float:
        return sum(self.by_verb.values()) / (self.end_s - self.start_s)

    def verb_qps(self, verb: str) -> float:
        return self.by_verb.get(verb, 0.0) / (self.end_s - self.start_s)


def _spans(
    ordered: Sequence[RequestSample], intervals: int, *, longer: bool = False
) -> list[_Span]:
    """Every run of ``intervals`` consecutive sample intervals (or the whole window when it
    is shorter), and with ``longer`` every longer run too. A counter that went down inside
    a run (the kubelet restarted) makes it unusable, so it is left out rather than read as
    a negative rate."""
    verbs = sorted({verb for sample in ordered for verb in sample.counts})
    shortest = max(min(intervals, len(ordered) - 1), 1)
    steps = range(shortest, len(ordered)) if longer else [shortest]
    found = []
    for step in steps:
        for first in range(len(ordered) - step):
            run = ordered[first : first + step + 1]
            if any(
                later.counts.get(v, 0.0) < earlier.counts.get(v, 0.0)
                for earlier, later in itertools.pairwise(run)
                for v in verbs
            ):
                continue
            if run[-1].at_s > run[0].at_s:
                deltas = {v: run[-1].counts.get(v, 0.0) - run[0].counts.get(v, 0.0) for v in verbs}
                found.append(_Span(run[0].at_s, run[-1].at_s, deltas))
    return found


def request_rates(
    samples: Sequence[RequestSample], *, peak_intervals: int = PEAK_INTERVALS
) -> RequestRates | None:
    """Mean over the window; the peak is the highest rate over any span of at least
    ``peak_intervals`` sample intervals (so never below the mean of a window that long).
    None with fewer than two samples."""
    ordered = sorted(samples, key=lambda s: s.at_s)
    if len(ordered) < 2 or ordered[-1].at_s <= ordered[0].at_s:
        return None
    verbs = sorted({verb for sample in ordered for verb in sample.counts})
    spans = _spans(ordered, peak_intervals, longer=True)
    peaks = {v: max((span.verb_qps(v) for span in spans), default=0.0) for v in verbs}
    peak_total = max((span.qps for span in spans), default=0.0)
    busiest = max((span.qps for span in _spans(ordered, 1)), default=0.0)
    span = ordered[-1].at_s - ordered[0].at_s
    means = {
        v: max(ordered[-1].counts.get(v, 0.0) - ordered[0].counts.get(v, 0.0), 0.0) / span
        for v in verbs
    }
    return RequestRates(sum(means.values()), peak_total, means, peaks, busiest)


# The kubelet's event writes still pending, as a rate it may send them at and
# stay a backlog: crashing pods raise up to 25 events of each type each as they
# start (the client-go spam filter's burst per source, object and event type,
# then one per 5 minutes), and the kubelet sends them at its eventRecordQPS (50),
# so 108 new pods keep it writing events for minutes. A window opened among them
# reads an onset, not the steady cost.
EVENT_BACKLOG_QPS: Final = 5.0


def event_write_rate(samples: Sequence[RequestSample]) -> float | None:
    """The kubelet's event writes per second from the first sample to the last.

    A status update is a GET then a PATCH (the kubelet's status manager reads
    the pod before it patches it, and the node's status likewise); an event is
    a POST, or a PATCH of one already sent, with no GET. So POST + PATCH - GET
    counts the events, never below zero. None with fewer than two samples, no
    time between them, or a counter that went down (the kubelet restarted).
    """
    ordered = sorted(samples, key=lambda s: s.at_s)
    if len(ordered) < 2 or ordered[-1].at_s <= ordered[0].at_s:
        return None
    spans = _spans(ordered, len(ordered) - 1)
    if not spans:
        return None
    span = spans[0]
    writes = span.by_verb.get("POST", 0.0) + span.by_verb.get("PATCH", 0.0)
    return max(writes - span.by_verb.get("GET", 0.0), 0.0) / (span.end_s - span.start_s)


def kubelet_cores_over_time(samples: Sequence[UsageSample]) -> list[tuple[float, float]]:
    """(seconds into the window, the kubelet's cores since the sample before): its load as
    it went, where the window's total gives only the mean."""
    points, previous = [], UsageSample(0.0, 0.0, 0.0)
    for sample in sorted(samples, key=lambda s: s.at_s):
        span = sample.at_s - previous.at_s
        if span > 0:
            points.append((sample.at_s, (sample.kubelet_cpu_s - previous.kubelet_cpu_s) / span))
            previous = sample
    return points


def requests_over_time(samples: Sequence[RequestSample]) -> list[tuple[float, float]]:
    """(seconds into the window, the kubelet's requests per second since the sample before);
    an interval with a counter that went down (the kubelet restarted) is left out."""
    ordered = sorted(samples, key=lambda s: s.at_s)
    return [(span.end_s, span.qps) for span in _spans(ordered, 1)]


def restarts_to_cap(curve: BackoffCurve) -> int:
    """The restart count from which a pod's next wait is the curve's cap.

    A cell is measured from there: every pod then asks for one restart per cap,
    however fast the pods started. Before it, 108 pods climbing together ask for
    two to four times as many, and how many depends on where the climb is.
    """
    return curve.restarts_until_cap() - 1


def time_to_cap(curve: BackoffCurve) -> timedelta:
    """The nominal waits one pod climbs through before it reaches restarts_to_cap."""
    return sum(curve.delays(restarts_to_cap(curve)), timedelta(0))


def allowed_restarts(curve: BackoffCurve, restarts_so_far: int, window: timedelta) -> int:
    """How many restarts the curve allows one pod in ``window``, from its level at the start.

    Optimistic by design (the first wait is taken to begin with the window,
    and a restart to take no time), so achieved/allowed below 1 is the
    kubelet and the machine falling behind, never the model being strict.
    """
    left = window
    for allowed in range(_MOST_RESTARTS):
        delay = curve.delay_before_restart(restarts_so_far + allowed + 1)
        if delay > left:
            return allowed
        left -= delay
    return _MOST_RESTARTS


@dataclass(frozen=True)
class Overshoot:
    """Restart delays of the sampled pods against the curve, in the window."""

    restarts: int
    median_s: float | None
    p95_s: float | None
    max_s: float | None
    on_curve_share: float | None  # within the verdict's tolerance

    @property
    def keeps_curve(self) -> bool | None:
        """None when no restart was measured: no evidence either way."""
        if self.on_curve_share is None:
            return None
        return self.on_curve_share >= ON_CURVE_SHARE


@dataclass(frozen=True)
class Restart:
    """One measured restart: its number, and the previous exit to this start (s)."""

    number: int
    delay_s: float


def overshoot(curve: BackoffCurve, restarts: Sequence[Restart]) -> Overshoot:
    over = [r.delay_s - curve.delay_before_restart(r.number).total_seconds() for r in restarts]
    if not over:
        return Overshoot(0, None, None, None, None)
    within = sum(
        r.delay_s <= curve.upper_tolerance(curve.delay_before_restart(r.number)).total_seconds()
        for r in restarts
    )
    ordered = sorted(over)
    p95 = ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]
    return Overshoot(
        restarts=len(over),
        median_s=statistics.median(over),
        p95_s=p95,
        max_s=ordered[-1],
        on_curve_share=within / len(over),
    )


@dataclass(frozen=True)
class Cell:
    """One worker with ``pods`` pods, crashing or not, over one measured window."""

    worker: str
    pods: int
    crashing: bool
    window_s: float
    kubelet_cpu_s: float
    runtime_cpu_s: float
    kubelet_rss_bytes: int
    requests: RequestRates | None
    restarts: int  # achieved in the window, all pods
    restarts_allowed: int  # by the curve, all pods
    overshoot: Overshoot
    # The readings the totals came from, so a later run can be recomputed.
    request_samples: tuple[RequestSample, ...] = ()
    usage_samples: tuple[UsageSample, ...] = ()
    # Crashing cells: whether every pod was at its cap when the window began
    # (None: not waited for, a baseline or a run from before the wait), and
    # how long after the pods started that was.
    at_cap: bool | None = None
    climb_s: float | None = None
    # Whether the kubelet's event writes had fallen to EVENT_BACKLOG_QPS before
    # the window began (None: a run from before the wait), and how long after
    # the pods started that was (or how long was waited in vain).
    events_drained: bool | None = None
    drained_s: float | None = None

    @property
    def unclean(self) -> list[str]:
        """Why the window may not read the steady cost it stands for; empty when it does."""
        found = []
        if self.at_cap is False:
            found.append(f"not every pod reached its cap in {self.climb_s or 0:.0f}s")
        if self.events_drained is False:
            found.append(
                f"the kubelet's event writes had not drained in {self.drained_s or 0:.0f}s"
            )
        return found

    @property
    def kubelet_cores(self) -> float:
        return self.kubelet_cpu_s / self.window_s if self.window_s > 0 else 0.0

    @property
    def runtime_cores(self) -> float:
        return self.runtime_cpu_s / self.window_s if self.window_s > 0 else 0.0

    @property
    def restarts_per_minute(self) -> float:
        return self.restarts * 60.0 / self.window_s if self.window_s > 0 else 0.0

    @property
    def achieved_share(self) -> float | None:
        return self.restarts / self.restarts_allowed if self.restarts_allowed else None


def baseline_for(cells: Sequence[Cell], pods: int) -> Cell | None:
    """The baseline cell (running pods, never crashing) with ``pods`` pods, if measured."""
    return next((c for c in cells if not c.crashing and c.pods == pods), None)


@dataclass(frozen=True)
class TalkRatio:
    """A figure the talk quotes, next to what this machine measured."""

    what: str
    talk: str
    measured: float | None
    unit: str
    # Why a window it came from may not read the steady cost (empty: it does);
    # such a figure is shown with them and never taken to agree with another run.
    caveats: tuple[str, ...] = ()


def largest_crashing(cells: Sequence[Cell], worker: str) -> Cell | None:
    """``worker``'s crashing cell at its largest pod count: the one the talk's figures
    come from. None when the worker has no crashing cell."""
    crashing = [c for c in cells if c.crashing and c.worker == worker]
    return max(crashing, key=lambda c: c.pods) if crashing else None


def talk_ratios(cells: Sequence[Cell], worker: str) -> list[TalkRatio]:
    """The talk's figures (slides 12-13) from one worker's cells at its largest pod count.

    "2x kubelet CPU": crashing over baseline kubelet CPU at the same pod
    count; "5 QPS at API traffic peak": the kubelet's peak request rate.
    """
    top = largest_crashing(cells, worker)
    if top is None:
        return []
    base = baseline_for(cells, top.pods)
    ratio = (
        top.kubelet_cores / base.kubelet_cores
        if base is not None and base.kubelet_cores > 0
        else None
    )
    peak = top.requests.peak_qps if top.requests is not None else None
    crashing = tuple(top.unclean)
    running = tuple(f"baseline: {why}" for why in (base.unclean if base is not None else []))
    return [
        TalkRatio(
            f"kubelet CPU, {top.pods} crashing / running pods", "2x", ratio, "x", crashing + running
        ),
        TalkRatio(
            f"kubelet API requests at peak, {top.pods} crashing pods",
            "5 QPS",
            peak,
            "QPS",
            crashing,
        ),
    ]


def curve_breaks_at(cells: Sequence[Cell], worker: str) -> int | None:
    """The least pod count at which ``worker`` no longer keeps its curve; None: it always did."""
    failing = [
        c.pods
        for c in cells
        if c.crashing and c.worker == worker and c.overshoot.keeps_curve is False
    ]
    return min(failing, default=None)


# Two runs of the same sweep agree when every talk figure is within this share
# of the first run's (the repeatability the analysis promises).
REPEAT_WITHIN: Final = 0.20


@dataclass(frozen=True)
class FigureApart:
    """One talk figure from two runs, and how far the second is from the first."""

    worker: str
    what: str
    unit: str
    first: float | None
    second: float | None
    caveats: tuple[str, ...] = ()  # either run's, each named by its run

    @property
    def apart(self) -> float | None:
        """(second - first) / first; None when either run did not measure it."""
        if self.first is None or self.second is None or self.first == 0:
            return None
        return (self.second - self.first) / self.first

    @property
    def agrees(self) -> bool | None:
        """Within REPEAT_WITHIN; None when it cannot be said: a figure not measured, or
        read over a window with a caveat (two onsets alike are no repeat of the cost)."""
        apart = self.apart
        if apart is None or self.caveats:
            return None
        return abs(apart) <= REPEAT_WITHIN


# Two windows this far apart (a share of the longer) do not read the same swings.
WINDOWS_ALIKE: Final = 0.10


def windows_apart(first: Sequence[Cell], second: Sequence[Cell]) -> list[tuple[str, float, float]]:
    """(worker, first window s, second window s) where the two runs measured a worker's
    talk figures (its largest crashing cell) over windows more than WINDOWS_ALIKE apart:
    the longer one averages more of the kubelet's swings, so a figure may move with it."""
    found = []
    for worker in dict.fromkeys(c.worker for c in first if c.crashing):
        mine, theirs = largest_crashing(first, worker), largest_crashing(second, worker)
        if mine is None or theirs is None:
            continue
        if abs(mine.window_s - theirs.window_s) > WINDOWS_ALIKE * max(
            mine.window_s, theirs.window_s
        ):
            found.append((worker, mine.window_s, theirs.window_s))
    return found


def _busiest_interval(cells: Sequence[Cell]) -> list[Cell]:
    """The cells with their peak read over one sample interval, as runs before
    PEAK_INTERVALS reported it (so a run that kept no series compares like with like)."""
    return [
        c
        if c.requests is None
        else replace(c, requests=replace(c.requests, peak_qps=c.requests.busiest_interval_qps))
        for c in cells
    ]


def talk_figures_apart(
    first: Sequence[Cell],
    second: Sequence[Cell],
    *,
    peak_over_one_interval: bool = False,
    labels: tuple[str, str] = ("first", "second"),
) -> list[FigureApart]:
    """Every talk figure of every worker the two runs share, first run against second.

    ``peak_over_one_interval`` compares the busiest single sample interval
    instead of the peak over PEAK_INTERVALS: for a run that kept no series.
    """
    first_label, second_label = labels
    if peak_over_one_interval:
        first, second = _busiest_interval(first), _busiest_interval(second)
    workers = list(dict.fromkeys(c.worker for c in first if c.crashing))
    found = []
    for worker in workers:
        # Paired by what they are (pod count included): a figure only one run has is unmeasured.
        theirs = {r.what: r for r in talk_ratios(second, worker)}
        for one in talk_ratios(first, worker):
            what = one.what
            if peak_over_one_interval and one.unit == "QPS":
                what += " (busiest sample interval)"
            other = theirs.get(one.what)
            caveats = tuple(f"{first_label}: {why}" for why in one.caveats)
            if other is not None:
                caveats += tuple(f"{second_label}: {why}" for why in other.caveats)
            measured = other.measured if other is not None else None
            found.append(FigureApart(worker, what, one.unit, one.measured, measured, caveats))
    return found
