"""Per-worker metrics of the three scenarios (pure: records and log text in, metrics out).

Inputs are a worker's :class:`~harness.recording.records.AttemptRecord` list (runtime
nanoseconds), the workload's own logs from the pod's emptyDir, and the
worker's :class:`~harness.model.backoff.BackoffCurve`. Every metric carries the
model's expected value and the accepted range, built with the conformance
check's tolerance: a nominal back-off ``B`` may take from ``B`` to
:func:`~harness.model.backoff.upper_tolerance` ``(B)``; per-restart delays are judged
by :func:`harness.verdict.judge_worker` itself, so a scenario and the
conformance check can never disagree on a restart.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any, Final

from harness.model.backoff import BackoffCurve, upper_tolerance
from harness.recording.records import AttemptRecord
from harness.scenarios import CRITICAL_SIDECAR, FAST_RESTART, TASK_ISOLATION
from harness.verdict import CLOCK_ROUNDING, RestartCheck, judge_worker

_NS_PER_S: Final = 1_000_000_000

# Ready comes from an exec probe run every second: after the healthy attempt
# starts, up to one period passes before a probe sees the marker, plus the
# probe's own exec (~0.1-0.5s on a busy node). 2s covers both.
READY_SLACK: Final = timedelta(seconds=2)

# The app sees its sidecar's downtime through requests every 100ms that time
# out after 1s: a cut is noticed up to one interval (or, if the dying proxy
# hangs, one request timeout) late or early, and the restored proxy needs a
# moment to listen. 1.5s covers the timeout plus the interval and start-up.
ISOLATION_SLACK: Final = timedelta(seconds=1.5)

OOM_REASON: Final = "OOMKilled"
OOM_EXIT_CODE: Final = 137


@dataclass(frozen=True, kw_only=True)
class Metric:
    """One measured quantity of one worker, with what the model expects.

    ``lower``/``upper`` bound what passes (None: unbounded); ``expected`` is
    None for a measurement with no model (the fresh-pod baseline).
    """

    name: str
    unit: str
    expected: float | None
    measured: float | None
    lower: float | None
    upper: float | None
    passed: bool
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, kw_only=True)
class WorkerResult:
    """Every metric of one scenario on one worker."""

    scenario: str
    worker: str
    node: str
    metrics: tuple[Metric, ...]
    notes: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        # A worker that measured nothing proves nothing.
        return bool(self.metrics) and all(m.passed for m in self.metrics)

    @property
    def failures(self) -> list[str]:
        return [self.message(m) for m in self.metrics if not m.passed]

    def message(self, m: Metric) -> str:
        """One line naming the scenario, worker, metric, measured value and bounds."""
        return (
            f"{self.scenario} {self.worker}: {m.name}: measured {_show(m.measured)}, "
            f"expected {_show(m.expected)} in [{_show(m.lower)}, {_show(m.upper)}] "
            f"{m.unit}: {m.detail}"
        )

    def metric(self, name: str) -> Metric:
        for metric in self.metrics:
            if metric.name == name:
                return metric
        raise KeyError(
            f"{self.scenario} {self.worker} has no metric {name!r}; it has "
            f"{', '.join(m.name for m in self.metrics) or 'none'}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "worker": self.worker,
            "node": self.node,
            "passed": self.passed,
            "metrics": [m.to_dict() for m in self.metrics],
            "notes": list(self.notes),
        }


def bounded(
    name: str,
    unit: str,
    *,
    expected: float | None,
    measured: float | None,
    lower: float | None,
    upper: float | None,
    detail: str = "",
) -> Metric:
    """A metric that passes when measured and within [lower, upper]."""
    passed = measured is not None
    if measured is not None and lower is not None:
        passed = passed and measured >= lower
    if measured is not None and upper is not None:
        passed = passed and measured <= upper
    if measured is None and not detail:
        detail = "not measured"
    return Metric(
        name=name,
        unit=unit,
        expected=expected,
        measured=measured,
        lower=lower,
        upper=upper,
        passed=passed,
        detail=detail,
    )


# --- the workload's own logs --------------------------------------------------------------


@dataclass(frozen=True)
class LogEvent:
    """One line of a workload log: ``{"event": ..., "unix_ns": ...}``."""

    event: str
    unix_ns: int


def parse_events(text: str) -> list[LogEvent]:
    """Events of a JSON-lines workload log, in file order.

    A torn last line (the process killed mid-write) is dropped; a bad line
    elsewhere raises ValueError, since the file would then not be ours.
    """
    lines = text.split("\n")
    events: list[LogEvent] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            event, unix_ns = raw["event"], raw["unix_ns"]
            if not isinstance(event, str) or isinstance(unix_ns, bool):
                raise TypeError(f"unexpected value types in {raw!r}")
            events.append(LogEvent(event, int(unix_ns)))
        except (ValueError, KeyError, TypeError) as error:
            if number == len(lines):
                break
            raise ValueError(f"line {number}: not a workload event: {error}") from error
    return events


# --- shared pieces ------------------------------------------------------------------------


def _restart_metrics(prefix: str, checks: Sequence[RestartCheck]) -> list[Metric]:
    """One metric per restart, straight from the conformance verdict."""
    rounding = CLOCK_ROUNDING.total_seconds()
    return [
        Metric(
            name=f"{prefix}_{check.n}_s",
            unit="s",
            expected=check.expected_s,
            measured=check.measured_s,
            lower=check.expected_s - rounding,
            upper=check.upper_bound_s,
            passed=check.passed,
            detail=check.reason,
        )
        for check in checks
    ]


def _unmeasured(name: str, why: str, unit: str = "s") -> Metric:
    return bounded(name, unit, expected=None, measured=None, lower=None, upper=None, detail=why)


def _by_attempt(attempts: Sequence[AttemptRecord]) -> list[AttemptRecord]:
    return sorted(attempts, key=lambda r: r.attempt)


def _run_ns(record: AttemptRecord) -> int | None:
    if record.finished_at_ns is None:
        return None
    return record.finished_at_ns - record.started_at_ns


def _s(ns: int) -> float:
    return ns / _NS_PER_S


def _show(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


# --- task isolation -----------------------------------------------------------------------


def sessions_completed(
    session: timedelta, window: timedelta, delay: Callable[[int], timedelta]
) -> int:
    """How many sessions of length ``session`` finish within ``window``.

    The first session starts at 0; after session k (k >= 1) ends, restart k
    waits ``delay(k)`` before the next one starts.
    """
    if session <= timedelta(0):
        raise ValueError(f"a session must take some time, got {session}")
    elapsed, count = timedelta(0), 0
    while True:
        elapsed += session
        if elapsed > window:
            return count
        count += 1
        elapsed += delay(count)


def task_isolation(
    *,
    worker: str,
    node: str,
    curve: BackoffCurve,
    attempts: Sequence[AttemptRecord],
    window: timedelta,
    session: timedelta,
    fresh_pod_ns: Sequence[int] = (),
) -> WorkerResult:
    """Reset latency of each in-place session and the sessions done in ``window``.

    ``attempts`` are the session container's; the window starts when attempt 0
    started and only attempts started in it count. ``fresh_pod_ns`` are the
    baseline's delete-to-started latencies (no model: reported, not judged).
    """
    ordered = _by_attempt(attempts)
    if not ordered:
        return WorkerResult(
            scenario=TASK_ISOLATION,
            worker=worker,
            node=node,
            metrics=(
                bounded(
                    "sessions_in_window",
                    "count",
                    expected=None,
                    measured=None,
                    lower=None,
                    upper=None,
                    detail="no session was recorded",
                ),
            ),
        )
    window_end = ordered[0].started_at_ns + window // timedelta(microseconds=1) * 1_000
    in_window = [r for r in ordered if r.started_at_ns <= window_end]
    verdict = judge_worker(in_window, curve, worker=worker, node=node)
    metrics = _restart_metrics("reset", verdict.checks)
    metrics.append(_mean_reset(verdict.checks))

    runs = [run for r in in_window if (run := _run_ns(r)) is not None]
    session_model = timedelta(microseconds=statistics.median(runs) / 1_000) if runs else session
    done = [
        r
        for r in in_window
        if r.finished_at_ns is not None and r.finished_at_ns <= window_end and r.exit_code == 0
    ]
    most = sessions_completed(session_model, window, curve.delay_before_restart)
    least = sessions_completed(
        session_model, window, lambda n: upper_tolerance(curve.delay_before_restart(n))
    )
    metrics.append(
        bounded(
            "sessions_in_window",
            "count",
            expected=most,
            measured=len(done),
            lower=least,
            upper=most,
            detail=(
                f"sessions that exited 0 within {window.total_seconds():g}s of the first start; "
                f"model with sessions of {session_model.total_seconds():.3f}s: {most} on the "
                f"nominal curve, {least} at the tolerance's slowest"
            ),
        )
    )
    failed = [r.attempt for r in in_window if r.exit_code not in (None, 0)]
    metrics.append(
        bounded(
            "session_failures",
            "count",
            expected=0,
            measured=len(failed),
            lower=0,
            upper=0,
            detail=f"attempts that exited non-zero: {failed}"
            if failed
            else "every session exited 0",
        )
    )
    metrics.extend(_fresh_pod_metrics(fresh_pod_ns))
    return WorkerResult(
        scenario=TASK_ISOLATION,
        worker=worker,
        node=node,
        metrics=tuple(metrics),
        notes=verdict.notes + verdict.problems,
    )


def _mean_reset(checks: Sequence[RestartCheck]) -> Metric:
    measured = [c for c in checks if c.measured_s is not None]
    if not measured:
        return bounded(
            "reset_mean_s",
            "s",
            expected=None,
            measured=None,
            lower=None,
            upper=None,
            detail="no reset was measured",
        )
    rounding = CLOCK_ROUNDING.total_seconds()
    return bounded(
        "reset_mean_s",
        "s",
        expected=statistics.fmean(c.expected_s for c in measured),
        measured=statistics.fmean(c.measured_s for c in measured if c.measured_s is not None),
        lower=statistics.fmean(c.expected_s for c in measured) - rounding,
        upper=statistics.fmean(c.upper_bound_s for c in measured),
        detail=f"mean over {len(measured)} in-place resets",
    )


def _fresh_pod_metrics(latencies_ns: Sequence[int]) -> list[Metric]:
    """The fresh-pod baseline: measured only; there is no model of scheduling."""
    metrics = [
        Metric(
            name=f"fresh_pod_{i}_s",
            unit="s",
            expected=None,
            measured=_s(ns),
            lower=0.0,
            upper=None,
            passed=ns >= 0,
            detail="from the delete request of the previous session's pod to this pod's "
            "container started (runtime clock)",
        )
        for i, ns in enumerate(latencies_ns, start=1)
    ]
    metrics.append(
        bounded(
            "fresh_pod_median_s",
            "s",
            expected=None,
            measured=_s(int(statistics.median(latencies_ns))) if latencies_ns else None,
            lower=0.0,
            upper=None,
            detail=f"median of {len(latencies_ns)} delete-and-create cycles"
            if latencies_ns
            else "no fresh pod was measured",
        )
    )
    return metrics


# --- fast restart on failure --------------------------------------------------------------


def fast_restart(
    *,
    worker: str,
    node: str,
    curve: BackoffCurve,
    attempts: Sequence[AttemptRecord],
    fail_times: int,
    ready_ns: int | None,
) -> WorkerResult:
    """Time from the first failure to Ready, against the model's prediction.

    The model: restarts 1..N wait their nominal back-offs, and attempts
    1..N-1 work as long as they measurably did before failing again; Ready
    follows the healthy attempt N within :data:`READY_SLACK`.
    """
    ordered = _by_attempt(attempts)
    judged = [r for r in ordered if r.attempt <= fail_times]
    verdict = judge_worker(judged, curve, worker=worker, node=node)
    metrics = _restart_metrics("restart", verdict.checks)

    failing = [r for r in ordered if r.attempt < fail_times]
    failures = [r for r in failing if r.exit_code not in (None, 0)]
    metrics.append(
        bounded(
            "failures",
            "count",
            expected=fail_times,
            measured=len(failures),
            lower=fail_times,
            upper=fail_times,
            detail=f"exit codes of attempts 0..{fail_times - 1}: {[r.exit_code for r in failing]}",
        )
    )
    metrics.append(_time_to_ready(curve, ordered, fail_times, ready_ns))
    later = max((r.attempt for r in ordered), default=0) - fail_times
    metrics.append(
        bounded(
            "restarts_after_healthy",
            "count",
            expected=0,
            measured=max(later, 0),
            lower=0,
            upper=0,
            detail="the healthy attempt must keep running",
        )
    )
    return WorkerResult(
        scenario=FAST_RESTART,
        worker=worker,
        node=node,
        metrics=tuple(metrics),
        notes=verdict.notes + verdict.problems,
    )


def _time_to_ready(
    curve: BackoffCurve, ordered: Sequence[AttemptRecord], fail_times: int, ready_ns: int | None
) -> Metric:
    first = ordered[0] if ordered and ordered[0].attempt == 0 else None
    by_attempt = {r.attempt: r for r in ordered}
    runs = [_run_ns(by_attempt[n]) if n in by_attempt else None for n in range(1, fail_times)]
    known_runs = [run for run in runs if run is not None]
    if first is None or first.finished_at_ns is None:
        return _unmeasured(
            "time_to_ready_s", "the first failure (attempt 0's finish) was not recorded"
        )
    if ready_ns is None:
        return _unmeasured("time_to_ready_s", "no readiness probe succeeded (no ready-probe.log)")
    if len(known_runs) != len(runs):
        return _unmeasured("time_to_ready_s", "a failing attempt's run time was not recorded")
    delays = [curve.delay_before_restart(n) for n in range(1, fail_times + 1)]
    run_s = sum(_s(run) for run in known_runs)
    expected = sum(d.total_seconds() for d in delays) + run_s
    upper = sum(upper_tolerance(d).total_seconds() for d in delays) + run_s
    return bounded(
        "time_to_ready_s",
        "s",
        expected=expected,
        measured=_s(ready_ns - first.finished_at_ns),
        lower=expected - CLOCK_ROUNDING.total_seconds(),
        upper=upper + READY_SLACK.total_seconds(),
        detail=(
            f"back-offs {[d.total_seconds() for d in delays]}s plus {run_s:.3f}s of work in "
            f"attempts 1..{fail_times - 1}; Ready within {READY_SLACK.total_seconds():g}s of the "
            "healthy start"
        ),
    )


# --- critical sidecar ---------------------------------------------------------------------


@dataclass(frozen=True)
class Interval:
    """A span of time in Unix ns; ``end_ns`` None while it lasts."""

    start_ns: int
    end_ns: int | None

    def length_ns(self, until_ns: int | None = None) -> int:
        end = self.end_ns if self.end_ns is not None else until_ns
        return 0 if end is None else max(end - self.start_ns, 0)


def isolation_intervals(events: Sequence[LogEvent]) -> list[Interval]:
    """The app's cut-offs: each "cut" up to the next "restored" (or still open)."""
    intervals: list[Interval] = []
    open_at: int | None = None
    for event in sorted(events, key=lambda e: e.unix_ns):
        if event.event == "cut" and open_at is None:
            open_at = event.unix_ns
        elif event.event == "restored" and open_at is not None:
            intervals.append(Interval(open_at, event.unix_ns))
            open_at = None
    if open_at is not None:
        intervals.append(Interval(open_at, None))
    return intervals


def sidecar_downtimes(attempts: Sequence[AttemptRecord]) -> dict[int, Interval]:
    """Restart n -> from attempt n-1's finish to attempt n's start (open if not restarted)."""
    by_attempt = {r.attempt: r for r in attempts}
    downtimes: dict[int, Interval] = {}
    for n, previous in by_attempt.items():
        if previous.finished_at_ns is None:
            continue
        current = by_attempt.get(n + 1)
        downtimes[n + 1] = Interval(
            previous.finished_at_ns, current.started_at_ns if current else None
        )
    return dict(sorted(downtimes.items()))


def _overlaps(a: Interval, b: Interval, slack_ns: int) -> bool:
    a_end = a.end_ns if a.end_ns is not None else float("inf")
    b_end = b.end_ns if b.end_ns is not None else float("inf")
    return a.start_ns <= b_end + slack_ns and b.start_ns <= a_end + slack_ns


def critical_sidecar(
    *,
    worker: str,
    node: str,
    curve: BackoffCurve,
    sidecar_attempts: Sequence[AttemptRecord],
    app_attempts: Sequence[AttemptRecord],
    app_restart_count: int | None,
    client_events: Sequence[LogEvent],
    window_end_ns: int,
    slack: timedelta = ISOLATION_SLACK,
) -> WorkerResult:
    """Sidecar restarts and OOM kills, the app's isolation, the app's restarts.

    Each complete sidecar restart n (its downtime, from the runtime) is matched
    with the app's cut-offs that overlap it; the isolation it caused is
    expected to be the restart's back-off, within the restart tolerance
    widened by ``slack`` on both sides for the app's request cadence.
    Cut-offs no restart explains are reported on their own.
    """
    sidecar = _by_attempt(sidecar_attempts)
    verdict = judge_worker(sidecar, curve, worker=worker, node=node)
    metrics = _restart_metrics("sidecar_restart", verdict.checks)
    metrics.append(_oom_kills(sidecar))
    metrics.append(_app_restarts(app_attempts, app_restart_count))

    slack_ns = slack // timedelta(microseconds=1) * 1_000
    intervals = isolation_intervals(client_events)
    matched: set[int] = set()
    per_restart: list[Metric] = []
    for n, downtime in sidecar_downtimes(sidecar).items():
        if downtime.end_ns is None:
            continue  # still down when observation ended: no complete isolation to judge
        mine = [
            i
            for i, interval in enumerate(intervals)
            if interval.end_ns is not None
            and i not in matched
            and _overlaps(interval, downtime, slack_ns)
        ]
        matched.update(mine)
        delay = curve.delay_before_restart(n)
        per_restart.append(
            bounded(
                f"isolation_{n}_s",
                "s",
                expected=delay.total_seconds(),
                measured=_s(sum(intervals[i].length_ns() for i in mine)),
                lower=max(delay.total_seconds() - slack.total_seconds(), 0.0),
                upper=upper_tolerance(delay).total_seconds() + slack.total_seconds(),
                detail=f"sidecar down {_s(downtime.length_ns()):.3f}s (runtime); "
                f"{len(mine)} cut-off(s) of the app overlap it",
            )
        )
    metrics.extend(per_restart)
    unexplained = [
        interval
        for i, interval in enumerate(intervals)
        if interval.end_ns is not None
        and i not in matched
        and not any(_overlaps(interval, d, slack_ns) for d in sidecar_downtimes(sidecar).values())
    ]
    metrics.append(
        bounded(
            "unexplained_isolation_s",
            "s",
            expected=0.0,
            measured=_s(sum(i.length_ns() for i in unexplained)),
            lower=0.0,
            upper=slack.total_seconds(),
            detail=f"{len(unexplained)} cut-off(s) no sidecar restart explains",
        )
    )
    connected = [e.unix_ns for e in client_events if e.event == "connected"]
    metrics.extend(_isolation_aggregates(per_restart))
    metrics.append(_isolated_fraction(intervals, min(connected, default=None), window_end_ns))
    notes = list(verdict.notes + verdict.problems)
    if not any(e.event == "connected" for e in client_events):
        notes.append("the app never reached its sidecar (no 'connected' in client.log)")
    return WorkerResult(
        scenario=CRITICAL_SIDECAR,
        worker=worker,
        node=node,
        metrics=tuple(metrics),
        notes=tuple(notes),
    )


def _oom_kills(sidecar: Sequence[AttemptRecord]) -> Metric:
    """Every finished sidecar attempt must be a kill (137); the runtime should say OOMKilled.

    Measured on cgroup v1: now and then an attempt killed at the limit after
    the usual life comes back as reason "Error", exit 137. The runtime labels
    OOMKilled from the cgroup's OOM event, which can lose the race with the
    exit (unverified reading). Such attempts are named in the detail, not
    failed; any other exit code fails, and so does a run without one label.
    """
    finished = [r for r in sidecar if r.finished_at_ns is not None]
    oom = [r for r in finished if r.reason == OOM_REASON and r.exit_code == OOM_EXIT_CODE]
    unlabelled = [r.attempt for r in finished if r.exit_code == OOM_EXIT_CODE and r not in oom]
    others = [(r.attempt, r.reason, r.exit_code) for r in finished if r.exit_code != OOM_EXIT_CODE]
    if not finished:
        detail = "the sidecar was never killed"
    elif others:
        detail = f"finished attempts not killed with {OOM_EXIT_CODE}: {others}"
    else:
        detail = (
            f"every finished sidecar attempt exited {OOM_EXIT_CODE}, {len(oom)} as {OOM_REASON}"
        )
    if unlabelled:
        detail += f"; attempts {unlabelled} exited {OOM_EXIT_CODE} without the {OOM_REASON} label"
    return Metric(
        name="sidecar_oom_kills",
        unit="count",
        expected=len(finished),
        measured=len(oom),
        lower=1 if finished else None,
        upper=len(finished),
        # No kill at all means the scenario never happened.
        passed=bool(oom) and not others,
        detail=detail,
    )


def _app_restarts(app: Sequence[AttemptRecord], api_restart_count: int | None) -> Metric:
    recorded = max((r.attempt for r in app), default=None)
    finished = sum(r.finished_at_ns is not None for r in app)
    seen = [v for v in (recorded, api_restart_count) if v is not None]
    measured = max([*seen, finished]) if seen else None
    return bounded(
        "app_restart_count",
        "count",
        expected=0,
        measured=measured,
        lower=0,
        upper=0,
        detail=f"runtime attempts up to {recorded}, {finished} finished; "
        f"pod status restartCount {api_restart_count}",
    )


def _isolation_aggregates(per_restart: Sequence[Metric]) -> list[Metric]:
    def total(values: list[float | None]) -> float:
        return sum(v for v in values if v is not None)

    judged = [m for m in per_restart if m.measured is not None]
    if not judged:
        empty = "no complete sidecar restart to judge"
        return [
            bounded(name, "s", expected=None, measured=None, lower=None, upper=None, detail=empty)
            for name in ("isolation_total_s", "isolation_longest_s")
        ]
    longest = max(judged, key=lambda m: m.measured or 0.0)
    expected_longest = max(judged, key=lambda m: m.expected or 0.0)
    return [
        bounded(
            "isolation_total_s",
            "s",
            expected=total([m.expected for m in judged]),
            measured=total([m.measured for m in judged]),
            lower=total([m.lower for m in judged]),
            upper=total([m.upper for m in judged]),
            detail=f"over {len(judged)} complete sidecar restarts",
        ),
        bounded(
            "isolation_longest_s",
            "s",
            expected=expected_longest.expected,
            measured=longest.measured,
            lower=expected_longest.lower,
            upper=expected_longest.upper,
            detail=f"longest at {longest.name}; the model's longest is the biggest back-off",
        ),
    ]


def _isolated_fraction(
    intervals: Sequence[Interval], start_ns: int | None, window_end_ns: int
) -> Metric:
    """Share of the observation the app was cut off, the open cut-off included.

    No model: it depends on how long the proxy lives. It is what "how long is
    the app isolated" means to a user, and what orders the workers.
    """
    span = window_end_ns - start_ns if start_ns is not None else 0
    if start_ns is None or span <= 0:
        return bounded(
            "isolated_fraction",
            "ratio",
            expected=None,
            measured=None,
            lower=0.0,
            upper=1.0,
            detail="the app never reached its sidecar before the end of observation",
        )
    cut = sum(
        max(min(i.end_ns or window_end_ns, window_end_ns) - max(i.start_ns, start_ns), 0)
        for i in intervals
    )
    return bounded(
        "isolated_fraction",
        "ratio",
        expected=None,
        measured=cut / span,
        lower=0.0,
        upper=1.0,
        detail="share of the time from the app's first answer to the end of observation "
        "that it was cut off",
    )
