"""How busy this host's CPUs are: the kind nodes' CPUs are the host's (Linux /proc/stat).

A restart that comes late while every core is busy is the machine's
lateness, not the kubelet's: the demo shows this beside its workers, keeps
its samples in the run directory, and counts the restarts that started while
the host was saturated.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from crashloop_harness.core.atomicfile import write_atomically
from crashloop_harness.model.bounds import BOUNDS
from crashloop_harness.recording.records import AttemptRecord

_STAT: Final = Path("/proc/stat")
# user nice system idle iowait irq softirq steal: idle and iowait are not busy.
_IDLE_FIELDS: Final = (3, 4)


@dataclass(frozen=True)
class CpuTimes:
    busy: int
    total: int


def parse_stat(text: str) -> CpuTimes | None:
    """The aggregate "cpu" line of /proc/stat, in clock ticks; None if it is not there."""
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu":
            ticks = [int(value) for value in fields[1:9]]
            idle = sum(ticks[i] for i in _IDLE_FIELDS if i < len(ticks))
            return CpuTimes(busy=sum(ticks) - idle, total=sum(ticks))
    return None


def read_cpu_times(stat: Path = _STAT) -> CpuTimes | None:
    """This host's CPU times now; None where there is no /proc/stat (not Linux)."""
    try:
        return parse_stat(stat.read_text())
    except OSError:
        return None


def busy_between(before: CpuTimes, after: CpuTimes) -> float | None:
    """The busy share of every core between two readings (0..1); None if no time passed."""
    total = after.total - before.total
    if total <= 0:
        return None
    return min(max((after.busy - before.busy) / total, 0.0), 1.0)


def cores() -> int:
    return os.cpu_count() or 1


# A share of every core at which a restart's lateness is the machine's.
SATURATED: Final = BOUNDS["host_saturated"].as_fraction()
# One reading of /proc/stat a second while a run records.
SAMPLE_EVERY_S: Final = 1.0
# Where a demo keeps its samples, beside its attempts.
HOST_CPU_FILE: Final = "host-cpu.jsonl"
# A sample stands for the second before it; one further off says nothing of a moment.
_SAMPLE_REACH_NS: Final = 2_000_000_000


@dataclass(frozen=True)
class CpuSample:
    """The busy share of every core over the interval that ended at ``at_ns`` (Unix ns)."""

    at_ns: int
    busy: float


def write_samples(path: Path, samples: Sequence[CpuSample]) -> None:
    lines = (json.dumps({"at_ns": s.at_ns, "busy": round(s.busy, 4)}) for s in samples)
    write_atomically(path, "".join(line + "\n" for line in lines).encode("utf-8"))


def read_samples(path: Path) -> list[CpuSample]:
    """The samples of a run directory's file; none when it has none (older runs, replays)."""
    if not path.is_file():
        return []
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(ValueError, KeyError, TypeError):
            raw = json.loads(line)
            found.append(CpuSample(int(raw["at_ns"]), float(raw["busy"])))
    return found


def busy_at(samples: Sequence[CpuSample], at_ns: int) -> float | None:
    """The busy share in the interval holding ``at_ns``: the first sample taken after it."""
    after = [s for s in samples if s.at_ns >= at_ns]
    first = min(after, key=lambda s: s.at_ns, default=None)
    if first is None or first.at_ns - at_ns > _SAMPLE_REACH_NS:
        return None
    return first.busy


def restarts_under_load(
    samples: Sequence[CpuSample], attempts_by_worker: Mapping[str, Sequence[AttemptRecord]]
) -> dict[str, tuple[int, int]]:
    """worker -> (restarts that started with the host saturated, restarts with a sample)."""
    counts: dict[str, tuple[int, int]] = {}
    for worker, attempts in attempts_by_worker.items():
        shares = [busy_at(samples, a.started_at_ns) for a in attempts if a.attempt >= 1]
        known = [share for share in shares if share is not None]
        counts[worker] = (sum(share >= SATURATED for share in known), len(known))
    return counts


SaturatedSpan = tuple[int, int, float]  # (from, to) Unix ns, the highest busy share in it


def saturated_spans(
    samples: Sequence[CpuSample], threshold: float = SATURATED
) -> tuple[SaturatedSpan, ...]:
    """The spans in which every sample was at or above ``threshold``, joined where they touch.

    A sample stands for the interval since the sample before it (at most
    its reach back, for the first one).
    """
    spans: list[SaturatedSpan] = []
    previous_ns: int | None = None
    for sample in sorted(samples, key=lambda s: s.at_ns):
        start = sample.at_ns - _SAMPLE_REACH_NS if previous_ns is None else previous_ns
        previous_ns = sample.at_ns
        if sample.busy < threshold:
            continue
        if spans and spans[-1][1] >= start:
            first, _, busiest = spans[-1]
            spans[-1] = (first, sample.at_ns, max(busiest, sample.busy))
        else:
            spans.append((start, sample.at_ns, sample.busy))
    return tuple(spans)
