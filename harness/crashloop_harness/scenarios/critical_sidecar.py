"""Critical sidecar: a proxy sidecar OOMKilled over and over, its app cut off meanwhile.

The proxy is a restartable init container (a sidecar) that leaks until its
own memory limit kills it; the app asks it ten times a second and never
restarts. The headline is how long the app was cut off in total, which the
sidecar's back-off curve decides.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final

from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.model.durations import to_ns
from crashloop_harness.pods import skeleton
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.scenarios import common, observing
from crashloop_harness.scenarios.eventlog import LogEvent, parse_events

NAME: Final = "critical-sidecar"
POD_PREFIX: Final = "sidecar"
# A proxy on localhost, OOMKilled by its own memory limit after some seconds
# of service, and an app asking it ten times a second.
PROXY_CONTAINER: Final = "proxy"
PROXY_ADDRESS: Final = "127.0.0.1:8080"
PROXY_MEMORY_LIMIT: Final = "32Mi"
# 2 MiB every 0.5s: the Go runtime plus about 14 chunks reach 32Mi in ~7s.
PROXY_GROW_MB: Final = 2
PROXY_GROW_EVERY: Final = timedelta(milliseconds=500)
CLIENT_INTERVAL: Final = timedelta(milliseconds=100)
CLIENT_LOG: Final = "client.log"
_PROXY_RESOURCES: Final = {
    "requests": {"cpu": "10m", "memory": "16Mi"},
    "limits": {"cpu": "100m", "memory": PROXY_MEMORY_LIMIT},
}
# 150s lets the default curve's 40s and the reduced curve's 32s sidecar
# restarts complete with a ~7s proxy life in between.
WINDOW: Final = timedelta(seconds=150)

# The app sees its sidecar's downtime through requests every 100ms that time
# out after 1s: a cut is noticed up to one interval (or, if the dying proxy
# hangs, one request timeout) late or early, and the restored proxy needs a
# moment to listen. 1.5s covers the timeout plus the interval and start-up.
ISOLATION_SLACK: Final = timedelta(seconds=1.5)

OOM_REASON: Final = "OOMKilled"
OOM_EXIT_CODE: Final = 137

HEADLINE: Final = common.Headline("isolation_total_s", "app cut off in total")


def pod_name(worker: str) -> str:
    return f"{POD_PREFIX}-{worker}"


def sidecar_pod(worker: str, run_id: str, image: str) -> dict[str, Any]:
    """A leaking proxy (restartable init container) and its client app."""
    proxy = skeleton.workload_container(
        PROXY_CONTAINER,
        image,
        skeleton.workload_args(
            "proxy",
            "--listen",
            PROXY_ADDRESS,
            "--grow-mb",
            str(PROXY_GROW_MB),
            "--grow-every",
            skeleton.go_duration(PROXY_GROW_EVERY),
        ),
        resources=_PROXY_RESOURCES,
    )
    # restartPolicy on an init container makes it a sidecar: it runs beside
    # the app for the pod's life and is restarted (with back-off) on its own.
    proxy["restartPolicy"] = "Always"
    app = skeleton.workload_container(
        skeleton.MAIN_CONTAINER,
        image,
        skeleton.workload_args(
            "client", "--target", PROXY_ADDRESS, "--interval", skeleton.go_duration(CLIENT_INTERVAL)
        ),
    )
    return skeleton.pod_for_worker(
        name=pod_name(worker),
        worker=worker,
        run_id=run_id,
        role=NAME,
        containers=[app],
        init_containers=[proxy],
    )


def _pods(worker: str, run_id: str, image: str) -> list[dict[str, Any]]:
    return [sidecar_pod(worker, run_id, image)]


@dataclass
class _Watch(common.RunWatch):
    """The window on every worker; then the app's own log and restart count."""

    client_logs: dict[str, str] = field(default_factory=dict)  # worker -> client.log
    app_restarts: dict[str, int] = field(default_factory=dict)  # worker -> restartCount

    def pending(self) -> list[str]:
        return observing.windows_pending(self.run, NAME, pod_name, skeleton.MAIN_CONTAINER, WINDOW)

    def collect(self) -> None:
        for pod in self.run.pods(NAME):
            self.client_logs[pod.worker] = self.run.read_pod_file(pod, CLIENT_LOG) or ""
            if skeleton.MAIN_CONTAINER in pod.restart_counts:
                self.app_restarts[pod.worker] = pod.restart_counts[skeleton.MAIN_CONTAINER]

    def measure(self, on: common.Subject, attempts: Sequence[AttemptRecord]) -> common.WorkerResult:
        pod = pod_name(on.worker)
        start = observing.first_start(attempts, pod, skeleton.MAIN_CONTAINER)
        try:
            events = parse_events(self.client_logs.get(on.worker, ""))
        except ValueError as error:
            self.run.problem(f"{on.worker} {CLIENT_LOG}: {error}")
            events = []
        return critical_sidecar(
            on,
            sidecar_attempts=observing.attempts_of(attempts, pod, PROXY_CONTAINER),
            app_attempts=observing.attempts_of(attempts, pod, skeleton.MAIN_CONTAINER),
            app_restart_count=self.app_restarts.get(on.worker),
            client_events=events,
            window_end_ns=start + to_ns(WINDOW) if start is not None else time.time_ns(),
        )


# --- metrics (pure) -----------------------------------------------------------------------


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
    numbered = {r.attempt: r for r in attempts}
    downtimes: dict[int, Interval] = {}
    for n, previous in numbered.items():
        if previous.finished_at_ns is None:
            continue
        current = numbered.get(n + 1)
        downtimes[n + 1] = Interval(
            previous.finished_at_ns, current.started_at_ns if current else None
        )
    return dict(sorted(downtimes.items()))


def _overlaps(a: Interval, b: Interval, slack_ns: int) -> bool:
    a_end = a.end_ns if a.end_ns is not None else float("inf")
    b_end = b.end_ns if b.end_ns is not None else float("inf")
    return a.start_ns <= b_end + slack_ns and b.start_ns <= a_end + slack_ns


def critical_sidecar(
    on: common.Subject,
    *,
    sidecar_attempts: Sequence[AttemptRecord],
    app_attempts: Sequence[AttemptRecord],
    app_restart_count: int | None,
    client_events: Sequence[LogEvent],
    window_end_ns: int,
    slack: timedelta = ISOLATION_SLACK,
) -> common.WorkerResult:
    """Sidecar restarts and OOM kills, the app's isolation, the app's restarts.

    Each complete sidecar restart n (its downtime, from the runtime) is matched
    with the app's cut-offs that overlap it; the isolation it caused is
    expected to be the restart's back-off, within the restart tolerance
    widened by ``slack`` on both sides for the app's request cadence.
    Cut-offs no restart explains are reported on their own.
    """
    sidecar = common.by_attempt(sidecar_attempts)
    verdict = on.judge(sidecar)
    metrics = common.restart_metrics("sidecar_restart", verdict.checks)
    metrics.append(_oom_kills(sidecar))
    metrics.append(_app_restarts(app_attempts, app_restart_count))

    intervals = isolation_intervals(client_events)
    per_restart, unexplained = _isolation_metrics(on.curve, sidecar, intervals, slack)
    metrics.extend(per_restart)
    metrics.append(unexplained)
    connected = [e.unix_ns for e in client_events if e.event == "connected"]
    metrics.extend(_isolation_aggregates(per_restart))
    metrics.append(_isolated_fraction(intervals, min(connected, default=None), window_end_ns))
    unreached = (
        ()
        if any(e.event == "connected" for e in client_events)
        else ("the app never reached its sidecar (no 'connected' in client.log)",)
    )
    return on.result(NAME, metrics, unreached, judged=verdict)


def _isolation_metrics(
    curve: BackoffCurve,
    sidecar: Sequence[AttemptRecord],
    intervals: Sequence[Interval],
    slack: timedelta,
) -> tuple[list[common.Metric], common.Metric]:
    """The app's cut-offs matched to each complete sidecar restart, and those left over."""
    slack_ns = to_ns(slack)
    downtimes = sidecar_downtimes(sidecar)
    matched: set[int] = set()
    per_restart: list[common.Metric] = []
    for n, downtime in downtimes.items():
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
            common.bounded(
                f"isolation_{n}_s",
                "s",
                expected=delay.total_seconds(),
                measured=common.seconds(sum(intervals[i].length_ns() for i in mine)),
                lower=max(delay.total_seconds() - slack.total_seconds(), 0.0),
                upper=curve.upper_tolerance(delay).total_seconds() + slack.total_seconds(),
                detail=f"sidecar down {common.seconds(downtime.length_ns()):.3f}s (runtime); "
                f"{len(mine)} cut-off(s) of the app overlap it",
            )
        )
    unexplained = [
        interval
        for i, interval in enumerate(intervals)
        if interval.end_ns is not None
        and i not in matched
        and not any(_overlaps(interval, d, slack_ns) for d in downtimes.values())
    ]
    leftover = common.bounded(
        "unexplained_isolation_s",
        "s",
        expected=0.0,
        measured=common.seconds(sum(i.length_ns() for i in unexplained)),
        lower=0.0,
        upper=slack.total_seconds(),
        detail=f"{len(unexplained)} cut-off(s) no sidecar restart explains",
    )
    return per_restart, leftover


def _oom_kills(sidecar: Sequence[AttemptRecord]) -> common.Metric:
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
    return common.Metric(
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


def _app_restarts(app: Sequence[AttemptRecord], api_restart_count: int | None) -> common.Metric:
    recorded = max((r.attempt for r in app), default=None)
    finished = sum(r.finished_at_ns is not None for r in app)
    seen = [v for v in (recorded, api_restart_count) if v is not None]
    measured = max([*seen, finished]) if seen else None
    return common.exactly(
        "app_restart_count",
        0,
        measured=measured,
        detail=f"runtime attempts up to {recorded}, {finished} finished; "
        f"pod status restartCount {api_restart_count}",
    )


def _isolation_aggregates(per_restart: Sequence[common.Metric]) -> list[common.Metric]:
    def total(values: list[float | None]) -> float:
        return sum(v for v in values if v is not None)

    judged = [m for m in per_restart if m.measured is not None]
    if not judged:
        empty = "no complete sidecar restart to judge"
        return [
            common.bounded(
                name, "s", expected=None, measured=None, lower=None, upper=None, detail=empty
            )
            for name in ("isolation_total_s", "isolation_longest_s")
        ]
    longest = max(judged, key=lambda m: m.measured or 0.0)
    expected_longest = max(judged, key=lambda m: m.expected or 0.0)
    return [
        common.bounded(
            "isolation_total_s",
            "s",
            expected=total([m.expected for m in judged]),
            measured=total([m.measured for m in judged]),
            lower=total([m.lower for m in judged]),
            upper=total([m.upper for m in judged]),
            detail=f"over {len(judged)} complete sidecar restarts",
            restarts=len(judged),
        ),
        common.bounded(
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
) -> common.Metric:
    """Share of the observation the app was cut off, the open cut-off included.

    No model: it depends on how long the proxy lives. It is what "how long is
    the app isolated" means to a user, and what orders the workers.
    """
    span = window_end_ns - start_ns if start_ns is not None else 0
    if start_ns is None or span <= 0:
        return common.bounded(
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
    return common.bounded(
        "isolated_fraction",
        "ratio",
        expected=None,
        measured=cut / span,
        lower=0.0,
        upper=1.0,
        detail="share of the time from the app's first answer to the end of observation "
        "that it was cut off",
    )


CRITICAL_SIDECAR: Final = common.PodScenario(NAME, HEADLINE, _pods, _Watch)
