"""The conformance check: the bare crashing container on every worker at once.

One shared observation: a pod per worker whose container exits at once, its
every attempt recorded, until each worker's curve has shown what the check
profile needs (or the profile's timeout). Then one verdict per worker against
the curve its node's live kubelet config implies.
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
from harness.verdict import WorkerVerdict, judge_worker, observed_enough

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
            "reduced": Need(until_delay_s=32),
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
) -> CheckResult:
    """Run the conformance observation and judge every worker; never raises on a bad verdict.

    ``stop`` ends the observation early from another thread (as SIGINT does in
    this one): the run is judged on what was measured and marked interrupted.
    """
    setup = prepare_run(cluster, f"check-{profile.name}", progress)
    api, nodes, namespace, recorder = setup.api, setup.nodes, setup.namespace, setup.recorder
    run_id, image = setup.run_id, setup.image
    result = CheckResult(
        run_id=run_id,
        run_dir=setup.run_dir,
        profile=profile,
        rows=setup.rows,
        curves=setup.curves,
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
        result.reason = "interrupted (SIGINT) before every worker was observed"
    finally:
        recorder.stop()
        result.attempts = _by_worker(recorder.attempts(), MAIN_CONTAINER)
        result.recorder_errors = list(recorder.errors.messages)
        _judge(result)
        kubelet_restarts = kubeletstate.restarts_between(
            kubelets_before, kubeletstate.snapshot(list(nodes.values()))
        )
        engine_gone = engine_gone_reason()
        problems = [*kubelet_restarts, *filter(None, [engine_gone])]
        if problems:
            # A verdict against a curve the kubelet no longer follows would be wrong.
            result.status = "error"
            result.reason = "; ".join([*filter(None, [result.reason]), *problems])
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
    """Wait on the recorder until every worker showed enough, the window ends or a stop."""
    profile = result.profile
    deadline = time.monotonic() + profile.timeout_s
    while True:
        result.attempts = _by_worker(recorder.attempts(), MAIN_CONTAINER)
        if on_sample is not None:
            on_sample(result)
        silent = silent_nodes_reason(recorder)
        if silent is not None:
            result.status, result.reason = "error", silent
            return
        # A fixed window is watched to its end, whatever was seen already.
        if not profile.fixed_window and _enough(result, cluster):
            result.status = "observed"
            return
        if stop is not None and stop.is_set():
            result.status = "interrupted"
            result.reason = "stopped before every worker was observed"
            return
        if time.monotonic() > deadline:
            if profile.fixed_window:
                result.status = "observed"
            else:
                result.status = "timeout"
                result.reason = (
                    f"not every worker showed enough restarts within {profile.timeout_s:.0f}s"
                )
            return
        recorder.wait_for_change(timeout=1.0)


def summary_of(result: CheckResult, cluster: Cluster) -> RunSummary:
    outcome: RunOutcome = "completed"
    if result.status == "interrupted":
        outcome = "interrupted"
    elif result.status not in ("passed", "failed", "observed"):
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


def _enough(result: CheckResult, cluster: Cluster) -> bool:
    for worker in cluster.spec.workers:
        need = result.profile.need_for(worker.profile.name)
        attempts = result.attempts.get(worker.name, [])
        until = timedelta(seconds=need.until_delay_s) if need.until_delay_s is not None else None
        if not attempts or not observed_enough(
            attempts, result.curves[worker.name], min_restarts=need.min_restarts, until_delay=until
        ):
            return False
    return True


def _judge(result: CheckResult) -> None:
    for worker, curve in result.curves.items():
        attempts = result.attempts.get(worker, [])
        if attempts:
            result.verdicts[worker] = judge_worker(
                attempts, curve, worker=worker, node=result.nodes[worker]
            )
    # Interrupted, still running or in error: the verdicts are kept, but no
    # pass or fail is claimed from them.
    if result.status in ("interrupted", "running", "error"):
        return
    all_passed = len(result.verdicts) == len(result.curves) and all(
        v.passed for v in result.verdicts.values()
    )
    if result.status == "observed":
        result.status = "passed" if all_passed else "failed"
    else:
        result.status = "failed"
