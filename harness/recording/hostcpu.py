"""How busy this host's CPUs are: the kind nodes' CPUs are the host's (Linux /proc/stat).

A restart that comes late while every core is busy is the machine's
lateness, not the kubelet's: the demo shows this beside its workers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

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
