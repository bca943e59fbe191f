"""Where the `crashloop` command writes: tables for people, JSON or YAML for scripts.

With ``--output json`` (or ``yaml``) stdout carries one document (the run's summary
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

import yaml
from rich.console import Console

OutputFormat = Literal["text", "json", "yaml"]
FORMATS: Final = ("text", "json", "yaml")


@dataclass
class Screen:
    """The output format of this invocation (set once, by the argument parser's result)."""

    format: OutputFormat = "text"

    @property
    def document(self) -> bool:
        """Whether stdout carries one document (JSON or YAML) rather than tables."""
        return self.format != "text"

    @property
    def tables(self) -> Console:
        """Where tables and verdict lines go: stdout, or stderr when stdout carries JSON."""
        return Console(stderr=self.document)


SCREEN: Final = Screen()


def emit(document: Mapping[str, Any]) -> None:
    """The invocation's document on stdout, as JSON or YAML (only when one was asked for)."""
    if not SCREEN.document:
        return
    if SCREEN.format == "yaml":
        # The JSON round trip turns every value into what YAML writes plainly (paths, times).
        plain = json.loads(json.dumps(document, default=str))
        yaml.safe_dump(plain, sys.stdout, sort_keys=False, allow_unicode=True)
    else:
        json.dump(document, sys.stdout, indent=2, sort_keys=False, default=str)
        sys.stdout.write("\n")
    sys.stdout.flush()


def answer(document: Mapping[str, Any], line: str) -> None:
    """A command's one result: its document in JSON mode, else one line for a shell's $(...)."""
    if SCREEN.document:
        emit(document)
    else:
        sys.stdout.write(f"{line}\n")
        sys.stdout.flush()
