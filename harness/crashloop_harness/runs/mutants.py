"""Kubelet code mutants judged: each built, swapped into the worker whose curve it
bends most, checked there with the other workers as controls in the same run, and
the image's kubelet put back.

A mutant is killed when its worker fails the check and every other worker
passes; a control worker failing makes the mutant's run an error (the
cluster, not the mutant, may be at fault). The control build (the release
with no change) must survive: the set is worthless if the build itself fails.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from crashloop_harness.cluster.kube import worker_nodes
from crashloop_harness.cluster.kubeletput import put_image_kubelet_back, put_kubelet
from crashloop_harness.cluster.lifecycle import Cluster
from crashloop_harness.core import pins
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.progress import Progress
from crashloop_harness.model.subject import worker_of
from crashloop_harness.outputs.mutants import MutantResult, Outcome
from crashloop_harness.outputs.summary import RunSummary
from crashloop_harness.outputs.summaryfile import read_summary
from crashloop_harness.recording.trace import TRACE_FILE, read_trace
from crashloop_harness.runs.check import run_check
from crashloop_harness.runs.checkprofiles import CheckProfile
from crashloop_harness.substrate.kubeletbuild import Kubelet, kubelet_from_patch
from crashloop_harness.substrate.mutantset import Mutant


@dataclass(frozen=True)
class BuiltMutant:
    mutant: Mutant
    kubelet: Kubelet
    build_s: float


def build_all(
    mutants: Sequence[Mutant], pin: pins.KubernetesPin, progress: Progress
) -> list[BuiltMutant]:
    """Every mutant's kubelet, built (or found in the cache) before any cluster is touched."""
    built = []
    for mutant in mutants:
        started = time.monotonic()
        kubelet = kubelet_from_patch(mutant.patch, pin)
        took = time.monotonic() - started
        progress(f"mutant {mutant.name}: kubelet built in {took:.0f}s ({kubelet.sha256[:12]})")
        built.append(BuiltMutant(mutant, kubelet, took))
    return built


@dataclass
class MutantRun:
    results: list[MutantResult] = field(default_factory=list)
    interrupted: bool = False


def run_mutants(
    cluster: Cluster,
    built: Sequence[BuiltMutant],
    profile: CheckProfile,
    progress: Progress,
    on_result: Callable[[MutantResult], None] = lambda _result: None,
) -> MutantRun:
    """Each mutant in turn on its target worker; the image's kubelet back after each."""
    nodes = worker_nodes(cluster.api())
    run = MutantRun()
    for node in nodes.values():  # nothing left swapped by an earlier run
        put_image_kubelet_back(cluster, node, progress)
    for one in built:
        node = nodes[one.mutant.target]
        try:
            put_kubelet(cluster, node, one.kubelet, progress)
            progress(f"mutant {one.mutant.name} on {one.mutant.target}: check {profile.name}")
            result = run_check(cluster, profile, progress)
        finally:
            put_image_kubelet_back(cluster, node, progress)
        check = CheckOfMutant(
            result.written_summary(),
            result.decided,
            Path(result.run_dir),
            interrupted=result.status == "interrupted",
        )
        judged = judge_mutant(one, check)
        progress(
            f"mutant {one.mutant.name}: {judged.outcome}"
            + (f" by {judged.by}" if judged.by else "")
        )
        run.results.append(judged)
        on_result(judged)
        if result.status == "interrupted":
            run.interrupted = True
            break
    return run


@dataclass(frozen=True)
class CheckOfMutant:
    """What one mutant's check left: its summary, what it decided early and when."""

    summary: RunSummary
    # subject -> (seconds after the pods were created, its first failure)
    decided: Mapping[str, tuple[float, str]]
    run_dir: Path
    interrupted: bool = False


def _of_worker(subject: str, worker: str) -> bool:
    """A worker's own container and the variants beside it ("default/runs-5s") are its."""
    return worker_of(subject) == worker


def judge_mutant(one: BuiltMutant, check: CheckOfMutant) -> MutantResult:
    """Killed, survived or error, from one check's verdicts (see the module's rules).

    The target worker's variants are the target: a mutant that counts the
    back-off from the container's start shows only beside it, on the pod that
    runs 5 s. Every other worker, with its variants, is a control.
    """
    mutant, summary = one.mutant, check.summary
    targets = [w for w in summary.workers if _of_worker(w.worker, mutant.target)]
    controls_failed = tuple(
        f"{w.worker}: {(w.failures or w.problems or ('failed',))[0]}"
        for w in summary.workers
        if not _of_worker(w.worker, mutant.target) and not w.passed
    )
    failing = [w for w in targets if not w.passed]
    outcome: Outcome
    if check.interrupted:
        outcome = "interrupted"
    elif summary.status == "error" or controls_failed or not targets:
        outcome = "error"
    elif not failing:
        outcome = "survived"
    else:
        outcome = "killed"
    by = restart = decided = None
    if outcome == "killed":
        # The earliest decision among the target's subjects, else its first failure.
        found = sorted(v for k, v in check.decided.items() if _of_worker(k, mutant.target))
        decided, by = found[0] if found else (None, None)
        if by is None:
            by = (failing[0].failures or failing[0].problems or (None,))[0]
        culprit = next(
            (w for w in failing if by is not None and by.startswith(w.worker + ":")), failing[0]
        )
        failed_checks = [c for c in culprit.checks if not c.passed]
        restart = failed_checks[0].n if failed_checks else None
    return MutantResult(
        name=mutant.name,
        changes=mutant.changes,
        target=mutant.target,
        outcome=outcome,
        expected="survived" if mutant.is_control else "killed",
        by=by,
        restart=restart,
        decided_after_s=decided,
        controls_failed=controls_failed,
        build_s=round(one.build_s, 1),
        kubelet_sha256=one.kubelet.sha256,
        check_run=check.run_dir.name,
        check_status=summary.status,
    )


def check_of_run(run_dir: Path) -> CheckOfMutant:
    """A finished check run read back for judging again: its summary and its trace's decisions."""
    decided: dict[str, tuple[float, str]] = {}
    for entry in read_trace(run_dir / TRACE_FILE):
        if entry.kind == "outcome":
            found = entry.fields.get("decided", {})
            decided = {k: (float(v[0]), str(v[1])) for k, v in found.items()}
    summary = read_summary(run_dir)
    return CheckOfMutant(summary, decided, run_dir, interrupted=summary.status == "interrupted")


def rejudge(
    written: Mapping[str, object], mutants: Sequence[Mutant], runs: Path
) -> list[MutantResult]:
    """A finished run's mutants attributed again by today's rules (which workers count as the
    target's, which restart killed it), from the check runs it kept (their summaries and
    traces' decisions under ``runs``, their verdicts as judged then); nothing is built or run."""
    by_name = {mutant.name: mutant for mutant in mutants}
    rows = written.get("mutants")
    if not isinstance(rows, list):
        raise HarnessError("mutants.json has no list of mutants", "give a mutants run's directory")
    results = []
    for row in rows:
        mutant = by_name.get(str(row["name"]))
        if mutant is None:
            raise HarnessError(
                f"mutants.json names {row['name']}, which the kept set no longer has",
                "judge it with the harness version that ran it",
            )
        kubelet = Kubelet(Path("-"), str(row["kubelet_sha256"]), "", "as built then")
        check = check_of_run(runs / str(row["check_run"]))
        results.append(judge_mutant(BuiltMutant(mutant, kubelet, float(row["build_s"])), check))
    return results
