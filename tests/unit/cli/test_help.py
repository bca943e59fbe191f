"""`crashloop --help` reads: grouped the way a user meets the commands, wrapped, an example each."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from crashloop_harness.cli.app import build_parser
from crashloop_harness.cli.helptext import EXAMPLES, GROUPS


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(commands.choices)


def test_every_command_is_under_one_heading_with_an_example() -> None:
    grouped = [name for _, names in GROUPS for name in names]
    assert sorted(grouped) == sorted(_commands())
    assert len(grouped) == len(set(grouped))
    assert set(EXAMPLES) == set(grouped)
    for name, command in _commands().items():
        assert f"example:\n  {EXAMPLES[name]}" in command.format_help(), name


def test_the_demo_and_the_check_come_first_and_plumbing_last(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    text = build_parser().format_help()
    positions = {name: text.index(f"\n  {name} ") for name in ("demo", "check", "engine", "kind")}
    assert positions["demo"] < positions["check"] < positions["engine"] < positions["kind"]
    assert "usage: crashloop [-h] [--version] [--runs-dir DIR] COMMAND ..." in text


@pytest.mark.parametrize("columns", [80, 100])
def test_every_help_fits_the_terminal(columns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    pages = {"": build_parser().format_help()}
    pages |= {name: command.format_help() for name, command in _commands().items()}
    # The usage lines are argparse's own, which keeps a group of exclusive options on one
    # line (kubelet's --patch | --source | --binary | --restore: 81 columns).
    too_wide = {
        name: line
        for name, text in pages.items()
        for line in text.split("\n\n", 1)[1].splitlines()
        if len(line) > columns
    }
    assert too_wide == {}


def test_the_help_imports_no_plotting() -> None:
    # matplotlib takes half a second to import: only a command that draws pays it.
    probe = (
        "import sys; from crashloop_harness.cli.app import build_parser; build_parser(); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'matplotlib'))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
