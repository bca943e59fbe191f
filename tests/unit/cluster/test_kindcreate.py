"""`kind create cluster` run by the harness: the arguments kind takes, its output in a log,
a failure named with the log's end (a fake kind binary, a real process)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from crashloop_harness.cluster.kindcreate import create_cluster
from crashloop_harness.core.errors import HarnessError


def _fake_kind(tmp_path: Path, exit_code: int) -> Path:
    kind = tmp_path / "kind"
    kind.write_text(
        "#!/bin/sh\n"
        f'printf "%s\\n" "$@" > {tmp_path / "argv"}\n'
        "echo ' ✓ Preparing nodes 📦'\n"
        "echo 'ERROR: failed to create cluster' >&2\n"
        f"exit {exit_code}\n"
    )
    kind.chmod(kind.stat().st_mode | stat.S_IXUSR)
    return kind


def _create(tmp_path: Path, kind: Path) -> None:
    create_cluster(
        kind,
        "crashloop",
        kubeconfig=tmp_path / "kubeconfig",
        image="kindest/node:v1.35.8",
        config_file=tmp_path / "kind.yaml",
        log=tmp_path / "create.log",
    )


def test_kind_gets_its_name_kubeconfig_image_and_config_and_its_output_goes_to_the_log(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    _create(tmp_path, _fake_kind(tmp_path, 0))
    assert (tmp_path / "argv").read_text().split() == [
        "create",
        "cluster",
        "--name=crashloop",
        f"--kubeconfig={tmp_path / 'kubeconfig'}",
        "--image=kindest/node:v1.35.8",
        f"--config={tmp_path / 'kind.yaml'}",
    ]
    assert "Preparing nodes" in (tmp_path / "create.log").read_text()
    captured = capfd.readouterr()
    assert captured.out == captured.err == ""


def test_a_failed_create_names_its_exit_code_and_the_log_s_end(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match=r"failed \(1\)") as raised:
        _create(tmp_path, _fake_kind(tmp_path, 1))
    assert "ERROR: failed to create cluster" in str(raised.value)
    assert str(tmp_path / "create.log") in raised.value.fix
