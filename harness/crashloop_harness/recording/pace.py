"""Each node's pace, measured on a path the kubelet under test never touches.

The bounds of a restart allow the node's cost of doing the work a restart
needs (creating and starting a container) times how much slower than the
reference host the node does it. Read from the kubelet's own restarts, that
pace is the kubelet's to move: a kubelet that waits before a restart makes its
node look slow and widens its own bounds. So the pace is measured beside the
kubelet instead: the node's container runtime runs the workload image's
container straight from its own client (``ctr run --rm``: create, start, exit,
delete), timed on the node's clock inside the node. No kubelet code runs on
that path, no back-off or timer of the kubelet's is in it, and what it costs is
the runtime's work on the node's CPUs at that moment: what a restart's work
costs there too.

A probe runs on every judged node every :data:`PACE_EVERY_S` through the run,
so the pace follows a host whose load comes and goes; each sample is kept in
the run's trace for a replay.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Final

# One round of probes (every node in turn), then this long until the next: not a
# synchronisation, the recorder's stop ends the wait. About 1 % of a core per node
# at the reference host's pace.
PACE_EVERY_S: Final = 10.0
# The container the runtime's own client runs, in the kubelet's containerd
# namespace (where the node's images are); its name says whose it is.
PACE_CONTAINER_PREFIX: Final = "crashloop-pace-"
# The runtime's client in a kind node (containerd's ctr).
_RUNTIME_CLIENT: Final = "ctr --namespace k8s.io"


@dataclass(frozen=True)
class PaceSample:
    """One probe on one node: when it began (node clock, ns) and how long it took."""

    node: str
    started_ns: int
    seconds: float


def pace_program(image: str, binary: str) -> str:
    """The shell program run in a node: one timed container, its start and end on the
    node's clock and the runtime's exit code, one line (``<start ns> <end ns> <rc>``).

    The container exits at once (the workload's ``exit`` mode, code 0): what is timed
    is the runtime creating, starting, reaping and removing it.
    """
    run = (
        f"{_RUNTIME_CLIENT} run --rm {shlex.quote(image)} "
        f'"{PACE_CONTAINER_PREFIX}$a" {shlex.quote(binary)} --mode exit --exit-code 0'
    )
    return f'a=$(date +%s%N); {run} >/dev/null 2>&1; rc=$?; b=$(date +%s%N); echo "$a $b $rc"'


def pace_argv(image: str, binary: str) -> list[str]:
    """The argv to run in a node (after its node command's prefix)."""
    return ["sh", "-c", pace_program(image, binary)]


def parse_pace(node: str, output: str) -> PaceSample | str:
    """A probe's sample, or why its output is none (the runtime failed, unreadable text)."""
    fields = output.split()
    if len(fields) != 3 or not all(f.lstrip("-").isdigit() for f in fields):
        return f"unreadable pace probe output {output.strip()[:80]!r}"
    start, end, code = (int(f) for f in fields)
    if code != 0:
        return f"the runtime's own client failed the pace probe (exit {code})"
    if end <= start:
        return f"a pace probe that ended before it began ({start} -> {end})"
    return PaceSample(node=node, started_ns=start, seconds=(end - start) / 1e9)
