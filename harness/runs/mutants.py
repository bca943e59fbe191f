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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.cluster.kubeletput import put_image_kubelet_back, put_kubelet
from harness.cluster.lifecycle import Cluster
from harness.core import pins
from harness.outputs.mutants import MutantResult, Outcome
from harness.outputs.summary import RunSummary
from harness.outputs.summaryfile import read_summary
from harness.runs.check import CheckResult, run_check
from harness.runs.checkprofiles import CheckProfile
from harness.runs.lifecycle import worker_nodes
from harness.substrate.kubeletbuild import Kubelet, kubelet_from_patch
from harness.substrate.mutantset import Mutant

Progress = Callable[[str], None]


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
        judged = judge_mutant(one, result, read_summary(result.run_dir))
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


def judge_mutant(one: BuiltMutant, result: CheckResult, summary: RunSummary) -> MutantResult:
    """Killed, survived or error, from one check's verdicts (see the module's rules)."""
    mutant = one.mutant
    workers = {w.worker: w for w in summary.workers}
    target = workers.get(mutant.target)
    controls_failed = tuple(
        f"{w.worker}: {(w.failures or w.problems or ('failed',))[0]}"
        for name, w in workers.items()
        if name != mutant.target and "/" not in name and not w.passed
    )
    outcome: Outcome
    if result.status == "interrupted":
        outcome = "interrupted"
    elif summary.status == "error" or controls_failed or target is None:
        outcome = "error"
    elif target.passed:
        outcome = "survived"
    else:
        outcome = "killed"
    by = restart = decided = None
    if outcome == "killed":
        decided, by = result.decided.get(mutant.target, (None, None))
        verdict = result.verdicts.get(mutant.target)
        failed = [c for c in verdict.checks if not c.passed] if verdict else []
        restart = failed[0].n if failed else None
        if by is None:
            by = (target.failures if target else ())[0] if target and target.failures else None
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
        check_run=Path(result.run_dir).name,
        check_status=summary.status,
    )
