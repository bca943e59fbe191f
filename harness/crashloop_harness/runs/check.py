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

from crashloop_harness.cluster.liveconfig import NodeConfigRow
from crashloop_harness.cluster.target import RunEnding, RunTarget
from crashloop_harness.core import timeouts
from crashloop_harness.core.progress import Progress
from crashloop_harness.model.backoff import BackoffCurve, curve_fields
from crashloop_harness.model.subject import is_bare
from crashloop_harness.outputs.summary import RunSummary, outcome_of, summarize
from crashloop_harness.pods.notrunning import is_refusal
from crashloop_harness.pods.skeleton import (
    MAIN_CONTAINER,
    conformance_pod,
    crashing_pod,
    pace_pod,
    probe_pod,
)
from crashloop_harness.recording.nodepods import PodStartup
from crashloop_harness.recording.pace import CPU_BURST, PACE_EVERY_S
from crashloop_harness.recording.podpace import pace_pod_name
from crashloop_harness.recording.recorder import AttemptRecorder, Observer
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.runs.checkprofiles import CheckProfile, Need, check_variants_have_workers
from crashloop_harness.runs.ending import apply_ending, stop_reason
from crashloop_harness.runs.execute import execute
from crashloop_harness.runs.lifecycle import (
    RunSetup,
    RunState,
    prepare_run,
    publish,
)
from crashloop_harness.verdict import (
    Observation,
    WorkerVerdict,
    judge_worker,
    observed_enough,
    restarts_needed,
)
from crashloop_harness.verdict.coverage import RuleCoverage, coverage_of, cut_windows
from crashloop_harness.verdict.nodecost import NodeCost, node_costs
from crashloop_harness.verdict.tolerances import MAX_JUDGEABLE_PACE
from crashloop_harness.verdict.worker import owed_restarts

# How often the wait loop judges again when no record arrives (a period, not a wait).
RECHECK_EVERY_S: Final = 1.0
# Restart-cost probes (pods.skeleton.probe_pod): one per worker node this often, at
# most this many, from the start of the observation (a period and a count, not waits).
PROBE_EVERY_S: Final = 20.0
PROBES_PER_NODE: Final = 8


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
    # worker -> when the runtime created its next attempt, not started yet (node clock).
    created: dict[str, int] = field(default_factory=dict)
    # worker -> the node's clock at its last listing: "now" for overdue restarts.
    node_now_ns: dict[str, int] = field(default_factory=dict)
    # worker -> the node's clock when the watch that reads levels stopped (None: running).
    levels_until_ns: dict[str, int] = field(default_factory=dict)
    # worker -> node-clock spans in which its node was not observed (frozen, paused).
    unobserved: dict[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    # node -> what a restart cost it in this run, from every subject's attempts on it.
    costs: dict[str, NodeCost] = field(default_factory=dict)
    # Restart-cost probes: pod name -> node, and what they recorded (pod name -> attempts).
    probes: dict[str, str] = field(default_factory=dict)
    probe_attempts: dict[str, list[AttemptRecord]] = field(default_factory=dict)
    # subject -> restarts set aside so far (late while the host was saturated or the
    # node not observed): each owes one more restart, observed for up to
    # SET_ASIDE_EXTENSION times the profile's window.
    set_aside: dict[str, int] = field(default_factory=dict)
    # subject -> why its pod cannot run its container, as the pod's status says.
    not_running: dict[str, str] = field(default_factory=dict)
    # node -> its pace probes' times so far (crashloop_harness.recording.pace).
    pace: dict[str, list[float]] = field(default_factory=dict)
    # Which probe made them (recording.pace.PROBES): each has its own reference.
    pace_probe: str = CPU_BURST
    # node -> other pods' start-ups its kubelet listed at its latest read (nodepods).
    startups: dict[str, list[PodStartup]] = field(default_factory=dict)
    # node -> why it was left out before the run (its kubelet's config unreadable).
    left_out: dict[str, str] = field(default_factory=dict)


def _by_subject(
    attempts: list[AttemptRecord], container: str, pods: Mapping[str, str]
) -> dict[str, list[AttemptRecord]]:
    grouped: dict[str, list[AttemptRecord]] = {}
    for record in attempts:
        subject = pods.get(record.pod)
        if record.container == container and subject is not None:
            grouped.setdefault(subject, []).append(record)
    return {subject: sorted(group, key=lambda r: r.attempt) for subject, group in grouped.items()}


def _subjects(
    result: CheckResult, cluster: RunTarget, run_id: str, image: str
) -> list[dict[str, Any]]:
    """Every pod of the check, registering each subject's curve, node, need and pod.

    On an existing cluster every subject is a node, its pod bound to it, and
    only the variants that run beside every worker run there (the others
    belong to the harness's own worker profiles).
    """
    pods: list[dict[str, Any]] = []
    for worker in list(result.curves):
        manifest = cluster.place(crashing_pod(worker, run_id, image), worker)
        pods.append(manifest)
        result.needs[worker] = result.profile.need_for(worker, result.curves[worker])
        result.pods[manifest["metadata"]["name"]] = worker
        profile_name = cluster.profile_of(worker)
        for variant in result.profile.variants:
            if not variant.runs_beside(profile_name):
                continue
            subject = variant.subject(worker)
            name = f"{variant.name}-{worker}"
            variant_pod = conformance_pod(name, worker, run_id, image, list(variant.args))
            pods.append(cluster.place(variant_pod, worker))
            result.curves[subject] = result.curves[worker]
            result.nodes[subject] = result.nodes[worker]
            result.needs[subject] = variant.need
            result.pods[name] = subject
    return pods


def run_check(
    cluster: RunTarget,
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
        pace=True,
    )
    result = CheckResult(
        run_id=setup.run_id,
        run_dir=setup.run_dir,
        profile=profile,
        rows=setup.rows,
        curves={**setup.curves, **(expected_curves or {})},
        nodes=dict(setup.nodes),
        left_out=dict(setup.left_out),
    )
    steps = _CheckSteps(cluster, client.CoreV1Api(setup.api), observer, on_sample, stop)
    return execute(cluster, setup, result, steps)


@dataclass
class _CheckSteps:
    """The check's part of the run lifecycle (crashloop_harness.runs.execute)."""

    cluster: RunTarget
    core: client.CoreV1Api
    observer: Observer
    on_sample: Callable[[CheckResult], None] | None
    stop_event: threading.Event | None
    interrupted_reason: str = "interrupted (a signal) before every worker was observed"

    def deploy(self, setup: RunSetup, result: CheckResult) -> None:
        for pod in _subjects(result, self.cluster, setup.run_id, setup.image):
            self.core.create_namespaced_pod(setup.namespace, pod)
        if not self.cluster.capabilities.node_command:
            # No command runs in its nodes: each node's pace comes from a pod of the run's.
            for worker in _probe_nodes(result):
                every = timedelta(seconds=PACE_EVERY_S)
                pod = pace_pod(worker, pace_pod_name(worker), setup.run_id, setup.image, every)
                self.core.create_namespaced_pod(setup.namespace, self.cluster.place(pod, worker))
        # A cluster read through the API alone records nothing else (prepare_run).
        used = self.observer if self.cluster.capabilities.node_command else "selfreport"
        setup.recorder.trace.write("context", **check_context(result, setup.namespace, used))

    def observe(self, setup: RunSetup, result: CheckResult) -> None:
        def probe(elapsed_s: float) -> None:
            self._probe(setup, result, elapsed_s)

        observe(result, setup.recorder, self.on_sample, self.stop_event, probe)

    def _probe(self, setup: RunSetup, result: CheckResult, elapsed_s: float) -> None:
        """One more restart-cost probe on every worker node, when one is due.

        None on a cluster read through the API alone (an existing one): it has
        no runtime timestamps to measure a node by (it is judged at the
        reference host's cost), and probes would only load its nodes.
        """
        if not self.cluster.capabilities.node_command:
            return
        nodes = _probe_nodes(result)
        made = len(result.probes) // max(len(nodes), 1)
        if made >= PROBES_PER_NODE or elapsed_s < made * PROBE_EVERY_S:
            return
        for worker, node in nodes.items():
            manifest = probe_pod(worker, made, setup.run_id, setup.image)
            self.core.create_namespaced_pod(setup.namespace, manifest)
            result.probes[manifest["metadata"]["name"]] = node
            setup.recorder.trace.write("probe", pod=manifest["metadata"]["name"], node=node)

    def stop(self, setup: RunSetup, result: CheckResult) -> None:
        # Before the kubelets' end state is read: nothing is recorded after it.
        finish_observation(result, setup.recorder)

    def conclude(self, setup: RunSetup, result: CheckResult, ending: RunEnding) -> None:
        conclude(result)
        apply_ending(result, ending)

    def write(self, setup: RunSetup, result: CheckResult, cluster: RunTarget) -> None:
        write_outputs(result, cluster)


def finish_observation(result: CheckResult, recorder: AttemptRecorder) -> None:
    """The observation is over: the recorder stopped, its last listing taken as the last sample,
    what observing cost and what the recorder could not read kept on the result."""
    recorder.stop()
    result.observer = recorder.cost
    take_sample(result, recorder)
    result.recorder_errors = list(recorder.errors.messages)


def conclude(result: CheckResult) -> None:
    """Every worker judged on what its last sample showed (:func:`finish_observation` first)."""
    judge(result, _required_restarts(result))


def check_context(result: CheckResult, namespace: str, observer: str) -> dict[str, Any]:
    """What a replay of this check needs besides its inputs: the subjects, curves and needs."""
    return {
        "run": "check",
        "run_id": result.run_id,
        "namespace": namespace,
        "observer": observer,
        "profile": result.profile.name,
        "timeout_s": result.profile.timeout_s,
        "fixed_window": result.profile.fixed_window,
        "nodes": result.nodes,
        "pods": result.pods,
        "curves": {subject: curve_fields(curve) for subject, curve in result.curves.items()},
        "needs": {
            subject: {"min_restarts": need.min_restarts, "until_delay_s": need.until_delay_s}
            for subject, need in result.needs.items()
        },
    }


def observe(
    result: CheckResult,
    recorder: AttemptRecorder,
    on_sample: Callable[[CheckResult], None] | None,
    stop: threading.Event | None,
    probe: Callable[[float], None] | None = None,
) -> None:
    """Wait until every worker is observed enough or decided, the window ends or a stop.

    ``probe`` is given the seconds since the start at every turn: it starts
    the restart-cost probes that are due (a replay has none to start).
    """
    profile = result.profile
    started = time.monotonic()
    while True:
        deadline = started + profile.timeout_s * (
            timeouts.SET_ASIDE_EXTENSION if any(result.set_aside.values()) else 1.0
        )
        if probe is not None:
            probe(time.monotonic() - started)
        take_sample(result, recorder)
        decide_early(result, time.monotonic() - started)
        if on_sample is not None:
            on_sample(result)
        # The check's pods are only ever deleted by its clean-up, after this loop.
        # Only pods still measured: a pod whose worker is decided (a stopped
        # kubelet's node tainted, its pods evicted minutes later) changes nothing.
        measured_pods = {pod: s for pod, s in result.pods.items() if s not in result.decided}
        must_end = stop_reason(recorder, measured_pods)
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
                    f"the {deadline - started:.0f}s observation window ended before "
                    f"{', '.join(undecided)} showed what the profile needs"
                )
            return
        recorder.wait_for_change(timeout=RECHECK_EVERY_S)


def take_sample(result: CheckResult, recorder: AttemptRecorder) -> None:
    """What the recorder knows now: attempts, pending levels, each node's clock."""
    known = recorder.attempts()
    result.attempts = _by_subject(known, MAIN_CONTAINER, result.pods)
    result.probe_attempts = _by_subject(known, MAIN_CONTAINER, {pod: pod for pod in result.probes})
    pending = recorder.pending_backoffs()
    created = recorder.created_unstarted()
    for worker, node in result.nodes.items():
        records = result.attempts.get(worker, [])
        made = created.get((records[-1].pod_uid, MAIN_CONTAINER)) if records else None
        if made is not None and made[0] == records[-1].attempt + 1:
            result.created[worker] = made[1]
        else:
            result.created.pop(worker, None)
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
        stopped = recorder.levels_until_ns(node)
        if stopped is not None:
            result.levels_until_ns[worker] = stopped
        result.unobserved[worker] = tuple(recorder.unobserved(node))
    result.saturated = recorder.saturated()
    result.startups = recorder.pod_startups()
    result.not_running = {
        subject: cause
        for pod, cause in recorder.not_running().items()
        if (subject := result.pods.get(pod)) is not None
    }
    samples_by_node = recorder.pace_samples()
    result.pace = {
        node: [sample.seconds for sample in samples] for node, samples in samples_by_node.items()
    }
    # One probe per run; a trace from before the burst names the runtime's run.
    probes = {sample.probe for samples in samples_by_node.values() for sample in samples}
    result.pace_probe = probes.pop() if len(probes) == 1 else CPU_BURST


def decide_early(result: CheckResult, elapsed_s: float) -> None:
    """Mark every worker that can no longer pass, with its first failure and when."""
    result.costs = _costs(result)
    for worker, curve in result.curves.items():
        if worker in result.decided:
            continue
        attempts = result.attempts.get(worker, [])
        if not attempts:
            cause = result.not_running.get(worker)
            if cause is not None and is_refusal(cause):
                # Refused by its node's admission (a taint, no room, another OS): it will
                # never run, and a taint's eviction deleting it next is that refusal, not
                # someone else's doing. Decided now, so the other nodes are observed on.
                result.decided[worker] = (elapsed_s, f"{worker}: the pod never ran: {cause}")
            elif elapsed_s > timeouts.POD_RUNNING:
                because = f": {cause}" if cause else ""
                result.decided[worker] = (
                    elapsed_s,
                    f"{worker}: the pod's container never ran within "
                    f"{timeouts.POD_RUNNING:.0f}s{because}",
                )
            continue
        # Only what no later record can undo decides a worker: unconfirmed levels are not
        # final while the watch may still deliver them, and the rules on the restarts taken
        # together (the cap's median over its first five) can be overturned by the next ones
        # (a sound fast worker's first five came 1.638s past its cap in median in CI on
        # 2026-12-06, its later ones under the bound).
        verdict = judge_worker(
            attempts,
            curve,
            worker=worker,
            node=result.nodes[worker],
            observation=_observation(result, worker, required_restarts=0, final=False),
            confirm_levels=False,
            together=False,
        )
        result.set_aside[worker] = _owed_so_far(result, worker, curve, attempts)
        if not verdict.passed:
            result.decided[worker] = (elapsed_s, verdict.failures[0].words)


def _owed_so_far(
    result: CheckResult, worker: str, curve: BackoffCurve, attempts: list[AttemptRecord]
) -> int:
    """The restarts a worker owes so far: those set aside at its node's pace as measured
    so far, each owed while the check can still observe one in its place. Not the early
    verdict's: judged at the widest window, it sets aside only what is late even there."""
    verdict = judge_worker(
        attempts,
        curve,
        worker=worker,
        node=result.nodes[worker],
        observation=_observation(result, worker, required_restarts=0),
        confirm_levels=False,
        together=False,
    )
    return owed_restarts(verdict.checks, verdict.cost)


def _observation(
    result: CheckResult, worker: str, *, required_restarts: int, final: bool = True
) -> Observation:
    """What a worker's verdict is judged against, its node's cost as measured so far.

    A decision made early on a cost the rest of the run revises is judged again
    at the end (judge): if it no longer holds, the worker owes its whole need.
    """
    pending = result.pending.get(worker)
    cost = result.costs.get(result.nodes[worker])
    if cost is not None and not final:
        # Judged early at the widest window the node could still be judged at: a pace
        # read from a few probes, revised later, never overturns the decision.
        cost = cost.widest()
    return Observation(
        required_restarts=required_restarts,
        now_ns=result.node_now_ns.get(worker),
        pending_reported_s=pending[1] if pending else None,
        pending_created_ns=result.created.get(worker),
        unobserved=result.unobserved.get(worker, ()),
        saturated=result.saturated,
        startups=tuple(result.startups.get(result.nodes[worker], ())),
        cost=cost,
        levels_until_ns=result.levels_until_ns.get(worker),
        not_running=result.not_running.get(worker),
        final=final,
    )


def summary_of(result: CheckResult, cluster: RunTarget) -> RunSummary:
    return summarize(
        run_id=result.run_id,
        kind="conformance",
        # Its own name: a demo or a drill is no quick check (see POOLED_PROFILES).
        profile=result.profile.name,
        started_at=result.started_at,
        finished_at=result.finished_at or datetime.now(UTC),
        cluster=cluster.describe(result.rows),
        verdicts=list(result.verdicts.values()),
        configs=result.rows,
        attempts_recorded={worker: len(records) for worker, records in result.attempts.items()},
        outcome=outcome_of(result.status),
        reason=result.reason,
        observer=result.observer,
        recorder_notes=result.recorder_errors,
        coverage=coverage(result),
        stopped_kubelets=result.stopped_kubelets,
    )


def coverage(result: CheckResult) -> dict[str, tuple[RuleCoverage, ...]]:
    """What each bare worker's verdict (its variants' included) covered of its curve's rules,
    and, on a node whose windows were cut to the widest judged, that they were."""
    return {
        worker: coverage_of(
            worker, result.verdicts, result.curves[worker], pending=result.pending.get(worker)
        )
        + _windows(result.costs.get(result.nodes.get(worker, "")))
        for worker in result.verdicts
        if is_bare(worker) and worker in result.curves
    }


def _windows(cost: NodeCost | None) -> tuple[RuleCoverage, ...]:
    if cost is None or not cost.paced or cost.pace <= MAX_JUDGEABLE_PACE:
        return ()
    return (cut_windows(cost.pace, MAX_JUDGEABLE_PACE),)


def write_outputs(result: CheckResult, cluster: RunTarget) -> RunSummary:
    """summary.json and junit.xml in the run directory (attempts.jsonl is already there);
    the summary kept on ``result`` too, for the run's caller."""
    result.summary = publish(result.run_dir, summary_of(result, cluster))
    return result.summary


def _costs(result: CheckResult) -> dict[str, NodeCost]:
    """Each node's restart cost from its subjects' and its probes' attempts."""
    probes: dict[str, list[list[AttemptRecord]]] = {}
    for pod, records in result.probe_attempts.items():
        probes.setdefault(result.probes[pod], []).append(records)
    return node_costs(
        result.attempts, result.nodes, probes, result.pace, pace_probe=result.pace_probe
    )


def _probe_nodes(result: CheckResult) -> dict[str, str]:
    """worker -> node of every bare worker: where the probes go."""
    return {worker: node for worker, node in result.nodes.items() if is_bare(worker)}


def _judged(
    result: CheckResult, worker: str, curve: BackoffCurve, *, required: int
) -> WorkerVerdict:
    return judge_worker(
        result.attempts.get(worker, []),
        curve,
        worker=worker,
        node=result.nodes[worker],
        observation=_observation(result, worker, required_restarts=required),
    )


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
            set_aside=result.set_aside.get(worker, 0),
        ):
            undecided.append(worker)
    return undecided


def judge(result: CheckResult, required_restarts: Mapping[str, int]) -> None:
    """The final verdict of every worker; completeness counts unless the run was cut short."""
    cut_short = result.status in ("interrupted", "running", "error")
    result.costs = _costs(result)
    for worker, curve in result.curves.items():
        required = 0 if cut_short or result.profile.fixed_window else required_restarts[worker]
        # A worker decided early ended its observation by design: its first
        # failure (or error) is its verdict, not a missing restart. A decision
        # the final verdict does not uphold (a pod that ran after all) waives
        # nothing: the worker must show what its need asks for.
        if worker in result.decided:
            upheld = _judged(result, worker, curve, required=0)
            if not upheld.passed:
                result.verdicts[worker] = upheld
                continue
        result.verdicts[worker] = _judged(result, worker, curve, required=required)
    # Interrupted, still running or in error: the verdicts are kept, but no
    # pass or fail is claimed from them.
    if cut_short:
        return
    failed = [v for v in result.verdicts.values() if not v.passed and not v.in_error]
    in_error = [v for v in result.verdicts.values() if v.in_error]
    # A window that ended before every worker showed its need is a failure
    # even when what was seen is on the curve: a pass must be earned.
    # A timeout short only of restarts owed for those set aside is the busy host's
    # error (those verdicts are in error), not a failure.
    if failed or (result.status == "timeout" and not in_error):
        result.status = "failed"
    elif in_error:
        # Late only across spans the node was not observed: neither a pass
        # nor the kubelet's failure.
        result.status = "error"
    else:
        result.status = "passed"
    firsts = [v.failures[0].words for v in (*failed, *in_error)]
    # A node left out was not judged: no pass claims it (the others' verdicts stand).
    left = [f"node {node} left out: {why}" for node, why in result.left_out.items()]
    if left and result.status == "passed":
        result.status = "error"
    if firsts or left:
        result.reason = "; ".join([*filter(None, [result.reason]), *firsts, *left])
