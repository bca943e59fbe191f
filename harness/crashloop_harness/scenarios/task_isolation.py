"""Task isolation: a container runs one session and exits 0, reset in place.

``restartPolicy: Always`` restarts the session's container in the same pod;
the measured reset latency is the kubelet's back-off after a clean exit,
compared with a fresh pod per session (the baseline a pod-per-task controller
pays), which runs after the in-place window so its pod churn cannot delay the
restarts being judged.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final

from crashloop_harness.core import timeouts
from crashloop_harness.core.errors import HarnessError, first_line
from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.model.durations import to_ns
from crashloop_harness.pods import skeleton
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.scenarios import common, observing
from crashloop_harness.verdict import CLOCK_ROUNDING, RestartCheck

NAME: Final = "task-isolation"
POD_PREFIX: Final = "session"
# One session is a few seconds of work, then exit 0.
SESSION_RUN_FOR: Final = timedelta(seconds=3)
FRESH_ROLE: Final = f"{NAME}-fresh"
# 120s shows the difference: about 24 sessions on a 2s worker, 4 on the default curve.
WINDOW: Final = timedelta(seconds=120)
# Fresh-pod baseline: this many pods in a row per worker, i.e. one fewer
# delete-to-started latencies. It runs after the in-place window, not during
# it: on a small machine pod churn beside the measured pod delays the very
# restarts being judged (a 1s back-off measured at 4.8s while three workers
# replaced pods at once).
FRESH_PODS: Final = 4
# How long one wait on the recorder lasts before the stop flag is read again.
_RECHECK_S: Final = 1.0

HEADLINE: Final = common.Headline("reset_mean_s", "mean in-place reset")


def pod_name(worker: str) -> str:
    return f"{POD_PREFIX}-{worker}"


def _session_args() -> list[str]:
    return skeleton.workload_args(
        "session", "--run-for", skeleton.go_duration(SESSION_RUN_FOR), "--exit-code", "0"
    )


def session_pod(worker: str, run_id: str, image: str) -> dict[str, Any]:
    """A session, exit 0, reset in place by ``restartPolicy: Always``."""
    return skeleton.pod_for_worker(
        name=pod_name(worker),
        worker=worker,
        run_id=run_id,
        role=NAME,
        containers=[skeleton.workload_container(skeleton.MAIN_CONTAINER, image, _session_args())],
    )


def fresh_session_pod(worker: str, run_id: str, image: str, index: int) -> dict[str, Any]:
    """The baseline: the same session in a pod of its own, never restarted.

    A new pod (new UID) is what a pod-per-task controller creates; comparing
    its start with an in-place reset shows what rescheduling costs.
    """
    return skeleton.pod_for_worker(
        name=f"fresh-{worker}-{index}",
        worker=worker,
        run_id=run_id,
        role=FRESH_ROLE,
        containers=[skeleton.workload_container(skeleton.MAIN_CONTAINER, image, _session_args())],
        restart_policy="Never",
    )


def _pods(worker: str, run_id: str, image: str) -> list[dict[str, Any]]:
    return [session_pod(worker, run_id, image)]


@dataclass
class _Watch(common.RunWatch):
    """The in-place window on every worker, then the fresh-pod baseline."""

    fresh_ns: dict[str, list[int]] = field(default_factory=dict)  # worker -> latencies
    _baselines: list[threading.Thread] = field(default_factory=list)

    def pending(self) -> list[str]:
        in_window = observing.windows_pending(
            self.run, NAME, pod_name, skeleton.MAIN_CONTAINER, WINDOW
        )
        if not in_window and not self._baselines:
            self._baselines = [
                threading.Thread(
                    target=self._fresh_pods, args=(worker,), name=f"fresh-{worker}", daemon=True
                )
                for worker in self.run.nodes
            ]
            for thread in self._baselines:
                thread.start()
        return in_window + [f"baseline {t.name}" for t in self._baselines if t.is_alive()]

    def stop(self) -> None:
        for thread in self._baselines:
            thread.join(timeout=timeouts.API_REQUEST)

    def measure(self, on: common.Subject, attempts: Sequence[AttemptRecord]) -> common.WorkerResult:
        return task_isolation(
            on,
            attempts=observing.attempts_of(attempts, pod_name(on.worker), skeleton.MAIN_CONTAINER),
            window=WINDOW,
            session=SESSION_RUN_FOR,
            fresh_pod_ns=self.fresh_ns.get(on.worker, []),
        )

    def _fresh_pods(self, worker: str) -> None:
        """A session per fresh pod, the next created as the last is deleted.

        The latency runs from the delete request (host clock, which the kind
        nodes share) to the new pod's container start (runtime clock).
        """
        run = self.run
        latencies: list[int] = []
        previous: str | None = None
        try:
            for index in range(FRESH_PODS):
                pod = fresh_session_pod(worker, run.run_id, run.image, index)
                name = pod["metadata"]["name"]
                deleted_at = None
                if previous is not None:
                    deleted_at = run.delete_pod(previous)
                run.create_object(pod)
                started = self._wait_attempt(name, finished=False)
                if started is None:
                    return
                if deleted_at is not None:
                    latencies.append(started.started_at_ns - deleted_at)
                if self._wait_attempt(name, finished=True) is None:
                    return
                previous = name
        except HarnessError as error:  # the API refused: the baseline ends, not the run
            run.problem(f"fresh pods on {worker}: {first_line(error)}")
        finally:
            self.fresh_ns[worker] = latencies

    def _wait_attempt(self, pod: str, *, finished: bool) -> AttemptRecord | None:
        """The pod's first attempt once started (or finished); None on timeout or stop."""
        deadline = time.monotonic() + timeouts.FRESH_POD
        while not self.run.stopping.is_set() and time.monotonic() < deadline:
            for record in self.run.attempts():
                if record.pod == pod and (not finished or record.finished_at_ns is not None):
                    return record
            self.run.wait_for_change(timeout=_RECHECK_S)
        return None


# --- metrics (pure) -----------------------------------------------------------------------


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
    on: common.Subject,
    *,
    attempts: Sequence[AttemptRecord],
    window: timedelta,
    session: timedelta,
    fresh_pod_ns: Sequence[int] = (),
) -> common.WorkerResult:
    """Reset latency of each in-place session and the sessions done in ``window``.

    ``attempts`` are the session container's; the window starts when attempt 0
    started and only attempts started in it count. ``fresh_pod_ns`` are the
    baseline's delete-to-started latencies (no model: reported, not judged).
    """
    ordered = common.by_attempt(attempts)
    if not ordered:
        nothing = common.unmeasured("sessions_in_window", "no session was recorded", unit="count")
        return on.result(NAME, metrics=(nothing,))
    window_end = ordered[0].started_at_ns + to_ns(window)
    in_window = [r for r in ordered if r.started_at_ns <= window_end]
    verdict = on.judge(in_window)
    metrics = common.restart_metrics("reset", verdict.checks)
    metrics.append(_mean_reset(verdict.checks))
    metrics.append(_sessions_in_window(on.curve, in_window, window, window_end, session))
    metrics.append(_session_failures(in_window))
    metrics.extend(_fresh_pod_metrics(fresh_pod_ns))
    return on.result(NAME, metrics, judged=verdict)


def _sessions_in_window(
    curve: BackoffCurve,
    in_window: Sequence[AttemptRecord],
    window: timedelta,
    window_end: int,
    session: timedelta,
) -> common.Metric:
    """Sessions done in the window, against the model with the sessions' measured length."""
    runs = [run for r in in_window if (run := common.run_ns(r)) is not None]
    session_model = timedelta(microseconds=statistics.median(runs) / 1_000) if runs else session
    done = [
        r
        for r in in_window
        if r.finished_at_ns is not None and r.finished_at_ns <= window_end and r.exit_code == 0
    ]
    most = sessions_completed(session_model, window, curve.delay_before_restart)
    least = sessions_completed(
        session_model, window, lambda n: curve.upper_tolerance(curve.delay_before_restart(n))
    )
    return common.bounded(
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


def _session_failures(in_window: Sequence[AttemptRecord]) -> common.Metric:
    failed = [r.attempt for r in in_window if r.exit_code not in (None, 0)]
    return common.exactly(
        "session_failures",
        0,
        measured=len(failed),
        detail=f"attempts that exited non-zero: {failed}" if failed else "every session exited 0",
    )


def _mean_reset(checks: Sequence[RestartCheck]) -> common.Metric:
    measured = [c for c in checks if c.measured_s is not None]
    if not measured:
        return common.bounded(
            "reset_mean_s",
            "s",
            expected=None,
            measured=None,
            lower=None,
            upper=None,
            detail="no reset was measured",
        )
    rounding = CLOCK_ROUNDING.total_seconds()
    return common.bounded(
        "reset_mean_s",
        "s",
        expected=statistics.fmean(c.expected_s for c in measured),
        measured=statistics.fmean(c.measured_s for c in measured if c.measured_s is not None),
        lower=statistics.fmean(c.expected_s for c in measured) - rounding,
        upper=statistics.fmean(c.upper_bound_s for c in measured),
        detail=f"mean over {len(measured)} in-place resets",
        restarts=1,  # the mean of single resets
    )


def _fresh_pod_metrics(latencies_ns: Sequence[int]) -> list[common.Metric]:
    """The fresh-pod baseline: measured only; there is no model of scheduling."""
    metrics = [
        common.Metric(
            name=f"fresh_pod_{i}_s",
            unit="s",
            expected=None,
            measured=common.seconds(ns),
            lower=0.0,
            upper=None,
            passed=ns >= 0,
            detail="from the delete request of the previous session's pod to this pod's "
            "container started (runtime clock)",
        )
        for i, ns in enumerate(latencies_ns, start=1)
    ]
    metrics.append(
        common.bounded(
            "fresh_pod_median_s",
            "s",
            expected=None,
            measured=common.seconds(int(statistics.median(latencies_ns))) if latencies_ns else None,
            lower=0.0,
            upper=None,
            detail=f"median of {len(latencies_ns)} delete-and-create cycles"
            if latencies_ns
            else "no fresh pod was measured",
        )
    )
    return metrics


TASK_ISOLATION: Final = common.PodScenario(NAME, HEADLINE, _pods, _Watch)
