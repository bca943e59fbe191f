"""External commands: a failure names what went wrong, not a guess."""

from __future__ import annotations

from pathlib import Path

import pytest

from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.proc import run


def test_a_missing_command_is_named() -> None:
    with pytest.raises(HarnessError, match="command not found: no-such-command-here"):
        run(["no-such-command-here"])


def test_a_missing_working_directory_is_not_called_a_missing_command(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="no such directory") as error:
        run(["true"], cwd=str(tmp_path / "gone"))
    assert "command not found" not in str(error.value)


def test_a_failing_command_carries_its_output() -> None:
    with pytest.raises(HarnessError, match="exit code 3"):
        run(["sh", "-c", "echo why >&2; exit 3"])
