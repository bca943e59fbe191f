"""A run's summary travels on its result: what its write step wrote, never read back from disk.

Each caller below is handed a result whose run directory holds no summary.json: it can
only have used the summary the result carries.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest

from crashloop_harness.cluster import lifecycle
from crashloop_harness.cluster.lifecycle import Cluster
from crashloop_harness.cluster.remote import RemoteCluster
from crashloop_harness.core import pins
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.outputs.summary import SUMMARY_FILE
from crashloop_harness.outputs.summaryfile import read_summary
from crashloop_harness.runs import check, scenarios
from crashloop_harness.runs import matrix as matrix_module
from crashloop_harness.runs import mutants as mutants_module
from crashloop_harness.runs.check import CheckResult
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES
from crashloop_harness.runs.lifecycle import RunState
from crashloop_harness.runs.scenarios import ScenarioRun
from crashloop_harness.scenarios import FAST_RESTART
from crashloop_harness.substrate.kubeletbuild import Kubelet
from crashloop_harness.substrate.mutantset import Mutant
from tests.unit.factories import FAST, default_verdict, fast_verdict, make_summary

CLUSTER = RemoteCluster(
    kubeconfig=Path("kubeconfig"),
    context=None,
    nodes=("crashloop-worker",),
    workload_image="workload:x",
    name="existing",
)


def _check(run_dir: Path, status: str = "passed") -> CheckResult:
    return CheckResult(
        run_id=run_dir.name,
        run_dir=run_dir,
        profile=CHECK_PROFILES["quick"],
        rows=[],
        curves={"fast": FAST},
        nodes={"fast": "crashloop-worker"},
        status=status,
    )


def test_a_checks_outputs_leave_what_they_wrote_on_the_result(tmp_path: Path) -> None:
    result = _check(tmp_path / "run")
    result.run_dir.mkdir()
    returned = check.write_outputs(result, CLUSTER)
    assert result.summary is returned
    assert result.summary == read_summary(result.run_dir)
    assert result.written_summary() is returned


def test_a_scenario_runs_outputs_leave_what_they_wrote_on_the_result(tmp_path: Path) -> None:
    result = ScenarioRun(
        run_id="run",
        run_dir=tmp_path / "run",
        scenarios=(FAST_RESTART,),
        curves={"fast": FAST},
        nodes={"fast": "crashloop-worker"},
        status="passed",
    )
    result.run_dir.mkdir()
    returned = scenarios.write_outputs(result, CLUSTER)
    assert result.summary is returned
    assert result.summary == read_summary(result.run_dir)
    assert result.written_summary().kind == f"scenario:{FAST_RESTART}"


def test_a_run_that_wrote_no_summary_says_so_with_its_status_and_records() -> None:
    result = RunState(run_id="r1", run_dir=Path("runs/r1"), status="error", reason="disk full")
    with pytest.raises(HarnessError, match=r"run r1 wrote no summary \(error: disk full\)") as e:
        result.written_summary()
    assert "runs/r1" in e.value.fix


def _no_summary_file(run_dir: Path) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    assert not (run_dir / SUMMARY_FILE).exists()
    return run_dir


def test_a_mutant_is_judged_on_the_summary_its_check_carried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # default fails and fast passes: a mutant on default is killed, from the carried summary.
    result = _check(_no_summary_file(tmp_path / "check-run"), status="failed")
    result.summary = make_summary(fast_verdict(), default_verdict())
    monkeypatch.setattr(mutants_module, "worker_nodes", lambda _api: {"default": "n3"})
    monkeypatch.setattr(mutants_module, "put_image_kubelet_back", lambda *_args: None)
    monkeypatch.setattr(mutants_module, "put_kubelet", lambda *_args: None)
    monkeypatch.setattr(mutants_module, "run_check", lambda *_args: result)
    mutant = Mutant("initial-5s", Path("x.patch"), "changes", "default", 2, "kubelet.go:360")
    built = mutants_module.BuiltMutant(mutant, Kubelet(Path("k"), "ab" * 32, "v1", "p"), 1.0)
    cluster = cast(Cluster, SimpleNamespace(api=lambda: None))
    run = mutants_module.run_mutants(cluster, [built], CHECK_PROFILES["quick"], lambda _m: None)
    (judged,) = run.results
    assert judged.outcome == "killed"
    assert judged.check_status == "failed"
    assert judged.check_run == "check-run"


def test_a_matrix_entry_is_the_summary_its_check_carried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _check(_no_summary_file(tmp_path / "check-run"), status="failed")
    result.summary = make_summary(fast_verdict(), default_verdict())
    matrix_dir = _no_summary_file(tmp_path / "matrix")
    monkeypatch.setattr(matrix_module, "new_run_dir", lambda _what: ("m", matrix_dir))
    spec = SimpleNamespace(name="crashloop-1-34")
    monkeypatch.setattr(matrix_module, "load_cluster_spec", lambda *_args: spec)
    monkeypatch.setattr(lifecycle, "up", lambda *_args: None)
    monkeypatch.setattr(lifecycle, "delete", lambda *_args: None)
    monkeypatch.setattr(matrix_module, "run_check", lambda *_args: result)
    monkeypatch.setattr(matrix_module, "_plot", lambda *_args: None)
    release = pins.KUBERNETES["1.34"]
    matrix, _ = matrix_module.run_matrix(
        Path("spec.yaml"), [release], CHECK_PROFILES["quick"], lambda _m: None
    )
    (entry,) = matrix.entries
    assert (entry.version, entry.status) == (release.version, "failed")
    assert entry.cluster == result.summary.cluster.name
    assert [line.worker for line in entry.workers] == ["fast", "default"]
