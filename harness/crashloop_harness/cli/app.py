"""The `crashloop` command: its verb families put together, and what runs one of them.

Each verb family (``setup``, ``cluster``, ``measure``, ...) registers its commands,
with their flags, help and handler side by side; this module only lists the
families in the order ``crashloop --help`` shows them, and turns what a handler
raises into an exit code.
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import shtab
import urllib3
from kubernetes.client import ApiException
from rich.text import Text

from crashloop_harness.cli import (
    cluster,
    common,
    demo,
    flakiness,
    fleet,
    kubelet,
    matrix,
    measure,
    mutants,
    overhead,
    setup,
    version_text,
)
from crashloop_harness.cli.codes import ENVIRONMENT, SETUP_CODES
from crashloop_harness.cli.helptext import WrappingFormatter, command_listing
from crashloop_harness.cli.out import SCREEN, emit
from crashloop_harness.cluster.profiles import ProfileError
from crashloop_harness.core import timeouts
from crashloop_harness.core.errors import HarnessError, first_line
from crashloop_harness.core.exitcodes import INTERRUPTED
from crashloop_harness.recording.records import AttemptLogError

# A bug of the harness: apart from 1 (a verdict failed) and 2 (bad input, set-up).
INTERNAL_ERROR = 3

# The verb families, in the order --help lists their commands.
FAMILIES = (setup, cluster, kubelet, fleet, measure, mutants, flakiness, matrix, overhead, demo)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="crashloop",
        # Written out: the command listing is under headings, so argparse would leave it out.
        usage="%(prog)s [-h] [--version] [--runs-dir DIR] COMMAND ...",
        epilog=ENVIRONMENT,
        formatter_class=WrappingFormatter,
    )
    # Also answered before this module loads (crashloop_harness.cli.main).
    parser.add_argument("--version", action="version", version=version_text())
    parser.add_argument("--runs-dir", metavar="DIR", help=RUNS_DIR_HELP)
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", help=argparse.SUPPRESS, prog="crashloop"
    )
    shared = common.parents()
    for family in FAMILIES:
        family.register(commands, shared)
    _register_completion(commands, shared)
    width = shutil.get_terminal_size().columns - 2  # argparse's own width
    parser.description = (
        "See, measure and check how the kubelet restarts crashing containers.\n\n"
        + command_listing(common.COMMAND_SUMMARIES, width)
        + "\n\n`crashloop COMMAND --help` says more, with an example."
    )
    # A global flag works after the command too, as kubectl's do; given nowhere there,
    # it leaves the value before the command alone (SUPPRESS).
    for command in commands.choices.values():
        command.add_argument(
            "--runs-dir", metavar="DIR", default=argparse.SUPPRESS, help=RUNS_DIR_HELP
        )
    return parser


RUNS_DIR_HELP: Final = "where run directories are written (default ./runs, or $CRASHLOOP_RUNS_DIR)"


def _register_completion(commands: common.Commands, _parents: common.Parents) -> None:
    # Here and not in a family: the script is made from the whole parser.
    completion = common.add_command(commands, "completion", _cmd_completion, codes=SETUP_CODES)
    completion.add_argument("shell", choices=("bash", "zsh", "tcsh"))


def _cmd_completion(args: argparse.Namespace) -> int:
    """print a shell completion script

    Print a shell completion script: `crashloop completion bash > /etc/bash_completion.d/crashloop`,
    or `source <(crashloop completion bash)`.
    """
    parser = build_parser()
    # Shown again for shtab, which passes over a suppressed action: --help lists the
    # commands under headings instead.
    for action in parser._subparsers._group_actions if parser._subparsers else ():
        action.help = "the command"
    print(shtab.complete(parser, shell=args.shell))
    return 0


def _raise_interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def interrupt_on_hangup_and_terminate() -> None:
    """SIGTERM and SIGHUP end a run as Ctrl-C does: judged, written, cleaned up.

    Their default is to kill the process on the spot, which leaves the run's
    namespace and its crash-looping pods behind (a closed terminal sends
    SIGHUP, `kill` and CI runners SIGTERM).
    """
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _raise_interrupt)


def unknown_command(parser: argparse.ArgumentParser, argv: Sequence[str]) -> str | None:
    """What to say of a mistyped command (its nearest commands), None when it is one.

    argparse would list all of them on one line; this names the likely one.
    """
    commands = next(
        (a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None
    )
    words = iter(argv)
    for word in words:
        if word == "--runs-dir":
            next(words, None)  # its value
            continue
        if word.startswith("-"):
            return None  # --help, --version, --runs-dir=DIR: argparse answers
        if commands is None or word in commands:
            return None
        near = difflib.get_close_matches(word, list(commands), n=3, cutoff=0.6)
        said = f"did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
        return f"unknown command {word!r}; {said or 'see `crashloop --help` for the commands'}"
    return None


def unknown_options(
    parser: argparse.ArgumentParser, command: str | None, extras: Sequence[str]
) -> str:
    """What to say of arguments no option took: each with its command's nearest options.

    argparse says only "unrecognized arguments"; a flag one letter off is named with
    the flag meant.
    """
    options = [o for a in parser._actions for o in a.option_strings]
    commands = next(
        (a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {}
    )
    if command in commands:
        options += [o for a in commands[command]._actions for o in a.option_strings]
    said = []
    for word in extras:
        flag = word.split("=", 1)[0]
        near = difflib.get_close_matches(flag, options, n=2, cutoff=0.6) if flag[:1] == "-" else []
        meant = f" (did you mean {' or '.join(near)}?)" if near else ""
        said.append(f"{word}{meant}")
    where = f"`crashloop {command} --help`" if command in commands else "`crashloop --help`"
    return f"unrecognized arguments: {' '.join(said)}; {where} lists the options"


def main(argv: Sequence[str] | None = None) -> int:
    # A process a non-interactive shell starts in the background inherits SIGINT
    # ignored, and Python then never raises KeyboardInterrupt: Ctrl-C, or a CI
    # runner's SIGINT, must still stop a run cleanly and keep what it measured.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    interrupt_on_hangup_and_terminate()
    parser = build_parser()
    unknown = unknown_command(parser, sys.argv[1:] if argv is None else list(argv))
    if unknown is not None:
        parser.error(unknown)  # exits 2 with the usage, as argparse does for bad input
    args, extras = parser.parse_known_args(argv)
    if extras:
        parser.error(unknown_options(parser, getattr(args, "command", None), extras))
    common.resolve_kubeconfig(args)
    SCREEN.format = getattr(args, "output", "text")
    if args.runs_dir:
        os.environ["CRASHLOOP_RUNS_DIR"] = str(Path(args.runs_dir).resolve())
    if timeouts.SCALE_PROBLEM is not None:
        common.console.print(
            Text("error: ", style="bold red") + Text(timeouts.SCALE_PROBLEM), soft_wrap=True
        )
        return 2
    try:
        with common.STEPS:
            code: int = args.handler(args)
    except (HarnessError, ProfileError, AttemptLogError) as error:
        # Bad input, a file handed in included (an attempt log with a bad line or byte).
        # Unwrapped and without markup: paths and values stay whole and copyable.
        common.console.print(Text("error: ", style="bold red") + Text(str(error)), soft_wrap=True)
        emit({"error": str(error), "exit_code": 2})
        return 2
    except (ApiException, urllib3.exceptions.HTTPError) as error:
        # The API server went away under us: say so in one line, not a traceback.
        common.console.print(
            Text("error: ", style="bold red")
            + Text(f"the Kubernetes API did not answer: {first_line(error)}"),
            soft_wrap=True,
        )
        common.console.print(
            "  fix: check the cluster with `crashloop status`; `crashloop up` repairs it"
        )
        emit({"error": f"the Kubernetes API did not answer: {first_line(error)}", "exit_code": 2})
        return 2
    except KeyboardInterrupt:
        common.console.print("[yellow]interrupted[/yellow]")
        return INTERRUPTED
    except Exception as error:
        # Its own code, so CI tells a harness bug from a kubelet regression (1).
        common.console.print_exception()
        common.console.print(
            Text("internal error: ", style="bold red")
            + Text(f"{type(error).__name__}: {error} (a bug of the harness, not a verdict)"),
            soft_wrap=True,
        )
        emit({"error": f"internal error: {type(error).__name__}: {error}", "exit_code": 3})
        return INTERNAL_ERROR
    return code


if __name__ == "__main__":
    sys.exit(main())
