"""RestartAllContainers (KEP-5532): one container's exit restarts the whole pod in place.

A container crashes TRIGGER_AFTER times (ordinary crashes, on the curve),
then exits with TRIGGER_EXIT_CODE, which its ``restartPolicyRules`` map to
the ``RestartAllContainers`` action, then crashes again. Two pods per worker:
that container alone, and beside a long-running app (the sidecar style: a
watcher whose exit resets its pod).

What the kubelet's source predicts (read in source, k8s v1.35-v1.38):

- the reset kills and removes every container, and the re-run is not delayed
  by CrashLoopBackOff (no exited status is left for the back-off to act on);
- the back-off counter is neither advanced nor reset by it, so the next
  ordinary crash waits at the old level: restart TRIGGER_AFTER+1's delay;
- on 1.35 (alpha: the gate and NodeDeclaredFeatures) the sync after the
  reset waits for another container's death event or the 60-90s resync, so a
  single-container pod may wait that long; from 1.36 the kubelet syncs again
  at once.

Measured on 1.35.8 (docs/results.md): the pod beside an app waited for the
resync too. The reset kills and removes the app in one sync, inside one PLEG
relist, so the relist sees it removed (``ContainerRemoved``, not a reason to
sync), never died. Now and then a 1.35 re-run comes at once: a relist that
lists the 0.5s trigger running but reads its status exited syncs the pod
twice, a relist apart. And a 1.35 kubelet numbers the re-run containers from 0
again: it counts restarts from the container logs, which the reset removed
(kept from 1.36, kubernetes/kubernetes#136963).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final

from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.model.releases import RESTART_ALL_CONTAINERS, release_of
from crashloop_harness.pods import skeleton
from crashloop_harness.recording.ownlog import ATTEMPTS_LOG, own_attempts
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.scenarios import common
from crashloop_harness.verdict import CLOCK_ROUNDING

NAME: Final = "restart-all"
SINGLE_PREFIX: Final = "restartall-single"
PAIR_PREFIX: Final = "restartall-pair"
WATCHER_CONTAINER: Final = "watcher"
# Three ordinary crashes first: the back-off entry then stands at the 4th
# restart's level (40s on the default curve), which the reset must keep.
TRIGGER_AFTER: Final = 3
TRIGGER_EXIT_CODE: Final = 88
CRASH_EXIT_CODE: Final = 1
APP_MODE: Final = "sleep"
RUN_FOR: Final = timedelta(milliseconds=500)
# The first release whose kubelet syncs a reset pod again at once.
FIRST_IMMEDIATE_MINOR: Final = 36
# Kill, remove and start again, with the kubelet's next sync: not a back-off.
RESET_SLACK: Final = timedelta(seconds=5)
# 1.35: the pod worker's periodic resync, 60-90s after the pod's last sync
# (syncFrequency 1 min, jittered by up to half; pod_workers.go completeWork).
# Anything else that syncs the pod in between starts that wait again, so a
# re-run may come later than 90s (measured: 61-106s); twice the resync
# still tells it from a pod that never re-runs.
RESYNC_MAX: Final = timedelta(seconds=180)
FIRST_RELEASE_WITH_IT: Final = "1.35 with the RestartAllContainersOnContainerExits gate, or 1.36+"

HEADLINE: Final = common.Headline("single_reset_s", "trigger exit to the pod's re-run")


def single_pod_name(worker: str) -> str:
    return f"{SINGLE_PREFIX}-{worker}"


def pair_pod_name(worker: str) -> str:
    return f"{PAIR_PREFIX}-{worker}"


def _trigger_container(name: str, image: str) -> dict[str, Any]:
    args = skeleton.workload_args(
        "trigger",
        "--fail-times",
        str(TRIGGER_AFTER),
        "--exit-code",
        str(CRASH_EXIT_CODE),
        "--final-exit-code",
        str(TRIGGER_EXIT_CODE),
        "--run-for",
        skeleton.go_duration(RUN_FOR),
    )
    container = skeleton.workload_container(name, image, args)
    # The rule refines the container's own policy: restart on any exit, but
    # the trigger's exit restarts the whole pod.
    container["restartPolicy"] = "Always"
    container["restartPolicyRules"] = [
        {
            "action": "RestartAllContainers",
            "exitCodes": {"operator": "In", "values": [TRIGGER_EXIT_CODE]},
        }
    ]
    return container


def single_pod(worker: str, run_id: str, image: str) -> dict[str, Any]:
    """The trigger container alone."""
    return skeleton.pod_for_worker(
        name=single_pod_name(worker),
        worker=worker,
        run_id=run_id,
        role=NAME,
        containers=[_trigger_container(skeleton.MAIN_CONTAINER, image)],
    )


def pair_pod(worker: str, run_id: str, image: str) -> dict[str, Any]:
    """A long-running app beside the watcher whose exit resets the pod."""
    app = skeleton.workload_container(
        skeleton.MAIN_CONTAINER, image, skeleton.workload_args(APP_MODE)
    )
    return skeleton.pod_for_worker(
        name=pair_pod_name(worker),
        worker=worker,
        run_id=run_id,
        role=NAME,
        containers=[app, _trigger_container(WATCHER_CONTAINER, image)],
    )


def _scenario_pods(worker: str, run_id: str, image: str) -> list[dict[str, Any]]:
    return [single_pod(worker, run_id, image), pair_pod(worker, run_id, image)]


# The restart after the first ordinary crash that follows the reset.
_LAST_RESTART: Final = TRIGGER_AFTER + 2
# The workload's own timeline (its emptyDir outlives the reset): a 1.35
# kubelet numbers the containers from 0 again after removing them, so the
# runtime's attempt numbers cannot tell the attempts apart; the workload's
# own count can.
READ_EVERY_S: Final = 3.0
TRIGGER_MODE: Final = "trigger"


def _pods(worker: str) -> tuple[tuple[str, str], ...]:
    """(pod, trigger container) of both of the worker's pods."""
    return (
        (single_pod_name(worker), skeleton.MAIN_CONTAINER),
        (pair_pod_name(worker), WATCHER_CONTAINER),
    )


@dataclass
class _Watch(common.RunWatch):
    """Until both pods' trigger containers have crashed once after the reset and restarted."""

    logs: dict[str, str] = field(default_factory=dict)  # pod -> its workload's own log
    read_at: float = 0.0  # monotonic time of the last read

    def pending(self) -> list[str]:
        waiting = [(w, pod) for w in self.run.nodes for pod, _ in _pods(w) if not self._done(pod)]
        # Each read is an exec on the node: not every poll, on a small machine.
        if waiting and time.monotonic() - self.read_at >= READ_EVERY_S:
            self.read_at = time.monotonic()
            self._read({pod for _, pod in waiting})
        return [
            f"{NAME} restart {_LAST_RESTART} of {pod} on {worker}"
            for worker, pod in waiting
            if not self._done(pod)
        ]

    def _done(self, pod: str) -> bool:
        """Whether ``pod``'s trigger container has started its last awaited attempt."""
        return len(own_attempts(self.logs.get(pod, ""), TRIGGER_MODE)) > _LAST_RESTART

    def collect(self) -> None:
        self._read({pod for worker in self.run.nodes for pod, _ in _pods(worker)})

    def measure(self, on: common.Subject, attempts: Sequence[AttemptRecord]) -> common.WorkerResult:
        del attempts  # the runtime's numbering does not survive a 1.35 reset; see own_attempts
        timelines = {
            pod: [
                dataclasses.replace(
                    record,
                    worker=on.worker,
                    node=on.node,
                    pod=pod,
                    pod_uid=pod,
                    container=container,
                )
                for record in own_attempts(self.logs.get(pod, ""), TRIGGER_MODE)
            ]
            for pod, container in _pods(on.worker)
        }
        return restart_all(
            on,
            single=timelines[single_pod_name(on.worker)],
            watcher=timelines[pair_pod_name(on.worker)],
            app_restarts=self._app_restarts(on.worker),
            kubelet_version=self.run.kubelet_versions.get(on.worker, ""),
        )

    def _read(self, pods: set[str]) -> None:
        for pod in self.run.pods(NAME):
            if pod.name in pods:
                text = self.run.read_pod_file(pod, ATTEMPTS_LOG)
                if text is not None:
                    self.logs[pod.name] = text

    def _app_restarts(self, worker: str) -> int | None:
        """How often the app beside the watcher started again (its own log), None if unread."""
        text = self.logs.get(pair_pod_name(worker))
        if text is None:
            return None
        return len(own_attempts(text, mode=APP_MODE)) - 1


# --- metrics (pure) -----------------------------------------------------------------------


def restart_all(
    on: common.Subject,
    *,
    single: Sequence[AttemptRecord],
    watcher: Sequence[AttemptRecord],
    app_restarts: int | None,
    kubelet_version: str,
) -> common.WorkerResult:
    """Both pods: the crashes before on the curve, the reset, the level kept after it.

    ``single`` and ``watcher`` are the trigger containers' own timelines
    (:func:`own_attempts`); ``app_restarts`` how often the app beside the
    watcher started again.
    """
    try:
        release = release_of(kubelet_version)
    except ValueError as error:
        return _without_feature(on, f"{error}")
    if RESTART_ALL_CONTAINERS not in release.gates:
        return _without_feature(
            on,
            f"kubelet {release.name} has no RestartAllContainers action: it needs "
            f"{FIRST_RELEASE_WITH_IT}",
        )
    immediate = release.minor >= FIRST_IMMEDIATE_MINOR
    # The workload's own times carry no reported level: confirming levels is
    # the conformance check's job, these restarts are judged on their delays.
    verdict = on.judge(single, up_to=TRIGGER_AFTER, confirm_levels=False)
    metrics = common.restart_metrics("restart", verdict.checks)
    # A pod reset waits for the kubelet's next sync: at once from 1.36, the
    # periodic resync on 1.35.
    upper = RESET_SLACK if immediate else RESYNC_MAX
    metrics.append(_reset("single_reset_s", single, upper, release.name))
    metrics.append(_reset("pair_reset_s", watcher, upper, release.name))
    metrics.append(_level_kept("single_level_after_reset_s", on.curve, single))
    metrics.append(_level_kept("pair_level_after_reset_s", on.curve, watcher))
    metrics.append(
        common.exactly(
            "app_restarts_by_reset",
            1,
            measured=app_restarts,
            detail="the app beside the watcher must start again once, with the reset",
        )
    )
    return on.result(NAME, metrics, judged=verdict)


def _without_feature(on: common.Subject, why: str) -> common.WorkerResult:
    return on.result(NAME, metrics=(common.unmeasured(HEADLINE.metric, why),))


def _numbered(ordered: Sequence[AttemptRecord]) -> Mapping[int, AttemptRecord]:
    return {r.attempt: r for r in ordered}


def _reset(
    name: str, ordered: Sequence[AttemptRecord], upper: timedelta, release: str
) -> common.Metric:
    """From the trigger's exit to the next attempt's start: no back-off, at most ``upper``."""
    numbered = _numbered(ordered)
    trigger, rerun = numbered.get(TRIGGER_AFTER), numbered.get(TRIGGER_AFTER + 1)
    if trigger is None or trigger.finished_at_ns is None or rerun is None:
        return common.unmeasured(
            name, f"attempt {TRIGGER_AFTER}'s exit or the re-run was not recorded"
        )
    if trigger.exit_code != TRIGGER_EXIT_CODE:
        return common.unmeasured(
            name,
            f"attempt {TRIGGER_AFTER} exited {trigger.exit_code}, not the trigger's "
            f"{TRIGGER_EXIT_CODE}",
        )
    return common.bounded(
        name,
        "s",
        expected=0.0,
        measured=common.seconds(rerun.started_at_ns - trigger.finished_at_ns),
        lower=0.0,
        upper=upper.total_seconds(),
        detail=(
            f"not delayed by CrashLoopBackOff; kubelet {release} re-runs within "
            f"{upper.total_seconds():g}s"
        ),
        restarts=1,
    )


def _level_kept(name: str, curve: BackoffCurve, ordered: Sequence[AttemptRecord]) -> common.Metric:
    """The first ordinary crash after the reset waits the level before it, neither more nor less.

    The reset neither advanced nor reset the counter: restart TRIGGER_AFTER+2
    waits what restart TRIGGER_AFTER+1 would have.
    """
    numbered = _numbered(ordered)
    crashed, restarted = numbered.get(TRIGGER_AFTER + 1), numbered.get(_LAST_RESTART)
    if crashed is None or crashed.finished_at_ns is None or restarted is None:
        return common.unmeasured(
            name, "the first crash after the reset, or its restart, was not recorded"
        )
    expected = curve.delay_before_restart(TRIGGER_AFTER + 1)
    decided = restarted.created_at_ns or restarted.started_at_ns
    return common.bounded(
        name,
        "s",
        expected=expected.total_seconds(),
        measured=common.seconds(decided - crashed.finished_at_ns),
        lower=expected.total_seconds() - CLOCK_ROUNDING.total_seconds(),
        upper=curve.upper_tolerance(expected).total_seconds(),
        detail=(
            f"the level before the reset (restart {TRIGGER_AFTER + 1}'s "
            f"{expected.total_seconds():g}s); twice that if the reset advanced the counter"
        ),
    )


# KEP-5532's action exists from 1.35. The app beside the watcher is counted from its own
# log on the node's disk (ATTEMPTS_LOG), which a kubeconfig alone cannot reach.
RESTART_ALL: Final = common.PodScenario(
    NAME, HEADLINE, _scenario_pods, _Watch, first_minor=35, reads_node_files=True
)
