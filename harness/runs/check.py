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
from typing import Any, Final

from kubernetes import client

from harness.cluster import kubeletstate
from harness.core import pins, timeouts
from harness.model.backoff import BackoffCurve
from harness.cluster.lifecycle import Cluster
from harness.core.errors import HarnessError
from harness.outputs.junit import write_junit
from harness.cluster.liveconfig import NodeConfigRow
from harness.pods.skeleton import MAIN_CONTAINER, conformance_pod, crashing_pod
from harness.recording.recorder import Observer, Recorder
from harness.recording.records import AttemptRecord
from harness.runs.lifecycle import RunState, apply_ending, clean_up, gather_evidence, prepare_run, run_ending, stop_reason
from harness.outputs.summary import ClusterInfo, RunSummary, outcome_of, summarize, write_summary
from harness.verdict import Observation, WorkerVerdict, judge_worker, observed_enough, restarts_needed

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Need:
    """What one worker must show before it can be judged."""

    min_restarts: int | None = None
    until_delay_s: float | None = None

    @property
    def until_delay(self) -> timedelta | None:
        return None if self.until_delay_s is None else timedelta(seconds=self.until_delay_s)


@dataclass(frozen=True)
class Variant:
    """A workload that does not exit at once, beside the bare one on one worker.

    The bare container cannot show two rules of the curve: the back-off counts
    from the container's exit (a container that runs R seconds must still
    wait the full back-off after it), and a run longer than the reset
    threshold starts a fresh curve (its next restart is immediate).
    ``subject`` names it in the results (``<worker>/<name>``).
    """

    name: str
    profile: str  # the worker profile it runs beside
    args: tuple[str, ...]
    need: Need

    def subject(self, worker: str) -> str:
        return f"{worker}/{self.name}"


@dataclass(frozen=True)
class NeedRule:
    """What every worker must show, in terms of its own curve, not its profile's name.

    Restarts up to the first at the level min(cap, ``level_limit_s``), the cap
    ``cap_times`` times where the cap lies below that limit (a second capped
    restart shows that the cap holds), and at least ``min_restarts`` as far as
    those fit in ``floor_budget_s`` of nominal waits (many samples of a fast
    curve, without stretching a slow one). A new profile file therefore needs
    no code: its curve says what it must show.
    """

    level_limit_s: float
    min_restarts: int
    cap_times: int = 1
    floor_budget_s: float = 120.0

    def need(self, curve: BackoffCurve) -> Need:
        limit = timedelta(seconds=self.level_limit_s)
        highest = restarts_needed(curve, until_delay=min(curve.maximum, limit))
        if curve.maximum < limit:
            highest += self.cap_times - 1
        floor, waited = 0, timedelta(0)
        for n in range(1, self.min_restarts + 1):
            waited += curve.delay_before_restart(n)
            if waited > timedelta(seconds=self.floor_budget_s):
                break
            floor = n
        return Need(min_restarts=max(highest, floor))


@dataclass(frozen=True)
class CheckProfile:
    name: str
    timeout_s: float
    rule: NeedRule
    # By worker name: a need that replaces the rule's (drills that watch one
    # worker closely, or a level beyond the rule's limit).
    overrides: Mapping[str, Need] = field(default_factory=dict)
    # A fixed window (the demo): what was measured by the deadline is judged,
    # rather than the run failing for not reaching every need.
    fixed_window: bool = False
    variants: tuple[Variant, ...] = ()

    def need_for(self, worker: str, curve: BackoffCurve) -> Need:
        return self.overrides.get(worker) or self.rule.need(curve)


# Each attempt works 5s, then crashes: restart n must still wait the full
# back-off after the exit, not after the start (a kubelet counting from the
# start would restart at once).
RUNS_5S: Final = Variant(
    "runs-5s",
    "fast",
    ("--mode", "run", "--run-for", "5s", "--exit-code", "1"),
    Need(min_restarts=4),
)
# Three quick crashes, then one attempt that runs past the 600s reset
# threshold: its restart is immediate and starts a fresh curve. The control
# runs 590s and must not reset.
RESET_610S: Final = Variant(
    "reset-610s",
    "reduced",
    ("--mode", "run-once", "--fail-times", "3", "--run-for", "610s", "--exit-code", "1"),
    Need(min_restarts=6),
)
CONTROL_590S: Final = Variant(
    "control-590s",
    "reduced",
    ("--mode", "run-once", "--fail-times", "3", "--run-for", "590s", "--exit-code", "1"),
    Need(min_restarts=6),
)


# How often the wait loop judges again when no record arrives (a period, not a wait).
RECHECK_EVERY_S: Final = 1.0

CHECK_PROFILES: Final = {
    # About 3 minutes: the fast curve ten times, every other curve up to its
    # first capped restart or its 80s level (the reduced curve's 60s cap is the
    # level that a 30s max would imitate in the delay window alone).
    "quick": CheckProfile(
        "quick",
        timeouts.CHECK_QUICK,
        NeedRule(level_limit_s=80, min_restarts=10),
        variants=(RUNS_5S,),
    ),
    # About 12 minutes: curves capped below 300s reach their cap twice, the
    # default curve its 300s cap once; a curve reset by a 610s run and its
    # 590s control.
    "full": CheckProfile(
        "full",
        timeouts.CHECK_FULL,
        NeedRule(level_limit_s=300, min_restarts=20, cap_times=2),
        variants=(RUNS_5S, RESET_610S, CONTROL_590S),
    ),
}


@dataclass(kw_only=True)
class CheckResult(RunState):
    """What a check observed and concluded."""

    profile: CheckProfile
    rows: list[NodeConfigRow]
    # Keyed by subject: a worker's name for its bare crashing container,
    # "<worker>/<variant>" for a variant beside it (see Variant).
    curves: dict[str, BackoffCurve]  # subject -> curve of its worker's live config
    nodes: dict[str, str]  # subject -> node
    needs: dict[str, Need] = field(default_factory=dict)  # subject -> what it must show
    pods: dict[str, str] = field(default_factory=dict)  # pod name -> subject
    attempts: dict[str, list[AttemptRecord]] = field(default_factory=dict)
    verdicts: dict[str, WorkerVerdict] = field(default_factory=dict)
    # worker -> (seconds after the pods were created, first failure), for
    # workers decided before the end: what gave the kubelet away, and when.
    decided: dict[str, tuple[float, str]] = field(default_factory=dict)
    # worker -> (attempt, back-off) the kubelet reports for its next, pending attempt.
    pending: dict[str, tuple[int, float]] = field(default_factory=dict)
    # worker -> the node's clock at its last listing: "now" for overdue restarts.
    node_now_ns: dict[str, int] = field(default_factory=dict)
    # worker -> node-clock spans in which its node was not observed (frozen, paused).
    unobserved: dict[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)


def _by_subject(
    attempts: list[AttemptRecord], container: str, pods: Mapping[str, str]
) -> dict[str, list[AttemptRecord]]:
    grouped: dict[str, list[AttemptRecord]] = {}
    for record in attempts:
        subject = pods.get(record.pod)
        if record.container == container and subject is not None:
            grouped.setdefault(subject, []).append(record)
    return {subject: sorted(group, key=lambda r: r.attempt) for subject, group in grouped.items()}


def check_variants_have_workers(profile: CheckProfile, cluster: Cluster) -> None:
    """A variant whose worker profile no worker runs would silently not be checked: refuse."""
    running = {worker.profile.name for worker in cluster.spec.workers}
    missing = [v for v in profile.variants if v.profile not in running]
    if missing:
        raise HarnessError(
            f"the {profile.name} check runs {', '.join(v.name for v in missing)} beside a worker "
            f"with profile {', '.join(sorted({v.profile for v in missing}))}, and no worker of "
            f"cluster {cluster.spec.name} has it (profiles: {', '.join(sorted(running))})",
            "give one worker that profile in the cluster spec",
        )


def _subjects(
    result: CheckResult, cluster: Cluster, run_id: str, image: str
) -> list[dict[str, Any]]:
    """Every pod of the check, registering each subject's curve, node, need and pod."""
    pods: list[dict[str, Any]] = []
    for worker in list(result.curves):
        profile_name = cluster.spec.worker(worker).profile.name
        manifest = crashing_pod(worker, run_id, image)
        pods.append(manifest)
        result.needs[worker] = result.profile.need_for(worker, result.curves[worker])
        result.pods[manifest["metadata"]["name"]] = worker
        for variant in result.profile.variants:
            if variant.profile != profile_name:
                continue
            subject = variant.subject(worker)
            name = f"{variant.name}-{worker}"
            pods.append(conformance_pod(name, worker, run_id, image, list(variant.args)))
            result.curves[subject] = result.curves[worker]
            result.nodes[subject] = result.nodes[worker]
            result.needs[subject] = variant.need
            result.pods[name] = subject
    return pods


def run_check(
    cluster: Cluster,
    profile: CheckProfile,
    progress: Progress,
    *,
    on_sample: Callable[[CheckResult], None] | None = None,
    stop: threading.Event | None = None,
    expected_curves: Mapping[str, BackoffCurve] | None = None,
    observer: Observer = "events",
) -> CheckResult:
    """Run the conformance observation and judge every worker; never raises on a bad verdict.

    ``stop`` ends the observation early from another thread (as SIGINT does in
    this one): the run is judged on what was measured and marked interrupted.
    ``expected_curves`` (worker -> curve) replaces the curves of the live
    configs, which are then not required to match the profiles: the mutation
    drill runs kubelets on a neighbour config and tells the check the original.
    """
    check_variants_have_workers(profile, cluster)
    setup = prepare_run(
        cluster,
        f"check-{profile.name}",
        progress,
        require_profiles=expected_curves is None,
        observer=observer,
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
        nodes=dict(nodes),
    )
    core = client.CoreV1Api(api)
    kubelets_before = kubeletstate.snapshot(list(nodes.values()))
    try:
        recorder.start()
        for pod in _subjects(result, cluster, run_id, image):
            core.create_namespaced_pod(namespace, pod)
        _observe(result, recorder, on_sample, stop)
    except KeyboardInterrupt:
        result.status = "interrupted"
        result.reason = "interrupted (a signal) before every worker was observed"
    finally:
        recorder.stop()
        result.observer = recorder.cost
        _take_sample(result, recorder)
        result.recorder_errors = list(recorder.errors.messages)
        _judge(result, _required_restarts(result))
        ending = run_ending(kubelets_before)
        apply_ending(result, ending)
        result.finished_at = datetime.now(UTC)
        write_outputs(result, cluster)
        gather_evidence(api, cluster, namespace, result, ending)
        clean_up(api, namespace, ending.engine_gone)
    return result


def _observe(
    result: CheckResult,
    recorder: Recorder,
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
        must_end = stop_reason(recorder)
        if must_end is not None:
            result.status, result.reason = "error", must_end
            return
        # A fixed window is watched to its end, whatever was seen already.
        undecided = _undecided(result)
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
        recorder.wait_for_change(timeout=RECHECK_EVERY_S)


def _take_sample(result: CheckResult, recorder: Recorder) -> None:
    """What the recorder knows now: attempts, pending levels, each node's clock."""
    result.attempts = _by_subject(recorder.attempts(), MAIN_CONTAINER, result.pods)
    pending = recorder.pending_backoffs()
    for worker, node in result.nodes.items():
        records = result.attempts.get(worker, [])
        found = pending.get((records[-1].pod_uid, MAIN_CONTAINER)) if records else None
        # Only the restart right after the last recorded one is pending; a level
        # kept from before that restart happened belongs to it, not the next.
        if found is not None and found[0] == records[-1].attempt + 1:
            result.pending[worker] = found
        else:
            result.pending.pop(worker, None)
        listed = recorder.listed_at_ns(node)
        if listed is not None:
            result.node_now_ns[worker] = listed
        result.unobserved[worker] = tuple(recorder.unobserved(node))


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
        unobserved=result.unobserved.get(worker, ()),
    )


def summary_of(result: CheckResult, cluster: Cluster) -> RunSummary:
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
        outcome=outcome_of(result.status),
        reason="; ".join(filter(None, [result.reason, *result.recorder_errors[:3]])),
        observer=result.observer,
    )


def write_outputs(result: CheckResult, cluster: Cluster) -> RunSummary:
    """summary.json and junit.xml in the run directory (attempts.jsonl is already there)."""
    summary = summary_of(result, cluster)
    write_summary(result.run_dir, summary)
    write_junit(result.run_dir, summary)
    return summary


def _required_restarts(result: CheckResult) -> dict[str, int]:
    """subject -> the highest restart its need asks for."""
    required: dict[str, int] = {}
    for worker, curve in result.curves.items():
        need = result.needs[worker]
        required[worker] = restarts_needed(curve, need.min_restarts, need.until_delay)
    return required


def _undecided(result: CheckResult) -> list[str]:
    """Subjects that neither failed already nor showed what their need asks for."""
    undecided: list[str] = []
    for worker, curve in result.curves.items():
        if worker in result.decided:
            continue
        need = result.needs[worker]
        if not observed_enough(
            result.attempts.get(worker, []),
            curve,
            min_restarts=need.min_restarts,
            until_delay=need.until_delay,
        ):
            undecided.append(worker)
    return undecided


def _judge(result: CheckResult, required_restarts: Mapping[str, int]) -> None:
    """The final verdict of every worker; completeness counts unless the run was cut short."""
    cut_short = result.status in ("interrupted", "running", "error")
    for worker, curve in result.curves.items():
        # A worker decided early ended its observation by design: its first
        # failure (or error) is its verdict, not a missing restart.
        finished_early = worker in result.decided
        required = (
            0
            if cut_short or result.profile.fixed_window or finished_early
            else required_restarts[worker]
        )
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
    failed = [v for v in result.verdicts.values() if not v.passed and not v.in_error]
    in_error = [v for v in result.verdicts.values() if v.in_error]
    # A window that ended before every worker showed its need is a failure
    # even when what was seen is on the curve: a pass must be earned.
    if failed or result.status == "timeout":
        result.status = "failed"
    elif in_error:
        # Late only across spans the node was not observed: neither a pass
        # nor the kubelet's failure.
        result.status = "error"
    else:
        result.status = "passed"
    firsts = [v.failures[0] for v in (*failed, *in_error)]
    if firsts:
        result.reason = "; ".join([*filter(None, [result.reason]), *firsts])
