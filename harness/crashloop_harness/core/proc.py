"""Running external commands with errors that carry their output."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from crashloop_harness.core.errors import HarnessError

_TAIL_LINES = 25


def tail(text: str, lines: int = _TAIL_LINES) -> str:
    """The last lines of a command's output: where the reason usually is."""
    return "\n".join(text.strip().splitlines()[-lines:])


def run(
    argv: Sequence[str],
    *,
    fix: str = "",
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    input_text: str | None = None,
    stdin: IO[bytes] | None = None,
) -> str:
    """Run a command and return its stdout; raise HarnessError with its output on failure."""
    try:
        completed = subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            input=input_text,
            stdin=stdin,
            check=False,
        )
    except FileNotFoundError as error:
        # Python reports a missing working directory the same way as a missing command.
        if cwd is not None and not Path(cwd).is_dir():
            raise HarnessError(
                f"cannot run `{argv[0]}` in {cwd}: no such directory",
                "the source tree changed under a running harness: run the command again",
            ) from error
        raise HarnessError(f"command not found: {argv[0]}", fix) from error
    except subprocess.TimeoutExpired as error:
        raise HarnessError(
            f"`{' '.join(argv)}` did not finish within {timeout:.0f}s", fix
        ) from error
    if completed.returncode != 0:
        output = tail(completed.stderr or completed.stdout)
        raise HarnessError(
            f"`{' '.join(argv)}` failed with exit code {completed.returncode}:\n{output}", fix
        )
    return completed.stdout


def succeeds(argv: Sequence[str], timeout: float | None = None) -> bool:
    """True when the command exits 0 within the timeout."""
    try:
        return (
            subprocess.run(list(argv), capture_output=True, timeout=timeout, check=False).returncode
            == 0
        )
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return False
