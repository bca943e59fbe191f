"""Single keys while the demo is live: p pauses the view, s skips to the takeaways, q quits.

On a terminal, stdin is put in cbreak mode for the live window (keys arrive
one by one, unechoed; Ctrl-C still interrupts) and restored after it.
Elsewhere (a pipe, CI, a non-POSIX host) no key is read.
"""

from __future__ import annotations

import contextlib
import select
import sys
from collections.abc import Iterator
from typing import Final, Literal

if sys.platform != "win32":  # terminal modes are POSIX
    import termios
    import tty

KeyAction = Literal["pause", "skip", "quit"]
KEYS: Final[dict[str, KeyAction]] = {"p": "pause", " ": "pause", "s": "skip", "q": "quit"}
HELP: Final = "keys: p pause · s skip to the takeaways · q quit (as Ctrl-C)"


def action_of(key: str) -> KeyAction | None:
    return KEYS.get(key.lower())


class KeyReader:
    """Non-blocking reads of single keys from stdin (nothing when it is not a terminal)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def poll(self) -> KeyAction | None:
        """The action of a key pressed since the last poll, if any; never waits."""
        if not self.enabled:
            return None
        ready, _, _ = select.select([sys.stdin], [], [], 0)
        if not ready:
            return None
        return action_of(sys.stdin.read(1))


@contextlib.contextmanager
def keys_while_live() -> Iterator[KeyReader]:
    """cbreak mode on a terminal's stdin for the block; the old mode back however it ends."""
    if sys.platform == "win32" or not sys.stdin.isatty():
        yield KeyReader(False)
        return
    saved = termios.tcgetattr(sys.stdin)
    try:
        tty.setcbreak(sys.stdin)
        yield KeyReader(True)
    finally:
        termios.tcsetattr(sys.stdin, termios.TCSADRAIN, saved)
