"""What the plugin tells the terminal: progress while fixtures work, a header, a summary.

Fixture output is captured by pytest, so a cold session (node image built,
cluster created: many minutes) would print nothing; progress goes through
the terminal reporter with capture suspended, each step with the time since
the session's first step, as pytest's own live logging does.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import pytest

PREFIX: Final = "[crashloop]"


@dataclass
class SessionRecord:
    """What the session made, for the terminal summary."""

    started: float = field(default_factory=time.monotonic)
    first_step: float | None = None
    runs_before: frozenset[str] = frozenset()
    evidence: list[Path] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    # The session uses the plugin (a crashloop_* fixture, or an option of ours given):
    # until then it prints nothing and reads nothing.
    used: bool = False


RECORD: Final = pytest.StashKey[SessionRecord]()


def record(config: pytest.Config) -> SessionRecord:
    return config.stash.setdefault(RECORD, SessionRecord())


def elapsed(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}:{rest:02d}"


def write_line(config: pytest.Config, message: str) -> None:
    """One line on the terminal now, whatever pytest is capturing."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if reporter is None:
        print(message, flush=True)
        return
    if capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.ensure_newline()
            reporter.write_line(message)
    else:
        reporter.ensure_newline()
        reporter.write_line(message)


def progress_writer(config: pytest.Config) -> Callable[[str], None]:
    """``progress(message)`` for the harness: each step with the session's elapsed time."""
    session = record(config)

    def progress(message: str) -> None:
        now = time.monotonic()
        if session.first_step is None:
            session.first_step = now
        write_line(config, f"{PREFIX} {elapsed(now - session.first_step)} {message}")

    return progress


def header_lines(
    *, cluster: str, kubernetes: str, image: str, kind: str, keep: str, reuse: bool, runs: Path
) -> list[str]:
    return [
        f"crashloop: cluster {cluster} (Kubernetes {kubernetes}), node image {image}",
        f"crashloop: kind {kind}; keep {'always (reused)' if reuse else keep}; runs in {runs}",
    ]


def summary_lines(session: SessionRecord, runs_now: list[str], runs: Path) -> list[str]:
    """Run directories made during the session, evidence of failures, clusters kept."""
    lines = [
        f"run directory: {runs / name}" for name in runs_now if name not in session.runs_before
    ]
    lines += [f"evidence: {path}" for path in session.evidence]
    lines += [f"kept cluster: {kept}" for kept in session.kept]
    return lines
