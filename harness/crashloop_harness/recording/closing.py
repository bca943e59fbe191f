"""What every recorder keeps the same way: the problems its threads met, and how it ends its
log (the one `stop()` tail they share)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from crashloop_harness.recording.observercost import (
    CpuReading,
    ObserverCost,
    observer_cost,
    read_cpu,
)
from crashloop_harness.recording.podwatch import PodWatch
from crashloop_harness.recording.records import AttemptLog
from crashloop_harness.recording.trace import Tap


@dataclass
class RecorderErrors:
    """Problems the threads met; kept for the summary instead of being lost."""

    messages: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, message: str) -> None:
        with self.lock:
            if message not in self.messages[-5:]:
                self.messages.append(message)


class ClosesItsLog:
    """A recorder's last step, after its readers stopped: the log closed under the lock (no
    reader writes after it), a trace that could not be written said among its errors, and
    what observing cost, from the CPU read at the start to now."""

    log: AttemptLog
    errors: RecorderErrors
    trace: Tap
    watch: PodWatch
    cost: ObserverCost | None
    _lock: threading.Lock
    _closed: bool
    _cpu_before: CpuReading | None

    def close_log(self, observer: str, *, reconciled: int = 0, reconnects: int = 0) -> None:
        with self._lock:
            records = self.log.latest()
            self.log.close()
            self._closed = True
        if self.trace.problem:
            self.errors.add(self.trace.problem)
        if self._cpu_before is not None:
            self.cost = observer_cost(
                observer=observer,
                before=self._cpu_before,
                after=read_cpu(),
                records=records,
                reconciled=reconciled,
                reconnects=reconnects,
                api_requests=self.watch.requests,
                watch_events=self.watch.events,
            )
