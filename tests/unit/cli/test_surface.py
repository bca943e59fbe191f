"""The command line as kind and kubectl users expect it: help, version, JSON, config, links."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from crashloop_harness.cli import app as cli
from crashloop_harness.cli import cluster as cli_cluster
from crashloop_harness.cli import matrix as cli_matrix
from crashloop_harness.cli.app import build_parser
from crashloop_harness.cli.cluster import config_text
from crashloop_harness.cli.out import SCREEN
from crashloop_harness.cluster.profiles import load_cluster_spec
from crashloop_harness.core import pins
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.resources import CLUSTERS_DIR, builtin_specs, spec_path
from crashloop_harness.live.demo import wait_for_enter
from crashloop_harness.runs.lifecycle import LATEST, new_run_dir, point_latest_at


@pytest.fixture(autouse=True)
def text_mode() -> object:
    yield
    SCREEN.format = "text"


def _subcommands() -> dict[str, object]:
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return dict(action.choices)  # type: ignore[arg-type]


def test_every_command_says_what_it_does_and_what_its_exit_codes_mean() -> None:
    for name, sub in _subcommands().items():
        text = sub.format_help()  # type: ignore[attr-defined]
        assert "exit codes:" in text, name
        assert "  0 " in text, name
        assert sub.description, name  # type: ignore[attr-defined]


def test_every_command_that_measures_can_answer_in_json() -> None:
    measuring = ("check", "scenarios", "conformance", "flakiness", "matrix", "mutants", "overhead")
    for name, sub in _subcommands().items():
        if name in measuring:
            assert "--output" in sub.format_help(), name  # type: ignore[attr-defined]


def test_each_commands_exit_codes_are_its_own() -> None:
    kubeconfig = _subcommands()["kubeconfig"].format_help()  # type: ignore[attr-defined]
    assert "the path printed" in kubeconfig
    assert "kubelet runs its profile" not in kubeconfig


def test_the_top_level_help_documents_every_environment_variable() -> None:
    text = build_parser().format_help()
    for variable in (
        "CRASHLOOP_RUNS_DIR",
        "CRASHLOOP_STATE_DIR",
        "CRASHLOOP_CACHE_DIR",
        "CRASHLOOP_TIMEOUT_SCALE",
        "CRASHLOOP_DEBIAN_MIRROR",
    ):
        assert variable in text


def test_version_names_the_pins(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["--version"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert pins.KIND_VERSION in out
    assert pins.DEFAULT_KUBERNETES.version in out


def test_json_output_keeps_stdout_parseable_even_on_an_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli_cluster, "engine_answers", lambda: False)
    code = cli.main(["status", "--output", "json"])
    assert code == 2
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert document["exit_code"] == 2
    assert "docker engine is not running" in document["error"]
    assert "docker engine is not running" in captured.err


def test_text_output_prints_no_json(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli_cluster, "engine_answers", lambda: False)
    assert cli.main(["status"]) == 2
    assert capsys.readouterr().out == ""


def test_config_prints_the_kind_config_and_every_worker_s_patch() -> None:
    spec = load_cluster_spec(spec_path("crashloop"))
    documents = [doc for doc in yaml.safe_load_all(config_text(spec, cgroup_v1=False)) if doc]
    kind_config, *patches = documents
    assert kind_config["kind"] == "Cluster"
    assert [p["kind"] for p in patches] == ["KubeletConfiguration"] * len(spec.workers)
    assert patches[0]["crashLoopBackOff"]["maxContainerRestartPeriod"] == "2s"
    assert "expected delays before restarts 1-8: 0, 2, 2" in config_text(spec, cgroup_v1=False)


def test_config_creates_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("CRASHLOOP_STATE_DIR", str(tmp_path / "state"))
    assert cli.main(["config", "--config", "gate-only"]) == 0
    assert "ReduceDefaultCrashLoopBackOffDecay" in capsys.readouterr().out
    assert not (tmp_path / "state" / "patches").exists()


def test_a_spec_is_named_by_path_or_built_in_name(tmp_path: Path) -> None:
    assert spec_path("gate-only") == CLUSTERS_DIR / "gate-only.yaml"
    mine = tmp_path / "mine.yaml"
    mine.write_text("name: mine\n")
    assert spec_path(str(mine)) == mine
    assert {"crashloop", "gate-only", "substrate"} <= set(builtin_specs())
    with pytest.raises(HarnessError, match="gate-only"):
        spec_path("gate_only")
    with pytest.raises(HarnessError, match="no such file"):
        spec_path(str(tmp_path / "missing.yaml"))


def test_runs_latest_moves_only_to_a_finished_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CRASHLOOP_RUNS_DIR", str(tmp_path))
    _, first = new_run_dir("check-quick")
    assert not (tmp_path / LATEST).exists()  # not while the run is going
    point_latest_at(first)
    assert (tmp_path / LATEST).resolve() == first.resolve()
    _, second = new_run_dir("scenarios")
    assert (tmp_path / LATEST).resolve() == first.resolve()
    point_latest_at(second)
    assert (tmp_path / LATEST).resolve() == second.resolve()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([first.name, second.name, LATEST])


def test_runs_dir_option_sets_where_runs_go(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("CRASHLOOP_RUNS_DIR", raising=False)
    monkeypatch.setattr(cli_cluster, "engine_answers", lambda: False)
    cli.main(["--runs-dir", str(tmp_path / "elsewhere"), "status"])
    assert os.environ["CRASHLOOP_RUNS_DIR"] == str((tmp_path / "elsewhere").resolve())
    # After the command too, as kubectl's global flags work.
    cli.main(["status", "--runs-dir", str(tmp_path / "after")])
    assert os.environ["CRASHLOOP_RUNS_DIR"] == str((tmp_path / "after").resolve())


def test_completion_scripts_name_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["completion", "bash"]) == 0
    script = capsys.readouterr().out
    assert "crashloop" in script
    assert "matrix" in script


def test_the_demo_waits_for_enter_and_says_it_is_ready(monkeypatch: pytest.MonkeyPatch) -> None:
    typed = io.StringIO("\nmore input the demo must not eat\n")
    monkeypatch.setattr("sys.stdin", typed)
    out = Console(file=io.StringIO(), force_terminal=False)
    wait_for_enter(out)
    assert "ready" in out.file.getvalue()  # type: ignore[attr-defined]
    assert typed.read() == "more input the demo must not eat\n"


def test_a_markdown_path_that_cannot_be_written_is_refused_before_any_release_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the matrix ran despite a bad --markdown")

    monkeypatch.setattr(cli_matrix, "run_matrix", refuse)
    assert cli.main(["matrix", "--versions", "1.35", "--markdown", str(tmp_path / "no/x.md")]) == 2
