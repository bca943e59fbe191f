"""Where the `crashloop` command writes: tables for people, JSON for scripts.

With ``--output json`` stdout carries one JSON document (the run's summary
and its directory, or the cluster's state) and everything meant for eyes
(progress, tables, verdicts) goes to stderr, as kubectl's ``-o json`` keeps
stdout parseable.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from rich.console import Console

OutputFormat = Literal["text", "json"]
FORMATS: Final = ("text", "json")


@dataclass
class Screen:
    """The output format of this invocation (set once, by the argument parser's result)."""

    format: OutputFormat = "text"

    @property
    def json(self) -> bool:
        return self.format == "json"

    @property
    def tables(self) -> Console:
        """Where tables and verdict lines go: stdout, or stderr when stdout carries JSON."""
        return Console(stderr=self.json)


SCREEN: Final = Screen()


def emit(document: Mapping[str, Any]) -> None:
    """The invocation's JSON document on stdout (only in JSON mode)."""
    if SCREEN.json:
        json.dump(document, sys.stdout, indent=2, sort_keys=False, default=str)
        sys.stdout.write("\n")
        sys.stdout.flush()


def answer(document: Mapping[str, Any], line: str) -> None:
    """A command's one result: its document in JSON mode, else one line for a shell's $(...)."""
    if SCREEN.json:
        emit(document)
    else:
        sys.stdout.write(f"{line}\n")
        sys.stdout.flush()
