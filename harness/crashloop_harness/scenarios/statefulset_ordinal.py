"""A StatefulSet held back by one crash-looping ordinal.

From the failure stories behind the talk: "StatefulSet will not create pods
with higher ordinal if CrashLoop of previous". An OrderedReady StatefulSet of
REPLICAS pods per worker, whose ordinal 1 fails its first ``fail_times``
starts (a transient dependency) and then runs Ready. The controller creates
ordinal 2 only once ordinal 1 is Ready, so the whole set waits out ordinal
1's back-off curve. The headline is the time from ordinal 1's first failure
until the last ordinal is Ready; beside it, how long ordinals 2 and 3 were
held back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final

from crashloop_harness.core.conventions import ROLE_LABEL, RUN_LABEL, WORKER_LABEL
from crashloop_harness.core.errors import HarnessError, first_line
from crashloop_harness.pods import skeleton
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.scenarios import common, observing
from crashloop_harness.scenarios.spans import curve_span, span_metric

NAME: Final = "statefulset-ordinal"
SET_PREFIX: Final = "ordinal"
REPLICAS: Final = 4
FAILING_ORDINAL: Final = 1
# The talk's failure story: a dependency that is not there for the first few
# starts. Five failures reach 80s on the default curve (0+10+20+40+80s).
DEFAULT_FAIL_TIMES: Final = 5
# The smallest K that still shows a curve's shape (0, 10, 20s on the default
# worker): what the end-to-end tests run.
SHORT_FAIL_TIMES: Final = 3
FAIL_RUN_FOR: Final = timedelta(seconds=1)
FAIL_EXIT_CODE: Final = 1
READY_PROBE_PERIOD_S: Final = 1
# Ready after the healthy start: one probe period plus the probe's exec.
READY_SLACK: Final = timedelta(seconds=2)
# Each later ordinal is created once its predecessor is Ready, then
# scheduled, given a sandbox, started and probed Ready: not a back-off, and
# 2-4s on a small node. The headline allows this much for each.
LATER_ORDINAL_START: Final = timedelta(seconds=8)

HEADLINE: Final = common.Headline("all_ready_s", "ordinal 1's first failure to all Ready")


def set_name(worker: str) -> str:
    return f"{SET_PREFIX}-{worker}"


def ordinal_pod(worker: str, ordinal: int) -> str:
    """The pod the StatefulSet controller names for ``ordinal``."""
    return f"{set_name(worker)}-{ordinal}"


def statefulset(worker: str, run_id: str, image: str, fail_times: int) -> dict[str, Any]:
    """REPLICAS ordinals, OrderedReady; only ordinal 1's pod fails, ``fail_times`` times."""
    args = skeleton.workload_args(
        "transient",
        "--fail-times",
        str(fail_times),
        "--fail-host-suffix",
        f"-{FAILING_ORDINAL}",
        "--run-for",
        skeleton.go_duration(FAIL_RUN_FOR),
        "--exit-code",
        str(FAIL_EXIT_CODE),
    )
    container = skeleton.workload_container(skeleton.MAIN_CONTAINER, image, args)
    container["readinessProbe"] = skeleton.ready_probe(READY_PROBE_PERIOD_S)
    pod = skeleton.pod_for_worker(
        name=set_name(worker), worker=worker, run_id=run_id, role=NAME, containers=[container]
    )
    labels = pod["metadata"]["labels"]
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": set_name(worker), "labels": labels},
        "spec": {
            "replicas": REPLICAS,
            "podManagementPolicy": "OrderedReady",
            "serviceName": set_name(worker),
            "selector": {
                "matchLabels": {k: labels[k] for k in (RUN_LABEL, ROLE_LABEL, WORKER_LABEL)}
            },
            "template": {"metadata": {"labels": labels}, "spec": pod["spec"]},
        },
    }


@dataclass(frozen=True)
class StatefulSetOrdinal:
    """The scenario as the run sees it; ``fail_times`` is ordinal 1's K."""

    fail_times: int = DEFAULT_FAIL_TIMES
    name: str = NAME
    headline: common.Headline = HEADLINE
    first_minor: int = 0
    reads_node_files: bool = False
    restarts_kubelets: bool = False
    only_when_named: bool = False

    def __post_init__(self) -> None:
        if self.fail_times < 1:
            raise ValueError(
                f"{NAME}: ordinal {FAILING_ORDINAL} must fail at least once, not {self.fail_times}"
            )

    def manifests(self, worker: str, run_id: str, image: str) -> list[dict[str, Any]]:
        return [statefulset(worker, run_id, image, self.fail_times)]

    def watch(self, run: common.RunView) -> _Watch:
        return _Watch(run, self.fail_times)


@dataclass
class _Watch(common.RunWatch):
    """Until the last ordinal is Ready on every worker; each ordinal's first Ready."""

    fail_times: int
    ready_ns: dict[str, int] = field(default_factory=dict)  # pod -> first Ready probe

    def pending(self) -> list[str]:
        self._note_ready(only_ready=True)
        last = REPLICAS - 1
        return [
            f"{NAME} ordinal {last} Ready on {w}"
            for w in self.run.nodes
            if ordinal_pod(w, last) not in self.ready_ns
        ]

    def collect(self) -> None:
        self._note_ready(only_ready=False)

    def stop(self) -> None:
        """Delete each StatefulSet, keeping its pods: the run reads and ends them."""
        for worker in self.run.nodes:
            try:
                self.run.delete_statefulset(set_name(worker))
            except HarnessError as error:
                self.run.problem(first_line(error))

    def measure(self, on: common.Subject, attempts: Sequence[AttemptRecord]) -> common.WorkerResult:
        return statefulset_ordinal(
            on,
            attempts=attempts,
            fail_times=self.fail_times,
            ready_ns=self.ready_ns,
        )

    def _note_ready(self, *, only_ready: bool) -> None:
        for pod in self.run.pods(NAME):
            if pod.name in self.ready_ns or (only_ready and not pod.ready):
                continue
            ready = observing.first_ready_ns(self.run, pod)
            if ready is not None:
                self.ready_ns[pod.name] = ready


# --- metrics (pure) -----------------------------------------------------------------------


def statefulset_ordinal(
    on: common.Subject,
    *,
    attempts: Sequence[AttemptRecord],
    fail_times: int,
    ready_ns: Mapping[str, int],
) -> common.WorkerResult:
    """Ordinal 1's restarts on the curve, the later ordinals held back, the set's Ready."""
    failing = common.by_attempt(
        observing.attempts_of(
            attempts, ordinal_pod(on.worker, FAILING_ORDINAL), skeleton.MAIN_CONTAINER
        )
    )
    verdict = on.judge(failing, up_to=fail_times)
    metrics = common.restart_metrics("restart", verdict.checks)
    failed = [r for r in failing if r.attempt < fail_times]
    metrics.append(
        common.exactly(
            "failures",
            fail_times,
            measured=sum(r.exit_code not in (None, 0) for r in failed),
            detail=f"ordinal {FAILING_ORDINAL}'s exit codes: {[r.exit_code for r in failed]}",
        )
    )
    others = [o for o in range(REPLICAS) if o != FAILING_ORDINAL]
    restarted = {
        o: max(
            (
                r.attempt
                for r in observing.attempts_of(
                    attempts, ordinal_pod(on.worker, o), skeleton.MAIN_CONTAINER
                )
            ),
            default=0,
        )
        for o in others
    }
    metrics.append(
        common.exactly(
            "other_ordinals_restarts",
            0,
            measured=sum(restarted.values()),
            detail=f"ordinals {others} must never fail: restarts {restarted}",
        )
    )
    first_exit = failing[0].finished_at_ns if failing and failing[0].attempt == 0 else None
    span = curve_span(on.curve, failing, fail_times)
    metrics.extend(
        _held_back(
            on.worker,
            attempts=attempts,
            ready_ns=ready_ns,
            first_exit=first_exit,
            expected=None if isinstance(span, str) else span.expected_s,
        )
    )
    metrics.append(
        span_metric(
            HEADLINE.metric,
            on.curve,
            failing,
            fail_times,
            end_ns=ready_ns.get(ordinal_pod(on.worker, REPLICAS - 1)),
            end=f"ordinal {REPLICAS - 1} Ready",
            slack=READY_SLACK + (REPLICAS - 1 - FAILING_ORDINAL) * LATER_ORDINAL_START,
        )
    )
    return on.result(NAME, metrics, judged=verdict)


def _held_back(
    worker: str,
    *,
    attempts: Sequence[AttemptRecord],
    ready_ns: Mapping[str, int],
    first_exit: int | None,
    expected: float | None,
) -> list[common.Metric]:
    """Each later ordinal's first start after ordinal 1's first failure.

    The model (``expected``) holds it back for ordinal 1's whole crash loop;
    it passes when it started only after its predecessor was Ready
    (OrderedReady kept).
    """
    metrics = []
    for ordinal in range(FAILING_ORDINAL + 1, REPLICAS):
        name = f"held_back_ordinal_{ordinal}_s"
        start = observing.first_start(
            attempts, ordinal_pod(worker, ordinal), skeleton.MAIN_CONTAINER
        )
        previous_ready = ready_ns.get(ordinal_pod(worker, ordinal - 1))
        if first_exit is None or start is None or previous_ready is None:
            missing = (
                f"ordinal {FAILING_ORDINAL}'s first failure"
                if first_exit is None
                else f"ordinal {ordinal}'s start"
                if start is None
                else f"ordinal {ordinal - 1}'s Ready"
            )
            metrics.append(common.unmeasured(name, f"{missing} was not recorded"))
            continue
        metrics.append(
            common.bounded(
                name,
                "s",
                expected=expected,
                measured=common.seconds(start - first_exit),
                lower=common.seconds(previous_ready - first_exit),
                upper=None,
                detail=f"must start after ordinal {ordinal - 1} was Ready (OrderedReady)",
            )
        )
    return metrics
