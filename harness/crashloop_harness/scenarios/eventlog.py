"""The events a workload writes to its own JSON-lines log (pure): the critical sidecar's
client says when it lost and regained its proxy."""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class LogEvent:
    """One line of a workload log: ``{"event": ..., "unix_ns": ...}``."""

    event: str
    unix_ns: int


def parse_events(text: str) -> list[LogEvent]:
    """Events of a JSON-lines workload log, in file order.

    A torn last line (the process killed mid-write) is dropped; a bad line
    elsewhere raises ValueError, since the file would then not be ours.
    """
    lines = text.split("\n")
    events: list[LogEvent] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            event, unix_ns = raw["event"], raw["unix_ns"]
            if not isinstance(event, str) or isinstance(unix_ns, bool):
                raise TypeError(f"unexpected value types in {raw!r}")
            events.append(LogEvent(event, int(unix_ns)))
        except (ValueError, KeyError, TypeError) as error:
            if number == len(lines):
                break
            raise ValueError(f"line {number}: not a workload event: {error}") from error
    return events
