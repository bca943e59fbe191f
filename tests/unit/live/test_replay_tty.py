"""The replay's keys on a real terminal (a pseudo-terminal): s skips to the takeaways and the
verdict, q stops; the shipped five-minute recording played at its own speed."""

from __future__ import annotations

import os
import pty
import re
import select
import sys
import time

import pytest

from crashloop_harness.core import timeouts
from crashloop_harness.core.exitcodes import INTERRUPTED

_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX terminals only")


def _replay_pressing(key: bytes) -> tuple[int, str]:
    """The replay on a pseudo-terminal, ``key`` pressed once its key help is shown."""
    pid, terminal = pty.fork()
    if pid == 0:  # the child: the replay, its stdin and stdout the terminal
        os.environ.update({"COLUMNS": "100", "LINES": "40", "DOCKER_HOST": "unix:///nonexistent"})
        argv = [sys.executable, "-m", "crashloop_harness.cli", "demo", "--replay", "--speed", "1"]
        os.execv(sys.executable, argv)
    shown, pressed = b"", False
    deadline = time.monotonic() + timeouts.REPLAY_KEY
    while time.monotonic() < deadline:
        ready, _, _ = select.select([terminal], [], [], deadline - time.monotonic())
        if not ready:
            continue
        try:
            chunk = os.read(terminal, 65536)
        except OSError:  # the child ended: its side of the terminal is closed
            break
        if not chunk:
            break
        shown += chunk
        if not pressed and b"keys: p pause" in shown:
            os.write(terminal, key)
            pressed = True
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail(f"the replay did not end within {timeouts.REPLAY_KEY:g} s of {key!r}")
    _, status = os.waitpid(pid, 0)
    os.close(terminal)
    # The text as a reader sees it: colours and cursor moves left out.
    return os.waitstatus_to_exitcode(status), _ESCAPES.sub("", shown.decode(errors="replace"))


def test_s_skips_a_replay_to_its_takeaways_and_verdict() -> None:
    code, shown = _replay_pressing(b"s")
    assert code == 0
    assert "what each worker did" in shown
    assert "verdict: passed" in shown


def test_q_stops_a_replay_and_its_takeaways_still_follow() -> None:
    code, shown = _replay_pressing(b"q")
    assert code == INTERRUPTED
    assert "replay stopped" in shown
    assert "what each worker did" in shown
