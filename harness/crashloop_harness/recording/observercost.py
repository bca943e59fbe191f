"""What observing a run costs: CPU of the harness and of the engine, and how late restarts are seen.

The harness competes with the kubelets it judges on a small machine, so its
own load is measured in every run, not assumed:

- the harness: this process and every child it has waited for (the docker
  CLI processes), from ``getrusage``;
- the engine: dockerd, its containerd and the node containers' shims (the
  moby namespace), read from /proc with their waited-for children. A
  ``docker exec`` runs its process as a child of the node's shim, so once a
  node's reader has ended, everything it ran inside the node (crictl, the
  pulse loop) is counted here too. Where the engine is not a local process
  (Docker Desktop, a remote engine) this part is None.

The observation latency is when the recorder first knew of an attempt's
start minus the runtime's start time, both on the node's clock.
"""

from __future__ import annotations

import itertools
import math
import os
import resource
import statistics
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from crashloop_harness.recording.records import AttemptRecord

_PROC: Final = Path("/proc")
_ENGINE_DAEMON: Final = "dockerd"
_ENGINE_CONTAINERD: Final = "containerd"
_SHIM_PREFIX: Final = "containerd-shim"
# The engine's shims serve its own containers (the kind nodes) in this namespace.
_ENGINE_SHIM_NAMESPACE: Final = "moby"
_NS_PER_MS: Final = 1_000_000
_SECONDS_PER_MINUTE: Final = 60.0
# /proc/<pid>/stat fields after the command: utime, stime, cutime, cstime are
# fields 14-17 of the whole line, 12-15 counting from the state field.
_CPU_FIELDS: Final = slice(11, 15)
_PPID_FIELD: Final = 1


@dataclass(frozen=True)
class CpuReading:
    """Cumulative CPU seconds at one moment (monotonic ``at``)."""

    at: float
    harness_s: float
    engine_s: float | None


@dataclass(frozen=True)
class ObserverCost:
    """What observing one run cost, and how promptly it saw restarts."""

    observer: str
    wall_s: float
    harness_cpu_s: float
    engine_cpu_s: float | None
    attempts_seen: int
    latency_median_ms: float | None
    latency_p95_ms: float | None
    latency_max_ms: float | None
    reconciled: int = 0
    reconnects: int = 0
    # The harness's own load on the API server: list and watch requests made,
    # and the watch events they delivered (None where not counted).
    api_requests: int | None = None
    watch_events: int | None = None

    @property
    def harness_per_min_s(self) -> float:
        return _per_minute(self.harness_cpu_s, self.wall_s)

    @property
    def engine_per_min_s(self) -> float | None:
        return None if self.engine_cpu_s is None else _per_minute(self.engine_cpu_s, self.wall_s)

    @property
    def share_of_core(self) -> float | None:
        """Harness and engine together, as a fraction of one core over the run."""
        if self.engine_cpu_s is None or self.wall_s <= 0:
            return None
        return (self.harness_cpu_s + self.engine_cpu_s) / self.wall_s

    def to_dict(self) -> dict[str, Any]:
        return {
            "observer": self.observer,
            "wall_s": self.wall_s,
            "harness_cpu_s": self.harness_cpu_s,
            "engine_cpu_s": self.engine_cpu_s,
            "harness_cpu_per_min_s": self.harness_per_min_s,
            "engine_cpu_per_min_s": self.engine_per_min_s,
            "share_of_core": self.share_of_core,
            "attempts_seen": self.attempts_seen,
            "latency_median_ms": self.latency_median_ms,
            "latency_p95_ms": self.latency_p95_ms,
            "latency_max_ms": self.latency_max_ms,
            "reconciled": self.reconciled,
            "reconnects": self.reconnects,
            "api_requests": self.api_requests,
            "watch_events": self.watch_events,
        }

    def headline(self) -> str:
        """One line for the console and the report."""
        share = self.share_of_core
        engine = "engine n/a" if self.engine_cpu_s is None else f"engine {self.engine_cpu_s:.1f}s"
        latency = (
            "no start seen"
            if self.latency_median_ms is None
            else f"starts seen {self.latency_median_ms:.0f} ms after they happened (median, "
            f"max {self.latency_max_ms:.0f} ms)"
        )
        load = "" if share is None else f" = {100 * share:.1f}% of one core"
        return (
            f"observer ({self.observer}): harness {self.harness_cpu_s:.1f}s CPU, {engine} "
            f"over {self.wall_s:.0f}s{load}; {latency}"
        )


def _per_minute(cpu_s: float, wall_s: float) -> float:
    return cpu_s / wall_s * _SECONDS_PER_MINUTE if wall_s > 0 else 0.0


def read_cpu(proc: Path = _PROC) -> CpuReading:
    """The harness's and the engine's cumulative CPU now."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    harness = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    return CpuReading(at=time.monotonic(), harness_s=harness, engine_s=engine_cpu_s(proc))


def engine_cpu_s(proc: Path = _PROC) -> float | None:
    """CPU seconds of the local engine's processes and their waited-for children; None if none."""
    processes = list(_processes(proc))
    daemons = {pid for pid, _, name, _ in processes if name == _ENGINE_DAEMON}
    if not daemons:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid, ppid, name, argv in processes:
        engine_part = (
            pid in daemons
            or (name == _ENGINE_CONTAINERD and ppid in daemons)
            or (name.startswith(_SHIM_PREFIX) and _in_namespace(argv, _ENGINE_SHIM_NAMESPACE))
        )
        if engine_part:
            total += _cpu_ticks(proc / str(pid))
    return total / ticks


def _in_namespace(argv: Sequence[str], namespace: str) -> bool:
    return any(a == "-namespace" and b == namespace for a, b in itertools.pairwise(argv))


def _processes(proc: Path) -> Iterable[tuple[int, int, str, list[str]]]:
    """(pid, ppid, command name, argv) of every process that can be read."""
    for entry in proc.iterdir() if proc.is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue  # gone meanwhile
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        rest = stat[stat.rindex(")") + 2 :].split()
        yield int(entry.name), int(rest[_PPID_FIELD]), name, [a.decode() for a in argv if a]


def _cpu_ticks(process: Path) -> int:
    try:
        stat = (process / "stat").read_text()
    except OSError:
        return 0
    rest = stat[stat.rindex(")") + 2 :].split()
    return sum(int(value) for value in rest[_CPU_FIELDS])


def observation_latencies_ms(records: Iterable[AttemptRecord]) -> list[float]:
    """Seen minus started, per attempt whose first sight was stamped, in milliseconds."""
    return [
        (r.seen_at_ns - r.started_at_ns) / _NS_PER_MS for r in records if r.seen_at_ns is not None
    ]


def observer_cost(
    *,
    observer: str,
    before: CpuReading,
    after: CpuReading,
    records: Sequence[AttemptRecord],
    reconciled: int = 0,
    reconnects: int = 0,
    api_requests: int | None = None,
    watch_events: int | None = None,
) -> ObserverCost:
    """The cost between two readings, and the latency of every stamped attempt."""
    latencies = sorted(observation_latencies_ms(records))
    engine = (
        None
        if before.engine_s is None or after.engine_s is None
        else max(0.0, after.engine_s - before.engine_s)
    )
    return ObserverCost(
        observer=observer,
        wall_s=max(0.0, after.at - before.at),
        harness_cpu_s=max(0.0, after.harness_s - before.harness_s),
        engine_cpu_s=engine,
        attempts_seen=len(latencies),
        latency_median_ms=statistics.median(latencies) if latencies else None,
        latency_p95_ms=_percentile(latencies, 0.95),
        latency_max_ms=latencies[-1] if latencies else None,
        reconciled=reconciled,
        reconnects=reconnects,
        api_requests=api_requests,
        watch_events=watch_events,
    )


def _percentile(ordered: Sequence[float], fraction: float) -> float | None:
    """Nearest-rank percentile of an ascending list."""
    if not ordered:
        return None
    rank = max(1, math.ceil(len(ordered) * fraction))
    return ordered[rank - 1]
