"""Kubelet mutants: the kept set reads whole, and a check's verdicts become killed,
survived or error by the rules of crashloop_harness.runs.mutants."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from crashloop_harness.core import pins
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.outputs.mutants import mutants_document
from crashloop_harness.outputs.summary import RunSummary
from crashloop_harness.runs.mutants import BuiltMutant, CheckOfMutant, judge_mutant
from crashloop_harness.scenarios import KUBELET_RESTART_SIDECAR
from crashloop_harness.substrate.kubeletbuild import Kubelet, patched_paths
from crashloop_harness.substrate.mutantset import CHECK, CONTROL, Mutant, choose, mutant_set
from tests.unit.factories import default_verdict, empty_verdict, fast_verdict, make_summary

PIN = pins.DEFAULT_KUBERNETES


def test_the_kept_set_has_ten_mutants_and_a_control_each_a_patch_the_overlay_can_carry() -> None:
    mutants = mutant_set(PIN)
    names = [m.name for m in mutants]
    assert CONTROL in names
    assert len(names) - 1 >= 10
    assert len(set(names)) == len(names)
    for mutant in mutants:
        assert patched_paths(mutant.patch.read_text()), mutant.name
        assert mutant.changes.strip(), mutant.name


def test_a_mutant_the_check_cannot_see_names_the_scenario_that_judges_it() -> None:
    by_name = {m.name: m for m in mutant_set(PIN)}
    reverted = by_name["sidecar-fix-reverted"]
    assert reverted.judged_by == KUBELET_RESTART_SIDECAR
    assert reverted.target in ("fast", "reduced", "default")
    assert patched_paths(reverted.patch.read_text()) == ["pkg/kubelet/prober/worker.go"]
    assert {m.judged_by for m in by_name.values() if m is not reverted} == {CHECK}


def test_a_release_without_mutants_is_refused() -> None:
    with pytest.raises(HarnessError, match="no kubelet mutants are written"):
        mutant_set(pins.KUBERNETES["1.33"])


def test_the_control_runs_first_and_an_unknown_name_is_refused() -> None:
    mutants = mutant_set(PIN)
    chosen = choose(mutants, "initial-5s")
    assert [m.name for m in chosen] == [CONTROL, "initial-5s"]
    with pytest.raises(HarnessError, match="no mutant nope"):
        choose(mutants, "initial-5s,nope")


def _built(target: str, name: str = "initial-5s") -> BuiltMutant:
    mutant = Mutant(name, Path("x.patch"), "changes", target, 2, "pkg/kubelet/kubelet.go:360")
    return BuiltMutant(mutant, Kubelet(Path("kubelet"), "ab" * 32, "v1.35.8", "patch"), 12.0)


def _check(summary: RunSummary, **decided: tuple[float, str]) -> CheckOfMutant:
    return CheckOfMutant(summary, decided, Path("runs/r"))


def test_a_mutant_whose_worker_fails_alone_is_killed_with_its_restart_and_time() -> None:
    # fast passes and default fails in these verdicts: a mutant on default is killed.
    summary = make_summary(fast_verdict(), default_verdict())
    verdict = default_verdict()
    judged = judge_mutant(_built("default"), _check(summary, default=(42.0, "default: restart 2")))
    assert judged.outcome == "killed"
    assert judged.as_expected
    assert judged.by == "default: restart 2"
    assert judged.decided_after_s == 42.0
    assert judged.restart == next(c.n for c in verdict.checks if not c.passed)


def test_a_mutant_caught_only_beside_its_worker_is_killed_there() -> None:
    # A back-off counted from the container's start shows only on the pod that runs 5 s.
    beside = dataclasses.replace(default_verdict(), worker="default/runs-5s")
    passing_default = make_summary(fast_verdict()).workers[0]
    summary = make_summary(fast_verdict(), beside)
    summary = dataclasses.replace(
        summary,
        workers=(
            dataclasses.replace(passing_default, worker="default"),
            *summary.workers,
        ),
    )
    found = {"default/runs-5s": (18.4, "default/runs-5s: restart 2: too early")}
    judged = judge_mutant(_built("default"), _check(summary, **found))
    assert judged.outcome == "killed", judged
    assert judged.by == "default/runs-5s: restart 2: too early"
    assert judged.decided_after_s == 18.4


def test_a_failing_control_worker_makes_the_mutant_s_run_an_error() -> None:
    summary = make_summary(fast_verdict(), default_verdict(), empty_verdict())
    judged = judge_mutant(_built("default"), _check(summary))
    assert judged.outcome == "error"
    assert judged.controls_failed
    assert judged.controls_failed[0].startswith("reduced: ")


def test_a_mutant_whose_worker_passes_survived_and_the_control_is_expected_to() -> None:
    summary = make_summary(fast_verdict())
    assert judge_mutant(_built("fast"), _check(summary)).outcome == "survived"
    control = judge_mutant(_built("fast", CONTROL), _check(summary))
    assert control.as_expected
    document = mutants_document([control], release="v1.35.8", profile="quick", status="finished")
    assert document["score"] == {"killed": 0, "of": 0, "control_survived": True}
