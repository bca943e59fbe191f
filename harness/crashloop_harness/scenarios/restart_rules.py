"""Per-container restart rules (KEP-5307, ``ContainerRestartRules``, beta from 1.35).

A pod with ``restartPolicy: Never`` whose container is restarted only on a
retriable exit code: its ``restartPolicyRules`` restart it on exit 42, and
any other exit ends the pod. The workload exits 42 RETRIES times, then 1.
Read in source, a rule's restart is started through the same back-off as
any other (``startWithInitState`` calls ``doBackOff``), so the retries wait
the worker's curve; the headline is the time from the first retriable exit
to the start of the last retry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final

from crashloop_harness.pods import skeleton
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.scenarios import common, observing
from crashloop_harness.scenarios.spans import span_metric

NAME: Final = "restart-rules"
POD_PREFIX: Final = "rules"
RETRIABLE_EXIT_CODE: Final = 42
FINAL_EXIT_CODE: Final = 1
# Four retries reach 40s on the default curve (0, 10, 20, 40s) and the 2s
# cap on the fast one.
RETRIES: Final = 4
# A little work per attempt, so the span's work part is measured, not zero.
RUN_FOR: Final = timedelta(milliseconds=500)
FAILED_PHASE: Final = "Failed"

HEADLINE: Final = common.Headline(
    "retries_s", f"first exit {RETRIABLE_EXIT_CODE} to retry {RETRIES}"
)


def pod_name(worker: str) -> str:
    return f"{POD_PREFIX}-{worker}"


def rules_pod(worker: str, run_id: str, image: str) -> dict[str, Any]:
    """``restartPolicy: Never``, except a rule that restarts the container on exit 42."""
    args = skeleton.workload_args(
        "retriable",
        "--fail-times",
        str(RETRIES),
        "--exit-code",
        str(RETRIABLE_EXIT_CODE),
        "--final-exit-code",
        str(FINAL_EXIT_CODE),
        "--run-for",
        skeleton.go_duration(RUN_FOR),
    )
    container = skeleton.workload_container(skeleton.MAIN_CONTAINER, image, args)
    # A container-level restartPolicy is what restartPolicyRules refine.
    container["restartPolicy"] = "Never"
    container["restartPolicyRules"] = [
        {"action": "Restart", "exitCodes": {"operator": "In", "values": [RETRIABLE_EXIT_CODE]}}
    ]
    return skeleton.pod_for_worker(
        name=pod_name(worker),
        worker=worker,
        run_id=run_id,
        role=NAME,
        containers=[container],
        restart_policy="Never",
    )


def _pods(worker: str, run_id: str, image: str) -> list[dict[str, Any]]:
    return [rules_pod(worker, run_id, image)]


@dataclass
class _Watch(common.RunWatch):
    """Until every worker's pod has ended (phase Failed) after its final exit."""

    phases: dict[str, str] = field(default_factory=dict)  # worker -> last phase seen

    def pending(self) -> list[str]:
        self._note_phases()
        return [
            f"{NAME} pod ended on {w}" for w in self.run.nodes if self.phases.get(w) != FAILED_PHASE
        ]

    def collect(self) -> None:
        self._note_phases()

    def measure(self, on: common.Subject, attempts: Sequence[AttemptRecord]) -> common.WorkerResult:
        return restart_rules(
            on,
            attempts=observing.attempts_of(attempts, pod_name(on.worker), skeleton.MAIN_CONTAINER),
            phase=self.phases.get(on.worker),
        )

    def _note_phases(self) -> None:
        for pod in self.run.pods(NAME):
            if pod.phase:
                self.phases[pod.worker] = pod.phase


# --- metrics (pure) -----------------------------------------------------------------------


def restart_rules(
    on: common.Subject,
    *,
    attempts: Sequence[AttemptRecord],
    phase: str | None,
) -> common.WorkerResult:
    """The retries on the curve, then the final exit ending the pod."""
    ordered = common.by_attempt(attempts)
    verdict = on.judge(ordered, up_to=RETRIES)
    metrics = common.restart_metrics("retry", verdict.checks)
    retried = [r for r in ordered if r.attempt < RETRIES]
    metrics.append(
        common.exactly(
            "retriable_exits",
            RETRIES,
            measured=sum(r.exit_code == RETRIABLE_EXIT_CODE for r in retried),
            detail=f"exit codes of attempts 0..{RETRIES - 1}: {[r.exit_code for r in retried]}",
        )
    )
    final = next((r for r in ordered if r.attempt == RETRIES), None)
    metrics.append(
        common.exactly(
            "final_exit_code",
            FINAL_EXIT_CODE,
            measured=None if final is None else final.exit_code,
            unit="code",
            detail=f"attempt {RETRIES} must exit {FINAL_EXIT_CODE}, which no rule retries",
        )
    )
    later = max((r.attempt for r in ordered), default=0) - RETRIES
    metrics.append(
        common.exactly(
            "restarts_after_final_exit",
            0,
            measured=max(later, 0),
            detail=f"the pod's restartPolicy Never must hold for exit {FINAL_EXIT_CODE}; "
            f"its phase was {phase or 'not seen'}",
        )
    )
    metrics.append(
        common.exactly(
            "pod_ended",
            1,
            measured=1 if phase == FAILED_PHASE else 0,
            detail=f"the pod's phase must turn {FAILED_PHASE}; it was {phase or 'not seen'}",
        )
    )
    starts = {r.attempt: r.started_at_ns for r in ordered}
    metrics.append(
        span_metric(
            HEADLINE.metric,
            on.curve,
            ordered,
            RETRIES,
            end_ns=starts.get(RETRIES),
            end=f"the start of retry {RETRIES}",
        )
    )
    return on.result(NAME, metrics, judged=verdict)


# KEP-5307's rules are beta, on by default, from 1.35.
RESTART_RULES: Final = common.PodScenario(NAME, HEADLINE, _pods, _Watch, first_minor=35)
