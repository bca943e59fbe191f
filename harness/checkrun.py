"""The conformance check: the bare crashing container on every worker at once.

One shared observation: a pod per worker whose container exits at once, its
every attempt recorded, until each worker's curve has shown what the check
profile needs (or the profile's timeout). Then one verdict per worker against
the curve its node's live kubelet config implies.

A worker is decided early when it can no longer pass: a restart off its
window or level, a restart overdue on the node's clock, a pod whose container
never ran. The run ends once every worker is either observed far enough or
decided; a worker that is neither when the window closes fails as incomplete.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Final

from kubernetes import client

from harness import kubeletstate, pins, timeouts
from harness.backoff import BackoffCurve
from harness.cluster import Cluster
from harness.evidence import collect_failure_evidence, export_kind_logs
from harness.junit import write_junit
from harness.liveconfig import NodeConfigRow
from harness.manifests import MAIN_CONTAINER, crashing_pod
from harness.recorder import Recorder
from harness.records import AttemptRecord
from harness.runsetup import (
    RunState,
    clean_up,
    engine_gone_reason,
    prepare_run,
    silent_nodes_reason,
)
from harness.summary import ClusterInfo, RunOutcome, RunSummary, summarize, write_summary
from harness.verdict import (
    Observation,
    WorkerVerdict,
    judge_worker,
    observed_enough,
    restarts_needed,
)

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Need:
    """What one worker must show before it can be judged."""

    min_restarts: int | None = None
    until_delay_s: float | None = None


@dataclass(frozen=True)
class CheckProfile:
    name: str
    timeout_s: float
    needs: Mapping[str, Need]  # by worker profile name
    fallback: Need = field(default_factory=lambda: Need(min_restarts=5))
    # A fixed window (the demo): what was measured by the deadline is judged,
    # rather than the run failing for not reaching every need.
    fixed_window: bool = False

    def need_for(self, profile: str) -> Need:
        return self.needs.get(profile, self.fallback)


CHECK_PROFILES: Final = {
    # A few minutes: the fast curve many times, the others up to 32s and 80s.
    "quick": CheckProfile(
        "quick",
        timeouts.CHECK_QUICK,
        {
            "fast": Need(min_restarts=10),
            # Up to its first capped restart: the level (60s) that a 30s max
            # would imitate in the delay window alone.
            "reduced": Need(until_delay_s=60),
            "default": Need(until_delay_s=80),
        },
    ),
    # About 11 minutes: the reduced curve capped twice, the default curve at its 300s cap.
    "full": CheckProfile(
        "full",
        timeouts.CHECK_FULL,
        {
            "fast": Need(min_restarts=20),
            "reduced": Need(min_restarts=9),
            "default": Need(until_delay_s=300),
        },
    ),
}


@dataclass(kw_only=True)
class CheckResult(RunState):
    """What a check observed and concluded."""

    profile: CheckProfile
    rows: list[NodeConfigRow]
    curves: dict[str, BackoffCurve]  # worker -> curve from the live config
    nodes: dict[str, str]  # worker -> node
    attempts: dict[str, list[AttemptRecord]] = field(default_factory=dict)
    verdicts: dict[str, WorkerVerdict] = field(default_factory=dict)
    # worker -> (seconds after the pods were created, first failure), for
    # workers decided before the end: what gave the kubelet away, and when.
    decided: dict[str, tuple[float, str]] = field(default_factory=dict)
    # worker -> (attempt, back-off) the kubelet reports for its next, pending attempt.
    pending: dict[str, tuple[int, float]] = field(default_factory=dict)
    # worker -> the node's clock at its last listing: "now" for overdue restarts.
    node_now_ns: dict[str, int] = field(default_factory=dict)


def _by_worker(attempts: list[AttemptRecord], container: str) -> dict[str, list[AttemptRecord]]:
    grouped: dict[str, list[AttemptRecord]] = {}
    for record in attempts:
        if record.container == container:
            grouped.setdefault(record.worker, []).append(record)
    return {worker: sorted(records, key=lambda r: r.attempt) for worker, records in grouped.items()}


def run_check(
    cluster: Cluster,
    profile: CheckProfile,
    progress: Progress,
    *,
    on_sample: Callable[[CheckResult], None] | None = None,
    stop: threading.Event | None = None,
    expected_curves: Mapping[str, BackoffCurve] | None = None,
) -> CheckResult:
    """Run the conformance observation and judge every worker; never raises on a bad verdict.

    ``stop`` ends the observation early from another thread (as SIGINT does in
    this one): the run is judged on what was measured and marked interrupted.
    ``expected_curves`` (worker -> curve) replaces the curves of the live
    configs, which are then not required to match the profiles: the mutation
    drill runs kubelets on a neighbour config and tells the check the original.
    """
    setup = prepare_run(
        cluster, f"check-{profile.name}", progress, require_profiles=expected_curves is None
    )
    curves = {**setup.curves, **(expected_curves or {})}
    api, nodes, namespace, recorder = setup.api, setup.nodes, setup.namespace, setup.recorder
    run_id, image = setup.run_id, setup.image
    result = CheckResult(
        run_id=run_id,
        run_dir=setup.run_dir,
        profile=profile,
        rows=setup.rows,
        curves=curves,
        nodes=nodes,
    )
    core = client.CoreV1Api(api)
    kubelets_before = kubeletstate.snapshot(list(nodes.values()))
    try:
        recorder.start()
        for worker in nodes:
            core.create_namespaced_pod(namespace, crashing_pod(worker, run_id, image))
        _observe(result, recorder, cluster, on_sample, stop)
    except KeyboardInterrupt:
        result.status = "interrupted"
        result.reason = "interrupted (a signal) before every worker was observed"
    finally:
        recorder.stop()
        _take_sample(result, recorder)
        result.recorder_errors = list(recorder.errors.messages)
        _judge(result, _required_restarts(result, cluster))
        kubelets = kubeletstate.changes_between(
            kubelets_before, kubeletstate.snapshot(list(nodes.values()))
        )
        engine_gone = engine_gone_reason()
        problems = [*kubelets.restarted, *filter(None, [engine_gone])]
        if problems:
            # A verdict against a curve the kubelet no longer follows would be wrong.
            result.status = "error"
            result.reason = "; ".join([*filter(None, [result.reason]), *problems])
        elif kubelets.stopped and result.status != "interrupted":
            # A stopped kubelet restarts nothing: its worker's verdict says
            # which restart went overdue; the run says why.
            result.status = "failed"
            result.reason = "; ".join([*filter(None, [result.reason]), *kubelets.stopped])
        result.finished_at = datetime.now(UTC)
        write_outputs(result, cluster)
        if result.status in ("failed", "error") and engine_gone is None:
            # Before the namespace goes: what the pods, the kubelets and the nodes said.
            evidence = result.run_dir / "evidence"
            collect_failure_evidence(api, [namespace], evidence)
            export_kind_logs(cluster.kind_bin, cluster.name, evidence / "kind-logs")
        clean_up(api, namespace, engine_gone)
    return result


def _observe(
    result: CheckResult,
    recorder: Recorder,
    cluster: Cluster,
    on_sample: Callable[[CheckResult], None] | None,
    stop: threading.Event | None,
) -> None:
    """Wait until every worker is observed enough or decided, the window ends or a stop."""
    profile = result.profile
    started = time.monotonic()
    deadline = started + profile.timeout_s
    while True:
        _take_sample(result, recorder)
        _decide_early(result, time.monotonic() - started)
        if on_sample is not None:
            on_sample(result)
        silent = silent_nodes_reason(recorder)
        if silent is not None:
            result.status, result.reason = "error", silent
            return
        # A fixed window is watched to its end, whatever was seen already.
        undecided = _undecided(result, cluster)
        if not profile.fixed_window and not undecided:
            result.status = "observed"
            return
        if stop is not None and stop.is_set():
            result.status = "interrupted"
            result.reason = "stopped before every worker was observed"
            return
        if time.monotonic() > deadline:
            result.status = "observed" if profile.fixed_window else "timeout"
            if not profile.fixed_window:
                result.reason = (
                    f"the {profile.timeout_s:.0f}s observation window ended before "
                    f"{', '.join(undecided)} showed what the profile needs"
                )
            return
        recorder.wait_for_change(timeout=1.0)


def _take_sample(result: CheckResult, recorder: Recorder) -> None:
    """What the recorder knows now: attempts, pending levels, each node's clock."""
    result.attempts = _by_worker(recorder.attempts(), MAIN_CONTAINER)
    pending = recorder.pending_backoffs()
    for worker, node in result.nodes.items():
        records = result.attempts.get(worker, [])
        if records:
            found = pending.get((records[-1].pod_uid, MAIN_CONTAINER))
            if found is not None and found[0] > records[-1].attempt:
                result.pending[worker] = found
        listed = recorder.listed_at_ns(node)
        if listed is not None:
            result.node_now_ns[worker] = listed


def _decide_early(result: CheckResult, elapsed_s: float) -> None:
    """Mark every worker that can no longer pass, with its first failure and when."""
    for worker, curve in result.curves.items():
        if worker in result.decided:
            continue
        attempts = result.attempts.get(worker, [])
        if not attempts:
            if elapsed_s > timeouts.POD_RUNNING:
                result.decided[worker] = (
                    elapsed_s,
                    f"{worker}: the pod's container never ran within {timeouts.POD_RUNNING:.0f}s",
                )
            continue
        # Unconfirmed levels are not final while the watch may still deliver them.
        verdict = judge_worker(
            attempts,
            curve,
            worker=worker,
            node=result.nodes[worker],
            observation=_observation(result, worker, required_restarts=0),
            confirm_levels=False,
        )
        if not verdict.passed:
            result.decided[worker] = (elapsed_s, verdict.failures[0])


def _observation(result: CheckResult, worker: str, *, required_restarts: int) -> Observation:
    pending = result.pending.get(worker)
    return Observation(
        required_restarts=required_restarts,
        now_ns=result.node_now_ns.get(worker),
        pending_reported_s=pending[1] if pending else None,
    )


def summary_of(result: CheckResult, cluster: Cluster) -> RunSummary:
    outcome: RunOutcome = "completed"
    if result.status == "interrupted":
        outcome = "interrupted"
    elif result.status == "failed":
        # Whatever the verdicts say: a run that failed (a stopped kubelet, an
        # incomplete observation) must never be written as passed.
        outcome = "failed"
    elif result.status not in ("passed", "observed"):
        outcome = "error"
    return summarize(
        run_id=result.run_id,
        kind="conformance",
        profile="full" if result.profile.name == "full" else "quick",
        started_at=result.started_at,
        finished_at=result.finished_at or datetime.now(UTC),
        cluster=ClusterInfo(
            name=cluster.name, node_image=cluster.image, kubernetes_version=pins.KUBERNETES_VERSION
        ),
        verdicts=list(result.verdicts.values()),
        configs=result.rows,
        attempts_recorded={worker: len(records) for worker, records in result.attempts.items()},
        outcome=outcome,
        reason="; ".join(filter(None, [result.reason, *result.recorder_errors[:3]])),
    )


def write_outputs(result: CheckResult, cluster: Cluster) -> RunSummary:
    """summary.json and junit.xml in the run directory (attempts.jsonl is already there)."""
    summary = summary_of(result, cluster)
    write_summary(result.run_dir, summary)
    write_junit(result.run_dir, summary)
    return summary


def _need(result: CheckResult, cluster: Cluster, worker: str) -> Need:
    return result.profile.need_for(cluster.spec.worker(worker).profile.name)


def _required_restarts(result: CheckResult, cluster: Cluster) -> dict[str, int]:
    """worker -> the highest restart its need asks for."""
    required: dict[str, int] = {}
    for worker, curve in result.curves.items():
        need = _need(result, cluster, worker)
        until = timedelta(seconds=need.until_delay_s) if need.until_delay_s is not None else None
        required[worker] = restarts_needed(curve, need.min_restarts, until)
    return required


def _undecided(result: CheckResult, cluster: Cluster) -> list[str]:
    """Workers that neither failed already nor showed what their need asks for."""
    undecided: list[str] = []
    for worker, curve in result.curves.items():
        if worker in result.decided:
            continue
        need = _need(result, cluster, worker)
        until = timedelta(seconds=need.until_delay_s) if need.until_delay_s is not None else None
        pending = result.pending.get(worker)
        if not observed_enough(
            result.attempts.get(worker, []),
            curve,
            min_restarts=need.min_restarts,
            until_delay=until,
            pending_reported_s=pending[1] if pending else None,
        ):
            undecided.append(worker)
    return undecided


def _judge(result: CheckResult, required_restarts: Mapping[str, int]) -> None:
    """The final verdict of every worker; completeness counts unless the run was cut short."""
    cut_short = result.status in ("interrupted", "running", "error")
    for worker, curve in result.curves.items():
        required = 0 if cut_short or result.profile.fixed_window else required_restarts[worker]
        result.verdicts[worker] = judge_worker(
            result.attempts.get(worker, []),
            curve,
            worker=worker,
            node=result.nodes[worker],
            observation=_observation(result, worker, required_restarts=required),
        )
    # Interrupted, still running or in error: the verdicts are kept, but no
    # pass or fail is claimed from them.
    if cut_short:
        return
    failures = [f for v in result.verdicts.values() for f in v.failures[:1]]
    # A window that ended before every worker showed its need is a failure
    # even when what was seen is on the curve: a pass must be earned.
    result.status = "failed" if failures or result.status == "timeout" else "passed"
    if failures:
        result.reason = "; ".join([*filter(None, [result.reason]), *failures])
