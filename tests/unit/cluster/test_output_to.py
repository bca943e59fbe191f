"""Children's output goes to the log while the harness's own display stays clean."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from crashloop_harness.cluster.lifecycle import output_to


def test_a_child_process_writes_into_the_log(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "create.log"
    with output_to(log):
        subprocess.run(["sh", "-c", "echo to-stdout; echo to-stderr >&2"], check=True)
    print("after")
    assert log.read_text().split() == ["to-stdout", "to-stderr"]
    captured = capfd.readouterr()
    assert "to-stdout" not in captured.out
    assert "to-stderr" not in captured.err
    assert "after" in captured.out


def test_output_is_restored_when_the_body_fails(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(subprocess.CalledProcessError), output_to(tmp_path / "failed.log"):
        subprocess.run(["sh", "-c", "echo boom; exit 3"], check=True)
    print("still visible")
    assert "still visible" in capfd.readouterr().out
    assert (tmp_path / "failed.log").read_text().strip() == "boom"
