"""Fast restart on failure: a container fails a few times, then turns Ready.

A transient dependency (FAIL_TIMES failures, each after a short piece of
work) and then health: the headline is the time from the first failure to
Ready, which the worker's back-off curve decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final

from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.pods import skeleton
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.scenarios import common, observing
from crashloop_harness.scenarios.spans import span_metric

NAME: Final = "fast-restart"
POD_PREFIX: Final = "transient"
# Fail this many times, each after a short piece of work, then recover.
FAIL_TIMES: Final = 3
TRANSIENT_RUN_FOR: Final = timedelta(seconds=1)
TRANSIENT_EXIT_CODE: Final = 1
# A readiness probe every second (the minimum): the probe's period is the
# resolution of "Ready", and the metric's slack allows for it.
READY_PROBE_PERIOD_S: Final = 1
# Ready comes from an exec probe run every second: after the healthy attempt
# starts, up to one period passes before a probe sees the marker, plus the
# probe's own exec (~0.1-0.5s on a busy node). 2s covers both.
READY_SLACK: Final = timedelta(seconds=2)

HEADLINE: Final = common.Headline("time_to_ready_s", "first failure to Ready")


def pod_name(worker: str) -> str:
    return f"{POD_PREFIX}-{worker}"


def transient_pod(worker: str, run_id: str, image: str) -> dict[str, Any]:
    """FAIL_TIMES transient failures, then healthy and Ready."""
    args = skeleton.workload_args(
        "transient",
        "--fail-times",
        str(FAIL_TIMES),
        "--run-for",
        skeleton.go_duration(TRANSIENT_RUN_FOR),
        "--exit-code",
        str(TRANSIENT_EXIT_CODE),
    )
    container = skeleton.workload_container(skeleton.MAIN_CONTAINER, image, args)
    container["readinessProbe"] = skeleton.ready_probe(READY_PROBE_PERIOD_S)
    return skeleton.pod_for_worker(
        name=pod_name(worker),
        worker=worker,
        run_id=run_id,
        role=NAME,
        containers=[container],
    )


def _pods(worker: str, run_id: str, image: str) -> list[dict[str, Any]]:
    return [transient_pod(worker, run_id, image)]


@dataclass
class _Watch(common.RunWatch):
    """Until every worker's pod turned Ready: the first probe's own time."""

    ready_ns: dict[str, int] = field(default_factory=dict)  # worker -> first Ready probe

    def pending(self) -> list[str]:
        self._note_ready(only_ready=True)
        return [f"{NAME} Ready on {w}" for w in self.run.nodes if w not in self.ready_ns]

    def collect(self) -> None:
        # A pod that turned Ready after the last look still has its probe log.
        self._note_ready(only_ready=False)

    def measure(self, on: common.Subject, attempts: Sequence[AttemptRecord]) -> common.WorkerResult:
        return fast_restart(
            on,
            attempts=observing.attempts_of(attempts, pod_name(on.worker), skeleton.MAIN_CONTAINER),
            fail_times=FAIL_TIMES,
            ready_ns=self.ready_ns.get(on.worker),
        )

    def _note_ready(self, *, only_ready: bool) -> None:
        for pod in self.run.pods(NAME):
            if pod.worker in self.ready_ns or (only_ready and not pod.ready):
                continue
            self._read_probe_log(pod)

    def _read_probe_log(self, pod: common.LivePod) -> None:
        ready = observing.first_ready_ns(self.run, pod)
        if ready is not None:
            self.ready_ns[pod.worker] = ready


# --- metrics (pure) -----------------------------------------------------------------------


def fast_restart(
    on: common.Subject,
    *,
    attempts: Sequence[AttemptRecord],
    fail_times: int,
    ready_ns: int | None,
) -> common.WorkerResult:
    """Time from the first failure to Ready, against the model's prediction.

    The model: restarts 1..N wait their nominal back-offs, and attempts
    1..N-1 work as long as they measurably did before failing again; Ready
    follows the healthy attempt N within :data:`READY_SLACK`.
    """
    ordered = common.by_attempt(attempts)
    verdict = on.judge(ordered, up_to=fail_times)
    metrics = common.restart_metrics("restart", verdict.checks)

    failing = [r for r in ordered if r.attempt < fail_times]
    failures = [r for r in failing if r.exit_code not in (None, 0)]
    metrics.append(
        common.exactly(
            "failures",
            fail_times,
            measured=len(failures),
            detail=f"exit codes of attempts 0..{fail_times - 1}: {[r.exit_code for r in failing]}",
        )
    )
    metrics.append(_time_to_ready(on.curve, ordered, fail_times, ready_ns))
    later = max((r.attempt for r in ordered), default=0) - fail_times
    metrics.append(
        common.exactly(
            "restarts_after_healthy",
            0,
            measured=max(later, 0),
            detail="the healthy attempt must keep running",
        )
    )
    return on.result(NAME, metrics, judged=verdict)


def _time_to_ready(
    curve: BackoffCurve, ordered: Sequence[AttemptRecord], fail_times: int, ready_ns: int | None
) -> common.Metric:
    return span_metric(
        "time_to_ready_s",
        curve,
        ordered,
        fail_times,
        end_ns=ready_ns,
        end="Ready (a readiness probe's success in ready-probe.log)",
        slack=READY_SLACK,
    )


FAST_RESTART: Final = common.PodScenario(NAME, HEADLINE, _pods, _Watch)
