"""The exit code of a check or a nightly: an error (no answer) apart from a failure."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest
import yaml

from crashloop_harness.cli.app import build_parser, main, unknown_command, unknown_options
from crashloop_harness.cli.codes import CHECK_CODES, verdict_exit
from crashloop_harness.cli.common import resolve_kubeconfig
from crashloop_harness.cli.out import SCREEN, emit
from crashloop_harness.core.exitcodes import COULD_NOT_JUDGE
from crashloop_harness.recording.records import AttemptLogError, read_attempts


@pytest.mark.parametrize(
    ("status", "passed", "code"),
    [
        ("passed", True, 0),
        ("failed", False, 1),
        ("error", False, COULD_NOT_JUDGE),
        ("interrupted", False, 130),
        ("interrupted", True, 130),
    ],
)
def test_each_status_has_its_code(status: str, passed: bool, code: int) -> None:
    assert verdict_exit(status, passed) == code


def test_the_help_names_the_code_of_a_run_that_could_not_judge() -> None:
    assert f"  {COULD_NOT_JUDGE}    the run could not judge" in CHECK_CODES


def test_nodes_alone_read_kubectl_s_kubeconfig(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    listed = f"{tmp_path / 'a'}{os.pathsep}{tmp_path / 'b'}"
    monkeypatch.setenv("KUBECONFIG", listed)
    args = argparse.Namespace(kubeconfig=None, context=None, nodes="n1", node_selector=None)
    resolve_kubeconfig(args)
    assert args.kubeconfig == listed
    # With nothing naming an existing cluster, the harness's own is meant: left unset.
    own = argparse.Namespace(kubeconfig=None, context=None, nodes=None, node_selector=None)
    resolve_kubeconfig(own)
    assert own.kubeconfig is None


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["chek"], "unknown command 'chek'; did you mean 'check'?"),
        (["--runs-dir", "/tmp/x", "flet"], "did you mean 'fleet'?"),
        (["xyzzy"], "see `crashloop --help` for the commands"),
    ],
)
def test_a_mistyped_command_is_named_with_its_nearest(argv: list[str], says: str) -> None:
    found = unknown_command(build_parser(), argv)
    assert found is not None
    assert says in found


def test_a_known_command_or_an_option_first_is_left_to_argparse() -> None:
    parser = build_parser()
    assert unknown_command(parser, ["check", "--profile", "quick"]) is None
    assert unknown_command(parser, ["--version"]) is None


def test_a_mistyped_option_is_named_with_its_command_s_nearest(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["check", "--profle", "quick"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments: --profle (did you mean --profile?) quick" in err
    assert "`crashloop check --help` lists the options" in err


def test_an_option_nothing_is_near_is_named_alone() -> None:
    said = unknown_options(build_parser(), "check", ["--xyzzy=1"])
    assert said.startswith("unrecognized arguments: --xyzzy=1;")
    assert "did you mean" not in said


def test_yaml_output_is_the_json_document_in_yaml(capsys: pytest.CaptureFixture[str]) -> None:
    before = SCREEN.format
    try:
        SCREEN.format = "yaml"
        emit({"run_dir": Path("/runs/x"), "summary": {"status": "passed", "workers": [1, 2]}})
    finally:
        SCREEN.format = before
    assert yaml.safe_load(capsys.readouterr().out) == {
        "run_dir": "/runs/x",
        "summary": {"status": "passed", "workers": [1, 2]},
    }


def test_a_kubeconfig_that_is_not_utf8_is_bad_input_naming_the_fix(tmp_path: Path) -> None:
    bad = tmp_path / "kubeconfig"
    bad.write_bytes(b"apiVersion: v1\ncontexts:\n- name: \xff\xfe\n")
    assert main(["check", "--kubeconfig", str(bad), "--nodes", "n1"]) == 2


def test_an_attempt_log_that_is_not_utf8_is_refused_by_name(tmp_path: Path) -> None:
    log = tmp_path / "attempts.jsonl"
    log.write_bytes(b'{"bad": \xff}\n')
    with pytest.raises(AttemptLogError, match="not UTF-8 text at byte 8"):
        read_attempts(log)
