"""Liveness-probe kill loop: a container that starts fine but fails its liveness probe.

The kubelet kills it over and over, never because it crashed. Does the
back-off curve apply to probe kills exactly as to crashes? Each restart after
a kill is measured against the crash curve, and the kills are confirmed;
how far the restarts are from the crash curve is the finding, not a failure.

Read in source (k8s v1.35.8, pkg/kubelet/kuberuntime/kuberuntime_manager.go):
``computePodActions`` puts a container that failed its liveness probe in
both ``ContainersToKill`` and ``ContainersToStart`` (:1298-1320), so one
``SyncPod`` kills and starts it again; ``doBackOff`` (:1638, :1855) checks the
back-off against the newest *exited* status of the pod status read before
the kill, which is the attempt before the one just killed. A kill therefore
restarts at once unless that older exit is still inside the current level.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from crashloop_harness.pods import skeleton
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.scenarios import common, observing
from crashloop_harness.scenarios.spans import span_metric
from crashloop_harness.substrate.workloadimage import BINARY
from crashloop_harness.verdict import WorkerVerdict

NAME: Final = "liveness-kill"
POD_PREFIX: Final = "liveness"
# Restarts judged per worker: four reach 40s on the default curve (0, 10, 20,
# 40s) and the 2s cap on the fast one, and keep the default worker near 70s.
KILLS: Final = 4
# A probe every second that fails once is a kill: the loop is as tight as the
# API allows, so each attempt lives about one period.
PROBE_PERIOD_S: Final = 1
# The probe looks for a marker nothing ever writes.
NEVER_READY: Final = f"{skeleton.RECORD_DIR}/never-ready"
# The sleeping workload never exits by itself: it stops cleanly (0) on the
# kubelet's SIGTERM; 137 if the grace period ran out first, 143 for a
# process that does not handle SIGTERM.
KILL_EXIT_CODES: Final = frozenset({0, 137, 143})

HEADLINE: Final = common.Headline("kill_loop_s", f"first kill to restart {KILLS}")


def pod_name(worker: str) -> str:
    return f"{POD_PREFIX}-{worker}"


def liveness_pod(worker: str, run_id: str, image: str) -> dict[str, Any]:
    """A healthy sleeper whose liveness probe always fails."""
    container = skeleton.workload_container(
        skeleton.MAIN_CONTAINER, image, skeleton.workload_args("sleep")
    )
    # The workload binary as an exec probe (the image has no shell): it exits
    # 1 while its ready marker is missing, which is always.
    container["livenessProbe"] = {
        "exec": {"command": [BINARY, "--mode", "ready-check", "--ready-file", NEVER_READY]},
        "periodSeconds": PROBE_PERIOD_S,
        "timeoutSeconds": 1,
        "failureThreshold": 1,
    }
    return skeleton.pod_for_worker(
        name=pod_name(worker), worker=worker, run_id=run_id, role=NAME, containers=[container]
    )


def _pods(worker: str, run_id: str, image: str) -> list[dict[str, Any]]:
    return [liveness_pod(worker, run_id, image)]


@dataclass
class _Watch(common.RunWatch):
    """Until restart KILLS has started on every worker."""

    def pending(self) -> list[str]:
        return observing.restarts_pending(self.run, NAME, pod_name, KILLS)

    def measure(self, on: common.Subject, attempts: Sequence[AttemptRecord]) -> common.WorkerResult:
        return liveness_kill(
            on,
            attempts=observing.attempts_of(attempts, pod_name(on.worker), skeleton.MAIN_CONTAINER),
        )


# --- metrics (pure) -----------------------------------------------------------------------


def after_kill_metrics(verdict: WorkerVerdict) -> list[common.Metric]:
    """Each restart after a kill beside the crash curve's delay for it, reported and judged
    by nothing: a kill's restart is judged against the attempt before it, not the curve
    (the liveness-kill finding), so whether the curve would pass is only said."""
    return [
        common.bounded(
            f"after_kill_{check.n}_s",
            "s",
            expected=check.expected_s,
            measured=check.measured_s,
            lower=None,
            upper=None,
            detail=(
                "the crash curve's delay "
                + ("would pass" if check.passed else f"would not pass: {check.reason}")
            ),
        )
        for check in verdict.checks
    ]


def liveness_kill(on: common.Subject, *, attempts: Sequence[AttemptRecord]) -> common.WorkerResult:
    """Restarts 1..KILLS after probe kills, each beside the crash curve's delay.

    Passes when every kill and restart was seen; the delays are measured
    against the crash curve and reported (how many of them it would pass).
    """
    ordered = common.by_attempt(attempts)
    verdict = on.judge(ordered, up_to=KILLS, confirm_levels=False)
    metrics = after_kill_metrics(verdict)
    killed = [r for r in ordered if r.attempt < KILLS]
    metrics.append(
        common.exactly(
            "probe_kills",
            KILLS,
            measured=sum(r.exit_code in KILL_EXIT_CODES for r in killed),
            detail=(
                f"attempts 0..{KILLS - 1} must end by the kubelet's kill "
                f"({sorted(KILL_EXIT_CODES)}): exit codes {[r.exit_code for r in killed]}, "
                f"reasons {sorted({r.reason for r in killed})}"
            ),
        )
    )
    seen = len(verdict.checks) == KILLS and all(c.measured_s is not None for c in verdict.checks)
    metrics.append(
        common.bounded(
            "restarts_on_crash_curve",
            "count",
            expected=KILLS,
            measured=sum(c.passed for c in verdict.checks) if seen else None,
            lower=None,
            upper=None,
            detail=f"of the {KILLS} restarts after a kill, how many the crash curve would pass",
        )
    )
    restart_by = {r.attempt: r.started_at_ns for r in ordered}
    span = span_metric(
        HEADLINE.metric,
        on.curve,
        ordered,
        KILLS,
        end_ns=restart_by.get(KILLS),
        end=f"the start of restart {KILLS}",
    )
    # The crash curve's span for comparison, not a bound the kills must keep.
    metrics.append(
        dataclasses.replace(span, lower=None, upper=None, passed=span.measured is not None)
    )
    return on.result(NAME, metrics, judged=verdict)


LIVENESS_KILL: Final = common.PodScenario(NAME, HEADLINE, _pods, _Watch)
