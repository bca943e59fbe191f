"""A kubelet restarted under an app that crash-loops beside a running sidecar.

The pod: a sidecar (a restartable init container) with a startupProbe that
runs for the pod's life, and an app that works RUN_FOR and exits 1, over and
over. Once the app has restarted BEFORE times and its attempt has just
started, the run restarts the worker's kubelet (``systemctl restart kubelet``
in the node) and waits until it answers /healthz; then it counts the app's
restarts. Every worker, each at its own moment.

The regression it guards (kubernetes/kubernetes#136969, fixed by #137146,
in v1.35.8): with ``ChangeContainerStatusOnKubeletRestart`` off (its default
from 1.35) a restarted kubelet gives a sidecar that started more than 10s
before it (``kubeletRestartGracePeriod``, pkg/kubelet/prober/prober_manager.go:448-450)
no startup result; ``computeInitContainerActions``
(pkg/kubelet/kuberuntime/kuberuntime_container.go:1042; it waits for the result
at :1128-1132) then never finds the pod initialized once the app has exited
(an exited app does not count, :1062-1069), ``computePodActions`` returns
before the app (kuberuntime_manager.go:1238-1243), and the app is never
restarted again. v1.35.8 seeds that result (pkg/kubelet/prober/worker.go:268-277).

What the release's code says of the restarts after the kubelet's return: the
crash-loop back-off is kept in the kubelet's memory only. ``NewMainKubelet``
makes it afresh (pkg/kubelet/kubelet.go:1009-1014, ``flowcontrol.NewBackOff``)
and hands it to every ``SyncPod`` (:2160); ``doBackOff``
(pkg/kubelet/kuberuntime/kuberuntime_manager.go:1855) finds no entry for the
app (``IsInBackOffSince`` is false without one, client-go
util/flowcontrol/backoff.go:119-125) and creates it (:1885). So the app's
first exit after the return is restarted at once, and the next ones follow
the curve from its start: the restarts after the return are judged as
restarts 1, 2 ... of a fresh curve, by the conformance check's own verdict.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final

from crashloop_harness.cluster.kubeletstate import KubeletRestart
from crashloop_harness.core import timeouts
from crashloop_harness.model.durations import to_ns
from crashloop_harness.pods import skeleton
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.scenarios import common, observing
from crashloop_harness.substrate.workloadimage import BINARY
from crashloop_harness.verdict import WorkerVerdict

NAME: Final = "kubelet-restart-sidecar"
POD_PREFIX: Final = "kubeletrestart"
SIDECAR_CONTAINER: Final = "sidecar"
# Each app attempt works this long, then exits 1: long enough that the
# attempt running when the kubelet is restarted exits after it is back.
RUN_FOR: Final = timedelta(seconds=30)
CRASH_EXIT_CODE: Final = 1
# The kubelet is restarted once the app has restarted this often (its back-off
# entry stands at the initial level or past it) ...
BEFORE: Final = 2
# ... and while the attempt then running started at most this long ago, so
# that it still runs RUN_FOR - RESTART_WINDOW after the restart was asked.
RESTART_WINDOW: Final = timedelta(seconds=10)
# The app's restarts awaited after the kubelet's return: restart 1 of the
# fresh curve (at once) and restart 2 (its initial back-off).
AFTER: Final = 2
# kubeletRestartGracePeriod (pkg/kubelet/prober/prober_manager.go:448-450):
# a container that started more than 10s before the kubelet did is one
# "from before the restart", the case the regression lies in.
RESTART_GRACE: Final = timedelta(seconds=10)
# The sidecar's startup probe: the workload's ready marker, which the sidecar
# writes as it starts; generous, so that a slow start is never a kill.
STARTUP_PERIOD_S: Final = 1
STARTUP_FAILURES: Final = 30

HEADLINE: Final = common.Headline(
    "app_restarts_after_kubelet_restart", "app restarts after the kubelet's restart"
)


def pod_name(worker: str) -> str:
    return f"{POD_PREFIX}-{worker}"


def kubelet_restart_pod(worker: str, run_id: str, image: str) -> dict[str, Any]:
    """A sidecar with a startupProbe that runs until stopped, and an app that crash-loops."""
    sidecar = skeleton.workload_container(
        SIDECAR_CONTAINER, image, skeleton.workload_args("transient", "--fail-times", "0")
    )
    # restartPolicy on an init container makes it a sidecar (a restartable init container).
    sidecar["restartPolicy"] = "Always"
    sidecar["startupProbe"] = {
        "exec": {"command": [BINARY, "--mode", "ready-check", "--record-dir", skeleton.RECORD_DIR]},
        "periodSeconds": STARTUP_PERIOD_S,
        "timeoutSeconds": 1,
        "failureThreshold": STARTUP_FAILURES,
    }
    app = skeleton.workload_container(
        skeleton.MAIN_CONTAINER,
        image,
        skeleton.workload_args(
            "run",
            "--run-for",
            skeleton.go_duration(RUN_FOR),
            "--exit-code",
            str(CRASH_EXIT_CODE),
        ),
    )
    return skeleton.pod_for_worker(
        name=pod_name(worker),
        worker=worker,
        run_id=run_id,
        role=NAME,
        containers=[app],
        init_containers=[sidecar],
    )


def _pods(worker: str, run_id: str, image: str) -> list[dict[str, Any]]:
    return [kubelet_restart_pod(worker, run_id, image)]


def restart_due(app: Sequence[AttemptRecord], now_ns: int) -> bool:
    """Whether the app's running attempt is restart BEFORE or later and started lately."""
    latest = max(app, key=lambda r: r.attempt, default=None)
    return (
        latest is not None
        and latest.attempt >= BEFORE
        and latest.finished_at_ns is None
        and now_ns - latest.started_at_ns <= to_ns(RESTART_WINDOW)
    )


def settled(app: Sequence[AttemptRecord], restart: KubeletRestart, now_ns: int) -> bool:
    """Nothing more to wait for: AFTER restarts seen after the kubelet's restart, the kubelet
    never came back, or the app's last exit went unrestarted for KUBELET_RESTART_STUCK."""
    if restart.back_ns is None:
        return True
    if sum(r.started_at_ns >= restart.asked_ns for r in app) >= AFTER:
        return True
    latest = max(app, key=lambda r: r.attempt, default=None)
    finished = None if latest is None else latest.finished_at_ns
    return finished is not None and now_ns - finished > to_ns(
        timedelta(seconds=timeouts.KUBELET_RESTART_STUCK)
    )


@dataclass
class _Watch(common.RunWatch):
    """Each worker's kubelet restarted at its moment; then the app's restarts after it."""

    restarts: dict[str, KubeletRestart] = field(default_factory=dict)  # worker -> its restart
    app_restarts: dict[str, int] = field(default_factory=dict)  # worker -> restartCount

    def pending(self) -> list[str]:
        attempts = self.run.attempts()
        waiting = []
        for worker in self.run.nodes:
            app = observing.attempts_of(attempts, pod_name(worker), skeleton.MAIN_CONTAINER)
            restart = self.restarts.get(worker)
            if restart is None and restart_due(app, time.time_ns()):
                restart = self.restarts[worker] = self.run.restart_kubelet(worker)
                attempts = self.run.attempts()  # restarting took a while
                app = observing.attempts_of(attempts, pod_name(worker), skeleton.MAIN_CONTAINER)
            if restart is None:
                waiting.append(f"{NAME} app restart {BEFORE} on {worker}, then its kubelet's")
            elif not settled(app, restart, time.time_ns()):
                waiting.append(f"{NAME} {AFTER} app restarts after {worker}'s kubelet restart")
        return waiting

    def collect(self) -> None:
        for pod in self.run.pods(NAME):
            if skeleton.MAIN_CONTAINER in pod.restart_counts:
                self.app_restarts[pod.worker] = pod.restart_counts[skeleton.MAIN_CONTAINER]

    def measure(self, on: common.Subject, attempts: Sequence[AttemptRecord]) -> common.WorkerResult:
        pod = pod_name(on.worker)
        return kubelet_restart_sidecar(
            on,
            app=observing.attempts_of(attempts, pod, skeleton.MAIN_CONTAINER),
            sidecar=observing.attempts_of(attempts, pod, SIDECAR_CONTAINER),
            restart=self.restarts.get(on.worker),
            app_restart_count=self.app_restarts.get(on.worker),
        )


# --- metrics (pure) -----------------------------------------------------------------------


def kubelet_restart_sidecar(
    on: common.Subject,
    *,
    app: Sequence[AttemptRecord],
    sidecar: Sequence[AttemptRecord],
    restart: KubeletRestart | None,
    app_restart_count: int | None,
) -> common.WorkerResult:
    """The restart made, the sidecar's part in it, and the app's restarts before and after.

    The app's attempt running when the kubelet was restarted is attempt 0 of a
    fresh curve, the attempts after it restarts 1, 2 ...: judged by the check's
    verdict (levels not confirmed: the workload's pod carries no expectation of
    them). Its exit counts from the kubelet's return if it came earlier.
    """
    if restart is None:
        why = f"the kubelet was never restarted: the app's restart {BEFORE} was not seen running"
        return on.result(NAME, [common.unmeasured(HEADLINE.metric, why, unit="count")])
    ordered = common.by_attempt(app)
    before = [r for r in ordered if r.started_at_ns < restart.asked_ns]
    after = [r for r in ordered if r.started_at_ns >= restart.asked_ns]
    metrics = [
        common.exactly(
            "kubelet_restarted",
            1,
            # A new process that answers its /healthz: one that never came back is no return.
            measured=int(restart.restarted and restart.back_ns is not None),
            detail=restart.describe(),
        ),
        *_sidecar_metrics(sidecar, restart),
        common.bounded(
            "app_restarts_before_kubelet_restart",
            "count",
            expected=BEFORE,
            measured=before[-1].attempt if before else None,
            lower=BEFORE,
            upper=None,
            detail=f"the kubelet is restarted once the app has restarted {BEFORE} times",
        ),
    ]
    chain, note = _fresh_chain(before, after, restart)
    verdict = on.judge(chain, up_to=AFTER, confirm_levels=False) if chain else None
    metrics.extend(_after_return(chain, verdict))
    metrics.append(
        common.bounded(
            HEADLINE.metric,
            "count",
            expected=AFTER,
            measured=len(after),
            lower=AFTER,
            upper=None,
            detail=f"app attempts started after the kubelet's restart; pod status restartCount "
            f"{app_restart_count} (before it: {before[-1].attempt if before else None})",
        )
    )
    return on.result(NAME, metrics, (note,) if note else (), judged=verdict)


def _after_return(
    chain: Sequence[AttemptRecord], verdict: WorkerVerdict | None
) -> list[common.Metric]:
    """Restarts 1..AFTER of the fresh curve as the verdict judged them; one not seen fails."""
    checks = verdict.checks if verdict is not None else ()
    metrics = common.restart_metrics("after_return_restart", checks)
    last_exit = chain[-1].finished_at_ns if chain else None
    for n in range(len(checks) + 1, AFTER + 1):
        metrics.append(
            common.unmeasured(
                f"after_return_restart_{n}_s",
                f"not seen: the app exited at {last_exit} (ns) and was not restarted"
                if last_exit is not None
                else "the app's attempt before it was not seen to exit",
            )
        )
    return metrics


def _fresh_chain(
    before: Sequence[AttemptRecord], after: Sequence[AttemptRecord], restart: KubeletRestart
) -> tuple[list[AttemptRecord], str]:
    """The attempt running at the restart and those after it, numbered 0, 1, 2 ... as a fresh
    curve counts them; a note when the first of them exited before the kubelet was back."""
    if not before:
        return [], ""
    first, note = before[-1], ""
    back = restart.back_ns
    if first.finished_at_ns is not None and back is not None and first.finished_at_ns < back:
        note = (
            f"attempt {first.attempt} exited {(back - first.finished_at_ns) / 1e9:.1f}s before "
            "the kubelet was back: its restart is counted from the kubelet's return"
        )
        first = dataclasses.replace(first, finished_at_ns=back)
    chain = [first, *after]
    return [dataclasses.replace(r, attempt=n) for n, r in enumerate(chain)], note


def _sidecar_metrics(
    sidecar: Sequence[AttemptRecord], restart: KubeletRestart
) -> list[common.Metric]:
    """The sidecar ran throughout, from more than RESTART_GRACE before the kubelet's restart."""
    first = min(sidecar, key=lambda r: r.attempt, default=None)
    age = None if first is None else (restart.asked_ns - first.started_at_ns) / 1e9
    return [
        common.exactly(
            "sidecar_restarts",
            0,
            measured=max((r.attempt for r in sidecar), default=None),
            detail="the sidecar runs for the pod's life",
        ),
        common.bounded(
            "sidecar_age_at_kubelet_restart_s",
            "s",
            expected=None,
            measured=age,
            lower=RESTART_GRACE.total_seconds(),
            upper=None,
            detail="started before the kubelet's restart grace (prober_manager.go:448-450): "
            "the case where a restarted kubelet keeps its Started",
        ),
    ]


# Restartable init containers and startupProbes are in every pinned minor (1.33+: sidecars
# GA); restarting a kubelet needs its node container, which a kubeconfig alone cannot reach.
KUBELET_RESTART_SIDECAR: Final = common.PodScenario(
    NAME, HEADLINE, _pods, _Watch, reads_node_files=True, restarts_kubelets=True
)
