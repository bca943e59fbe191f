"""Each node's pace, measured on a path the kubelet under test never touches.

The bounds of a restart allow the node's cost of doing the work a restart
needs times how much slower than the reference host the node does it. Read
from the kubelet's own restarts, that pace is the kubelet's to move: a kubelet
that waits before a restart makes its node look slow and widens its own
bounds. So the pace is measured beside the kubelet instead, inside the node,
on the node's clock, by a program no kubelet code is in.

Which program is a measurement (docs/results.md, 2026-12-07). A restart's
work is small bursts of CPU in processes that already run (the kubelet's
sync, the runtime's create): on a node held to a CPU quota it slows as much as
a small burst waits for its share. The first probe ran a whole container from
the runtime's own client (``ctr run --rm``: two Go processes started, a shim,
runc), and that much CPU at once slows far faster than a restart's work: 2.5x
at half a core where the restarts did not slow at all, 11.9x at a fifth where
their work slowed 2.7x. The probe now is a short fixed burst of shell
arithmetic (:data:`BURST_ITERATIONS`) in the node's own cgroup, timed by the
shell itself (bash's ``EPOCHREALTIME``), which slows as the restarts' work
does. :data:`RUNTIME_RUN` names the first probe, whose samples kept traces
still carry and are judged against their own reference.

A probe runs on every judged node every :data:`PACE_EVERY_S` through the run,
so the pace follows a host whose load comes and goes; each sample is kept in
the run's trace, with the probe that made it, for a replay.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

# One round of probes (every node in turn), then this long until the next: not a
# synchronisation, the recorder's stop ends the wait. A burst is a few ms of one core.
PACE_EVERY_S: Final = 5.0
# The probes, as a trace names them: the shell's burst (every run since it) and the
# runtime's own client running a container (runs of 2026-12-07 before it).
CPU_BURST: Final = "cpu-burst"
RUNTIME_RUN: Final = "runtime-run"
# The workload's own burst in a pod of the run's, where no command runs in the node
# (crashloop_harness.recording.podpace).
POD_BURST: Final = "pod-burst"
PROBES: Final = (CPU_BURST, RUNTIME_RUN, POD_BURST)
# The burst: this many shell additions, about 2.5 ms on the reference host. Its size
# is a measurement (docs/results.md, 2026-12-07): on a node held to a CPU quota a
# burst longer than the quota's slice waits whole periods, as little of a restart's
# work does. Ten times as long (20,000) read 8-17x at a fifth of a core where the
# restarts' work slowed 1.5-3x; this one read about 2.2x there.
BURST_ITERATIONS: Final = 2_000


@dataclass(frozen=True)
class PaceSample:
    """One probe on one node: when it began (node clock, ns), how long it took, which
    probe it was (:data:`PROBES`)."""

    node: str
    started_ns: int
    seconds: float
    probe: str = CPU_BURST


def pace_program(iterations: int = BURST_ITERATIONS) -> str:
    """The shell program run in a node: one timed burst, its start and end on the node's
    clock (ns) and 0, one line (``<start ns> <end ns> 0``).

    bash's own clock (``EPOCHREALTIME``, microseconds) times it, so nothing but the
    burst is in the time: no process is started between the two readings.
    """
    count = int(iterations)
    return (
        "a=$EPOCHREALTIME; i=0; "
        f"while (( i < {count} )); do i=$((i + 1)); done; "
        'b=$EPOCHREALTIME; echo "${a/./}000 ${b/./}000 0"'
    )


def pace_argv(iterations: int = BURST_ITERATIONS) -> list[str]:
    """The argv to run in a node (after its node command's prefix)."""
    return ["bash", "-c", pace_program(iterations)]


def parse_pace(node: str, output: str) -> PaceSample | str:
    """A probe's sample, or why its output is none (the runtime failed, unreadable text)."""
    fields = output.split()
    if len(fields) != 3 or not all(f.lstrip("-").isdigit() for f in fields):
        return f"unreadable pace probe output {output.strip()[:80]!r}"
    start, end, code = (int(f) for f in fields)
    if code != 0:
        return f"the pace probe failed in the node (exit {code})"
    if end <= start:
        return f"a pace probe that ended before it began ({start} -> {end})"
    return PaceSample(node=node, started_ns=start, seconds=(end - start) / 1e9)
