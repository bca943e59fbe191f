"""The exit codes every `crashloop` command and its views share (their words: cli/codes.py)."""

from __future__ import annotations

from typing import Final

# A run that ended ``error`` (no answer), as its exit code.
COULD_NOT_JUDGE: Final = 4
# Interrupted (Ctrl-C, SIGTERM, SIGHUP), as a shell reports a SIGINT: 128 + 2.
INTERRUPTED: Final = 130
