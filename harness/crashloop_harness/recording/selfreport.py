"""The workload's own report of each attempt, read from the pod status (pure).

The workload keeps its termination-message file current: ``{"v":1,
"start_ns":…,"alive_ns":…}`` from its start, the heartbeat renewed every
0.1 s, and ``{"v":1,"start_ns":…,"exit_ns":…,"exit_code":…}`` as it exits.
The kubelet copies the file into ``lastState.terminated.message``; with a
history (``--history``) the message also numbers the attempt and carries the
last reports of the three before it. A process killed without warning
(OOMKilled) leaves its last heartbeat: its exit is known from below, to
within the heartbeat period. With it, a reader that has nothing but the
Kubernetes API knows every attempt's process start and exit on the node's
clock to the nanosecond, where the status itself gives whole seconds.

On a kind cluster the same attempts are also recorded from the runtime:
:func:`agreement` says how far the two sources are apart.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from crashloop_harness.recording.hostcpu import SaturatedSpan
from crashloop_harness.recording.records import AttemptRecord

REPORT_VERSION: Final = 1
# The workload's heartbeat period (heartbeatEvery in its source).
HEARTBEAT_NS: Final = 100_000_000
NS_PER_MS: Final = 1_000_000


@dataclass(frozen=True)
class SelfReport:
    """One attempt as the workload reported it (node clock, Unix ns).

    ``exit_code`` None: the process was killed before it could report its
    exit, and ``finished_ns`` is its last heartbeat (at most
    :data:`HEARTBEAT_NS` before the real exit, plus scheduling).

    ``attempt`` is the workload's own count of the container's attempts (from
    0, like the kubelet's restartCount; None without a history) and
    ``earlier`` the reports of the attempts before it, newest first (None
    where one left no report): the pod status shows only the newest ended
    attempt, and these are the ones it may have skipped.
    """

    started_ns: int
    finished_ns: int
    exit_code: int | None
    attempt: int | None = None
    earlier: tuple[SelfReport | None, ...] = ()

    @property
    def exited(self) -> bool:
        """The workload wrote its own exit (not a heartbeat cut short)."""
        return self.exit_code is not None


def parse_self_report(message: str | None) -> SelfReport | None:
    """The report in a termination message; None for any other message (or none)."""
    if not message:
        return None
    try:
        raw = json.loads(message)
    except json.JSONDecodeError:
        return None
    report = _report(raw)
    if report is None or not isinstance(raw, dict):
        return report
    attempt = _int(raw.get("attempt"))
    earlier = raw.get("earlier")
    if attempt is None or attempt < 0 or not isinstance(earlier, list):
        return report
    return dataclasses.replace(
        report, attempt=attempt, earlier=tuple(_report(item) for item in earlier)
    )


def _report(raw: object) -> SelfReport | None:
    """One attempt's own report (its start and exit or last heartbeat), or None."""
    if not isinstance(raw, dict) or raw.get("v") != REPORT_VERSION:
        return None
    started = _int(raw.get("start_ns"))
    if "exit_ns" in raw:
        finished, code = _int(raw.get("exit_ns")), _int(raw.get("exit_code"))
        complete = code is not None
    else:
        finished, code, complete = _int(raw.get("alive_ns")), None, True
    if not complete or started is None or finished is None or not 0 < started <= finished:
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
    absolute values; None when no attempt had both sources. Killed attempts
    (a heartbeat for an exit) are apart: ``killed_lag_ms`` is how long before
    the runtime's finish their last heartbeat came.
    """

    attempts: int
    start_median_ms: float | None
    start_max_ms: float | None
    finish_median_ms: float | None
    finish_max_ms: float | None
    killed: int = 0
    killed_lag_median_ms: float | None = None
    killed_lag_max_ms: float | None = None

    def within(self, *, start_median_ms: float, finish_median_ms: float, max_ms: float) -> bool:
        """Each median at most its bound and every difference at most ``max_ms``.

        The two medians have their own bounds because they measure different
        things: the start's is mostly the runtime's latency in marking a
        container started, which the host's load sets; the finish's is the
        workload writing its exit just before it exits.
        """
        medians = (
            (self.start_median_ms, start_median_ms),
            (self.finish_median_ms, finish_median_ms),
        )
        worst = [v for v in (self.start_max_ms, self.finish_max_ms) if v is not None]
        return (
            bool(worst)
            and all(found is None or found <= bound for found, bound in medians)
            and max(worst) <= max_ms
        )


def agreement(records: Iterable[AttemptRecord]) -> Agreement:
    starts: list[float] = []
    finishes: list[float] = []
    lags: list[float] = []
    both = 0
    for record in records:
        if record.self_started_at_ns is None:
            continue
        both += 1
        starts.append(abs(record.self_started_at_ns - record.started_at_ns) / NS_PER_MS)
        if record.self_finished_at_ns is None or record.finished_at_ns is None:
            continue
        if record.self_finish_is_heartbeat:
            lags.append((record.finished_at_ns - record.self_finished_at_ns) / NS_PER_MS)
        else:
            finishes.append(abs(record.self_finished_at_ns - record.finished_at_ns) / NS_PER_MS)
    return Agreement(
        attempts=both,
        start_median_ms=statistics.median(starts) if starts else None,
        start_max_ms=max(starts) if starts else None,
        finish_median_ms=statistics.median(finishes) if finishes else None,
        finish_max_ms=max(finishes) if finishes else None,
        killed=len(lags),
        killed_lag_median_ms=statistics.median(lags) if lags else None,
        killed_lag_max_ms=max(lags) if lags else None,
    )


@dataclass(frozen=True)
class KilledLags:
    """Killed attempts' lags (last heartbeat to the runtime's finish, ms), sorted by
    what accounts for them.

    ``held``: within the bound. ``host_s``: past it while this host's CPUs were
    saturated, within the most a saturated host can add; the runtime stamps the
    exit when its shim is scheduled, and on the project's own runs of 2026-12-07
    no kill with the host below saturation came later than 126 ms (docs/bounds.md,
    ``killed_lag_max``). ``late``: past the bound with the host not saturated, or
    past the reach: a report that is not the attempt's last heartbeat.
    """

    held: tuple[float, ...]
    host_s: tuple[float, ...]
    late: tuple[float, ...]

    @property
    def passed(self) -> bool:
        """Every lag accounted for, and the host's moments excuse the odd kill, never
        most of them (a reader that takes a stale heartbeat makes every kill late)."""
        return bool(self.held) and not self.late and len(self.host_s) <= len(self.held)

    @staticmethod
    def joined(parts: Iterable[KilledLags]) -> KilledLags:
        """Several nodes' lags, each judged by its own bound, as one."""
        kept = list(parts)
        return KilledLags(
            held=tuple(lag for part in kept for lag in part.held),
            host_s=tuple(lag for part in kept for lag in part.host_s),
            late=tuple(lag for part in kept for lag in part.late),
        )


def killed_lags(
    records: Iterable[AttemptRecord],
    *,
    bound_ms: float,
    reach_ms: float,
    saturated: Sequence[SaturatedSpan],
) -> KilledLags:
    """Each killed attempt's lag held to ``bound_ms``, or set aside as the host's when
    a saturated span overlaps its last heartbeat to its finish, up to ``reach_ms``."""
    held: list[float] = []
    host_s: list[float] = []
    late: list[float] = []
    for record in records:
        heartbeat, finished = record.self_finished_at_ns, record.finished_at_ns
        if not record.self_finish_is_heartbeat or heartbeat is None or finished is None:
            continue
        lag = (finished - heartbeat) / NS_PER_MS
        busy = any(start < finished and end > heartbeat for start, end, _ in saturated)
        if 0 <= lag <= bound_ms:
            held.append(lag)
        elif busy and 0 <= lag <= reach_ms:
            host_s.append(lag)
        else:
            late.append(lag)
    return KilledLags(held=tuple(held), host_s=tuple(host_s), late=tuple(late))
