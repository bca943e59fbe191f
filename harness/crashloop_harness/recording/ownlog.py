"""The workload's own attempts.log as attempt records (pure).

The workload appends ``start`` and ``exit`` (with its code) to
``attempts.log`` in its emptyDir, which outlives container restarts and even
a RestartAllContainers reset. Numbered by the workload's own count, these
records stand where the runtime's attempt numbers do not (a 1.35 kubelet
numbers a reset pod's containers from 0 again).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Final

from crashloop_harness.recording.records import SOURCE_SELF, AttemptRecord

ATTEMPTS_LOG: Final = "attempts.log"


def own_attempts(text: str, mode: str) -> list[AttemptRecord]:
    """One container's attempts from the workload's own log, numbered by its own count.

    Each attempt logs ``start`` and, unless killed, ``exit`` with its code;
    lines of other modes (the app beside the watcher) are skipped, and so is
    a torn last line. Only the times and codes are filled in.
    """
    attempts: list[AttemptRecord] = []
    for line in text.splitlines():
        try:
            raw = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(raw, dict) or raw.get("mode") != mode:
            continue
        event, unix_ns = raw.get("event"), raw.get("unix_ns")
        if not isinstance(unix_ns, int):
            continue
        if event == "start":
            attempts.append(_own_attempt(len(attempts), unix_ns))
        elif event == "exit" and attempts and attempts[-1].finished_at_ns is None:
            code = raw.get("exit_code")
            attempts[-1] = dataclasses.replace(
                attempts[-1],
                finished_at_ns=unix_ns,
                exit_code=code if isinstance(code, int) else None,
            )
    return attempts


def _own_attempt(number: int, start_ns: int) -> AttemptRecord:
    return AttemptRecord(
        run_id="",
        worker="",
        node="",
        namespace="",
        pod="",
        pod_uid="",
        container="",
        attempt=number,
        container_id=f"{SOURCE_SELF}-{number}",
        started_at_ns=start_ns,
        source=SOURCE_SELF,
    )
