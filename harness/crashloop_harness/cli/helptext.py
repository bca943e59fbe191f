"""How `crashloop --help` reads: commands grouped the way a user meets them, one example each,
every paragraph wrapped to the terminal.

argparse lists subcommands flat, in the order they were added, and prints a raw
description unwrapped; the listing here is grouped under headings, and each
paragraph is filled to the terminal's width while indented lines (commands to
copy) stay whole.
"""

from __future__ import annotations

import argparse
import re
import textwrap
from collections.abc import Mapping
from typing import Final

# Headings in the order a user meets them: the demo and the checks first, then
# their own kubelets and clusters, the harness's cluster, and set-up plumbing last.
GROUPS: Final[tuple[tuple[str, tuple[str, ...]], ...]] = (
    (
        "Show and check how the kubelet restarts crashing containers",
        ("demo", "check", "scenarios", "conformance"),
    ),
    (
        "Your own kubelets, releases and nodes",
        (
            "kubelet",
            "fleet",
            "mutants",
            "flakiness",
            "matrix",
            "newest",
            "overhead",
            "overhead-compare",
        ),
    ),
    (
        "The harness's kind cluster",
        ("up", "status", "down", "config", "kubeconfig", "manifests", "rbac", "cronjob"),
    ),
    (
        "Set-up plumbing",
        ("engine", "kind", "node-image", "workload-image", "harness-image", "completion"),
    ),
)

# One invocation per command, shown under its --help.
EXAMPLES: Final[Mapping[str, str]] = {
    "demo": "crashloop demo --duration 3m",
    "check": "crashloop check --profile quick",
    "scenarios": "crashloop scenarios --scenarios critical-sidecar",
    "conformance": "crashloop conformance --profile full",
    "kubelet": "crashloop kubelet --nodes fast --patch my-backoff.diff",
    "fleet": "crashloop fleet --contexts prod-eu,prod-us --plan",
    "mutants": "crashloop mutants --profile quick",
    "flakiness": "crashloop flakiness --runs 10",
    "matrix": "crashloop matrix --versions 1.34,1.35",
    "newest": "crashloop newest -o json",
    "overhead": "crashloop overhead --pods 10 --duration 3m",
    "overhead-compare": "crashloop overhead-compare runs/FIRST runs/SECOND",
    "up": "crashloop up",
    "status": "crashloop status -o json",
    "down": "crashloop down",
    "config": "crashloop config --kubernetes 1.34",
    "kubeconfig": "export KUBECONFIG=$(crashloop kubeconfig)",
    "manifests": "crashloop manifests --clusters-dir clusters",
    "rbac": "crashloop rbac | kubectl apply -f -",
    "cronjob": "crashloop cronjob --node-selector pool=canary | kubectl apply -f -",
    "engine": "crashloop engine",
    "kind": "crashloop kind",
    "node-image": "crashloop node-image --offline",
    "workload-image": "crashloop workload-image",
    "harness-image": "crashloop harness-image",
    "completion": "source <(crashloop completion bash)",
}

_BLANK: Final = re.compile(r"\n\s*\n")


# An entry of an indented table: "  TERM   its description", the description's column
# set by the gap of two spaces or more.
_ENTRY: Final = re.compile(r"^(\s+\S+(?: \S+)*\s{2,})(\S.*)$")


def _fill_table(lines: list[str], width: int) -> list[str]:
    """Indented lines as written, but each table entry's description refilled beside its term."""
    out: list[str] = []
    entry: tuple[str, list[str]] | None = None

    def flush() -> None:
        if entry is not None:
            prefix, words = entry
            out.extend(
                textwrap.wrap(
                    " ".join(words),
                    max(width, len(prefix) + 20),
                    initial_indent=prefix,
                    subsequent_indent=" " * len(prefix),
                    break_on_hyphens=False,
                )
            )

    for line in lines:
        match = _ENTRY.match(line)
        if entry is not None and not match and line.startswith(" " * len(entry[0])):
            entry[1].extend(line.split())
            continue
        flush()
        entry = (match.group(1), match.group(2).split()) if match else None
        if entry is None and len(line) > width:
            # An indented sentence, not a command to copy: wrapped at its own indent.
            margin = " " * (len(line) - len(line.lstrip()))
            out.extend(textwrap.wrap(line, width, initial_indent="", subsequent_indent=margin))
        elif entry is None:
            out.append(line)
    flush()
    return out


class WrappingFormatter(argparse.RawDescriptionHelpFormatter):
    """Fills each paragraph to the width; indented lines (commands to copy) are kept as
    written, and an indented table's descriptions are refilled beside their terms."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = []
        for paragraph in _BLANK.split(text.strip("\n")):
            lines = paragraph.splitlines()
            if any(line.startswith(" ") for line in lines):
                table = _fill_table(lines, width - len(indent))
                paragraphs.append("\n".join(indent + line for line in table))
            else:
                paragraphs.append(
                    textwrap.fill(
                        " ".join(paragraph.split()),
                        width,
                        initial_indent=indent,
                        subsequent_indent=indent,
                        break_on_hyphens=False,
                    )
                )
        return "\n\n".join(paragraphs)


def command_listing(summaries: Mapping[str, str], width: int) -> str:
    """The commands under their headings, each summary wrapped beside its name."""
    name_width = max(len(name) for name in summaries) + 2
    blocks = []
    for heading, names in GROUPS:
        lines = [f"{heading}:"]
        for name in names:
            lines += textwrap.wrap(
                # Summaries are argparse help text, where a percent sign is written twice.
                summaries[name].replace("%%", "%"),
                max(width, name_width + 22),
                initial_indent=f"  {name:<{name_width}}",
                subsequent_indent=" " * (name_width + 2),
                break_on_hyphens=False,
            )
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def example_epilog(name: str, codes: str) -> str:
    return f"example:\n  {EXAMPLES[name]}\n\n{codes}"
