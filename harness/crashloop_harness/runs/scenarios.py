"""Run the scenarios on every worker at once and write the run directory.

Like the conformance check (:mod:`crashloop_harness.runs.check`): one namespace at the
`restricted` level, one :class:`~crashloop_harness.recording.recorder.Recorder` for every
container attempt in it, waits on conditions (records arriving, pods turning
Ready) under named timeouts, then per-worker metrics against each node's live
curve. All requested scenarios share the namespace and the observation, so
the whole run takes about as long as its longest scenario.

The scenarios read the workload's own logs through
:class:`~crashloop_harness.runs.liverun.LiveRun`. On an existing cluster its attempts
come from the workload's own reports (termination messages), and the
containers still running at the end are stopped with their grace period so
that they too report when they started.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final

from kubernetes import client

from crashloop_harness.cluster.liveconfig import NodeConfigRow
from crashloop_harness.cluster.target import RunEnding, RunTarget
from crashloop_harness.core import timeouts
from crashloop_harness.core.conventions import RUN_LABEL
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.polling import poll_true
from crashloop_harness.core.progress import Progress
from crashloop_harness.model.backoff import BackoffCurve, curve_fields
from crashloop_harness.outputs.summary import (
    KIND_SCENARIO_PREFIX,
    PROFILE_SCENARIOS,
    MetricSummary,
    RunSummary,
    outcome_of,
    summarize,
)
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.runs.ending import apply_ending, stop_reason
from crashloop_harness.runs.execute import execute
from crashloop_harness.runs.lifecycle import (
    RunSetup,
    RunState,
    prepare_run,
    publish,
)
from crashloop_harness.runs.liverun import LiveRun
from crashloop_harness.scenarios import REGISTRY, SCENARIOS
from crashloop_harness.scenarios.common import Scenario, Subject, Watch, WorkerResult

# How often the wait loop re-checks pods when no record arrives.
POLL: Final = 1.0
# How often the end of an existing cluster's run looks for its pods' deletion.
DRAIN_POLL: Final = 0.5


@dataclass(kw_only=True)
class ScenarioRun(RunState):
    """What a scenario run observed and concluded."""

    scenarios: tuple[str, ...]
    curves: dict[str, BackoffCurve]  # worker -> curve of its live kubelet config
    nodes: dict[str, str]  # worker -> node
    rows: list[NodeConfigRow] = field(default_factory=list)
    results: dict[str, dict[str, WorkerResult]] = field(default_factory=dict)

    @property
    def failures(self) -> list[str]:
        return [f for by in self.results.values() for r in by.values() for f in r.failures]

    def result(self, scenario: str, worker: str) -> WorkerResult:
        try:
            return self.results[scenario][worker]
        except KeyError:
            raise KeyError(
                f"no {scenario} result for worker {worker} (run {self.status}: {self.reason})"
            ) from None


def run_scenarios(
    cluster: RunTarget,
    progress: Progress,
    scenarios: Iterable[str] = SCENARIOS,
    *,
    stop: threading.Event | None = None,
    on_sample: Callable[[Sequence[AttemptRecord]], None] | None = None,
    catalog: Mapping[str, Scenario] = REGISTRY,
) -> ScenarioRun:
    """Run ``scenarios`` on every worker at once; never raises on a failed metric.

    ``catalog`` holds the scenarios by name, at the sizes asked for
    (:func:`~crashloop_harness.scenarios.sized_registry`).

    ``stop`` ends the observation early from another thread (the demo's Ctrl-C):
    what was measured is kept and the run is marked interrupted.
    """
    wanted = tuple(s for s in SCENARIOS if s in set(scenarios))
    unknown = set(scenarios) - set(SCENARIOS)
    if unknown or not wanted:
        raise HarnessError(
            f"unknown scenarios {sorted(unknown)}" if unknown else "no scenario to run",
            f"choose from {', '.join(SCENARIOS)}",
        )
    restarting = [name for name in wanted if catalog[name].restarts_kubelets]
    if restarting and len(wanted) > 1:
        raise HarnessError(
            f"{', '.join(restarting)} restarts the workers' kubelets, which wipes the back-off "
            f"of every other scenario beside it ({', '.join(set(wanted) - set(restarting))})",
            "run it in a run of its own",
        )
    setup = prepare_run(cluster, "scenarios", progress)
    result = ScenarioRun(
        run_id=setup.run_id,
        run_dir=setup.run_dir,
        scenarios=wanted,
        curves=setup.curves,
        nodes=setup.nodes,
        rows=list(setup.rows),
    )
    progress(f"scenarios: {', '.join(wanted)}")
    live = LiveRun(
        client.CoreV1Api(setup.api),
        setup.namespace,
        setup.run_id,
        setup.image,
        setup.nodes,
        setup.recorder,
        capabilities=cluster.capabilities,
        place=cluster.place,
        kubelet_versions={row.worker: row.kubelet_version for row in setup.rows if row.worker},
    )
    if stop is not None:
        live.interrupt = stop
    watches: dict[str, Watch] = {name: catalog[name].watch(live) for name in wanted}
    steps = _ScenarioSteps(live, watches, catalog, progress, on_sample)
    return execute(cluster, setup, result, steps)


@dataclass
class _ScenarioSteps:
    """The scenarios' part of the run lifecycle (crashloop_harness.runs.execute)."""

    live: LiveRun
    watches: Mapping[str, Watch]
    catalog: Mapping[str, Scenario]
    progress: Progress
    on_sample: Callable[[Sequence[AttemptRecord]], None] | None
    interrupted_reason: str = "interrupted (a signal) before every scenario was observed"

    def deploy(self, setup: RunSetup, result: ScenarioRun) -> None:
        live = self.live
        for name in result.scenarios:
            for worker in live.nodes:
                for manifest in self.catalog[name].manifests(worker, setup.run_id, setup.image):
                    live.create_object(manifest)
        setup.recorder.trace.write(
            "context",
            run="scenarios",
            run_id=setup.run_id,
            namespace=setup.namespace,
            observer=live.recorder.observer,
            scenarios=list(result.scenarios),
            image=setup.image,
            kubelet_versions=live.kubelet_versions,
            nodes=live.nodes,
            curves={worker: curve_fields(curve) for worker, curve in result.curves.items()},
        )

    def observe(self, setup: RunSetup, result: ScenarioRun) -> None:
        result.status, result.reason = observe_scenarios(
            self.live, self.watches, self.progress, self.on_sample
        )

    def stop(self, setup: RunSetup, result: ScenarioRun) -> None:
        """The watches stopped; on an existing cluster, the pods' files read and the pods
        ended first: only then have their running containers reported their starts."""
        live = self.live
        live.stopping.set()
        for watch in self.watches.values():
            watch.stop()
        if not live.capabilities.node_command:
            for watch in self.watches.values():
                watch.collect()
            _end_pods_gracefully(live, self.progress)
        live.recorder.stop()
        result.observer = live.recorder.cost
        result.saturated = live.recorder.saturated()
        result.kubelets_restarted_by_run = dict(live.kubelets_restarted)

    def conclude(self, setup: RunSetup, result: ScenarioRun, ending: RunEnding) -> None:
        conclude_scenarios(result, self.live, self.watches, ending)

    def write(self, setup: RunSetup, result: ScenarioRun, cluster: RunTarget) -> None:
        write_outputs(result, cluster)
        if result.observer is not None:
            self.progress(result.observer.headline())
        self.progress(f"run {result.run_id}: {result.status}; outputs in {result.run_dir}")


def conclude_scenarios(
    result: ScenarioRun, live: LiveRun, watches: Mapping[str, Watch], ending: RunEnding
) -> None:
    """Read the pods' files (own cluster), measure every metric, conclude, apply the ending.

    Everything after the recorder stopped that judges rather than touches the
    cluster: a replay of the run's trace calls it too.
    """
    if ending.engine_gone is None and live.capabilities.node_command:
        for watch in watches.values():
            watch.collect()
    attempts = live.recorder.attempts()
    result.results = compute(watches, result.curves, live.nodes, attempts)
    result.recorder_errors = list(live.recorder.errors.messages) + live.errors
    _conclude(result)
    apply_ending(result, ending)


def _end_pods_gracefully(live: LiveRun, progress: Progress) -> None:
    """Delete the run's pods with their grace period; wait until the watch saw each end.

    A container still running (the sidecar's app, the recovered transient)
    then exits on SIGTERM and reports its start; the kubelet posts that
    status (every container stopped) before the pod is gone.
    """
    ours = f"{RUN_LABEL}={live.run_id}"
    try:
        pods = live.core.list_namespaced_pod(
            live.namespace, label_selector=ours, _request_timeout=timeouts.API_REQUEST
        ).items
        uids = {pod.metadata.uid for pod in pods}
        live.core.delete_collection_namespaced_pod(
            live.namespace, label_selector=ours, _request_timeout=timeouts.API_REQUEST
        )
    except client.ApiException as error:
        live.problem(f"ending the run's pods: {error.status} {error.reason}")
        return
    progress(f"ending {len(uids)} pod(s) with their grace period, for their last reports")
    if not poll_true(
        lambda: uids <= live.recorder.ended_pod_uids(), within=timeouts.POD_DRAIN, every=DRAIN_POLL
    ):
        left = len(uids - live.recorder.ended_pod_uids())
        live.problem(
            f"{left} pod(s) still running {timeouts.POD_DRAIN:.0f}s after their deletion: "
            "the containers running when the run ended have no recorded start"
        )


def observe_scenarios(
    live: LiveRun,
    watches: Mapping[str, Watch],
    progress: Progress,
    on_sample: Callable[[Sequence[AttemptRecord]], None] | None = None,
) -> tuple[str, str]:
    """Wait until every scenario has shown what it needs, or the timeout.

    ``on_sample`` sees every attempt recorded so far, at each look (the demo
    shows the scenarios live from it).
    """
    deadline = time.monotonic() + timeouts.SCENARIOS
    last = ""
    while True:
        if on_sample is not None:
            on_sample(live.recorder.attempts())
        pending = [item for watch in watches.values() for item in watch.pending()]
        if not pending:
            return "observed", ""
        must_end = stop_reason(live.recorder, made=live.kubelets_restarted)
        if must_end is not None:
            return "error", must_end
        if live.interrupt.is_set():
            return "interrupted", f"stopped while waiting for: {'; '.join(pending[:3])}"
        if time.monotonic() > deadline:
            return "timeout", f"still waiting after {timeouts.SCENARIOS:.0f}s: {'; '.join(pending)}"
        # Say what is awaited whenever that changes, not every poll.
        waiting = "; ".join(pending[:3]) + (f" (+{len(pending) - 3})" if len(pending) > 3 else "")
        if waiting != last:
            last = waiting
            progress(f"waiting: {waiting}")
        live.recorder.wait_for_change(timeout=POLL)


def compute(
    watches: Mapping[str, Watch],
    curves: Mapping[str, BackoffCurve],
    nodes: Mapping[str, str],
    attempts: list[AttemptRecord],
) -> dict[str, dict[str, WorkerResult]]:
    """Every scenario's metrics per worker, from what was recorded and read."""
    return {
        scenario: {
            worker: watch.measure(Subject(worker, nodes.get(worker, ""), curve), attempts)
            for worker, curve in curves.items()
        }
        for scenario, watch in watches.items()
    }


def _conclude(result: ScenarioRun) -> None:
    if result.status in ("interrupted", "error"):
        return
    all_passed = all(r.passed for by in result.results.values() for r in by.values())
    if result.status == "observed":
        result.status = "passed" if all_passed else "failed"
        if not all_passed:
            result.reason = f"{len(result.failures)} metric(s) outside the model's tolerance"
    else:
        result.status = "failed"


# --- outputs ------------------------------------------------------------------------------


def summary_of(result: ScenarioRun, cluster: RunTarget) -> RunSummary:
    """summary.json in the model every run writes: each metric per scenario and worker."""
    return summarize(
        run_id=result.run_id,
        kind=f"{KIND_SCENARIO_PREFIX}{'+'.join(result.scenarios)}",
        profile=PROFILE_SCENARIOS,
        started_at=result.started_at,
        finished_at=result.finished_at or datetime.now(UTC),
        cluster=cluster.describe(result.rows),
        verdicts=[],
        configs=[],
        attempts_recorded={},
        outcome=outcome_of(result.status),
        reason=result.reason,
        observer=result.observer,
        recorder_notes=result.recorder_errors,
        stopped_kubelets=result.stopped_kubelets,
        metrics=[
            MetricSummary(
                scenario=scenario,
                worker=worker,
                node=worker_result.node,
                name=metric.name,
                unit=metric.unit,
                expected=metric.expected,
                measured=metric.measured,
                lower=metric.lower,
                upper=metric.upper,
                passed=metric.passed,
                detail=metric.detail,
                message=worker_result.message(metric),
            )
            for scenario, by_worker in result.results.items()
            for worker, worker_result in by_worker.items()
            for metric in worker_result.metrics
        ],
    )


def write_outputs(result: ScenarioRun, cluster: RunTarget) -> RunSummary:
    """summary.json and junit.xml, as a check writes them (attempts.jsonl is already there);
    the summary kept on ``result`` too, for the run's caller."""
    result.summary = publish(result.run_dir, summary_of(result, cluster))
    return result.summary
