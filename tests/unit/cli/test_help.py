"""A command's help is its handler's docstring: the first paragraph the one line
`crashloop --help` lists, the rest what `crashloop COMMAND --help` says."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from crashloop_harness.cli import common
from crashloop_harness.cli.app import build_parser


def _documented(_args: argparse.Namespace) -> int:
    """print the path of kind {kind},
    building it if needed

    Print the path of the pinned kind,
    built from its Go module if needed.

    A second paragraph.
    """
    return 0


def _undocumented(_args: argparse.Namespace) -> int:
    return 0


def _summary_only(_args: argparse.Namespace) -> int:
    """a one-line help and nothing of what the command does"""
    return 0


def test_the_first_paragraph_is_the_summary_and_the_rest_the_description() -> None:
    summary, description = common.help_of(_documented, {"kind": "v0.33.0"})
    assert summary == "print the path of kind v0.33.0, building it if needed"
    assert description == (
        "Print the path of the pinned kind, built from its Go module if needed.\n\n"
        "A second paragraph."
    )


@pytest.mark.parametrize("handler", [_undocumented, _summary_only])
def test_a_handler_without_both_parts_is_refused_by_name(
    handler: common.Handler,
) -> None:
    with pytest.raises(TypeError, match=handler.__name__):
        common.help_of(handler)


def test_every_command_has_a_summary_and_a_description() -> None:
    parser = build_parser()
    commands = next(
        action for action in parser._actions if isinstance(action, argparse._SubParsersAction)
    )
    listed = {choice.dest: choice.help for choice in commands._choices_actions}
    for name, command in commands.choices.items():
        assert listed[name], f"{name} has no one-line help"
        assert command.description, f"{name} has no description"
        assert "{" not in (command.description + str(listed[name])), (
            f"{name}'s help has a placeholder its add_command did not fill"
        )


def test_the_commands_still_run_when_python_strips_docstrings() -> None:
    # python -OO drops every docstring, the help with them; `rbac` needs no cluster.
    ran = subprocess.run(
        [sys.executable, "-OO", "-m", "crashloop_harness.cli", "rbac"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    assert "kind: ServiceAccount" in ran.stdout
