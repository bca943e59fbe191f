"""The workload's own report of each attempt, read from the pod status (pure).

The workload writes ``{"v":1,"start_ns":…,"exit_ns":…,"exit_code":…}`` to
its termination-message file as it exits; the kubelet copies it into
``lastState.terminated.message``. With it, a reader that has nothing but the
Kubernetes API knows every attempt's process start and exit on the node's
clock to the nanosecond, where the status itself gives whole seconds.

On a kind cluster the same attempts are also recorded from the runtime:
:func:`agreement` says how far the two sources are apart.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from harness.recording.records import AttemptRecord

REPORT_VERSION: Final = 1
NS_PER_MS: Final = 1_000_000


@dataclass(frozen=True)
class SelfReport:
    """One attempt as the workload reported it (node clock, Unix ns)."""

    started_ns: int
    finished_ns: int
    exit_code: int


def parse_self_report(message: str | None) -> SelfReport | None:
    """The report in a termination message; None for any other message (or none)."""
    if not message:
        return None
    try:
        raw = json.loads(message)
    except json.JSONDecodeError:
        return None
    if not isinstance(raw, dict) or raw.get("v") != REPORT_VERSION:
        return None
    started, finished, code = (_int(raw.get(k)) for k in ("start_ns", "exit_ns", "exit_code"))
    if started is None or finished is None or code is None:
        return None
    if started <= 0 or finished < started:
        return None
    return SelfReport(started, finished, code)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Agreement:
    """How far the workload's report is from the runtime's record, over the same attempts.

    ``start_ms`` is self-reported start minus the runtime's start (the
    process's own first instruction comes after the runtime says it started),
    ``finish_ms`` self-reported exit minus the runtime's finish (the report is
    written just before the process exits). Medians and maxima of the
    absolute values; None when no attempt had both sources.
    """

    attempts: int
    start_median_ms: float | None
    start_max_ms: float | None
    finish_median_ms: float | None
    finish_max_ms: float | None

    def within(self, median_ms: float, max_ms: float) -> bool:
        """Both medians at most ``median_ms`` and every difference at most ``max_ms``."""
        medians = [v for v in (self.start_median_ms, self.finish_median_ms) if v is not None]
        worst = [v for v in (self.start_max_ms, self.finish_max_ms) if v is not None]
        return bool(worst) and max(medians) <= median_ms and max(worst) <= max_ms


def agreement(records: Iterable[AttemptRecord]) -> Agreement:
    starts: list[float] = []
    finishes: list[float] = []
    both = 0
    for record in records:
        if record.self_started_at_ns is None:
            continue
        both += 1
        starts.append(abs(record.self_started_at_ns - record.started_at_ns) / NS_PER_MS)
        if record.self_finished_at_ns is not None and record.finished_at_ns is not None:
            finishes.append(abs(record.self_finished_at_ns - record.finished_at_ns) / NS_PER_MS)
    return Agreement(
        attempts=both,
        start_median_ms=statistics.median(starts) if starts else None,
        start_max_ms=max(starts) if starts else None,
        finish_median_ms=statistics.median(finishes) if finishes else None,
        finish_max_ms=max(finishes) if finishes else None,
    )
