"""Attempt records of scenario containers, on a curve, for the scenario metric tests."""

from __future__ import annotations

from datetime import timedelta

from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.recording.records import AttemptRecord

S = 1_000_000_000
T0 = 1_700_000_000 * S
FAST = BackoffCurve(initial=timedelta(seconds=2), maximum=timedelta(seconds=2))
REDUCED = BackoffCurve(initial=timedelta(seconds=1), maximum=timedelta(seconds=60))
DEFAULT = BackoffCurve(initial=timedelta(seconds=10), maximum=timedelta(seconds=300))


def record(
    attempt: int,
    started: float,
    finished: float | None,
    *,
    pod: str = "pod",
    container: str = "app",
    exit_code: int | None = 0,
    reason: str = "Completed",
    reported: float | None = None,
) -> AttemptRecord:
    return AttemptRecord(
        run_id="run",
        worker="w",
        node="node",
        namespace="ns",
        pod=pod,
        pod_uid=f"uid-{pod}",
        container=container,
        attempt=attempt,
        container_id=f"c{attempt}",
        started_at_ns=T0 + int(started * S),
        finished_at_ns=None if finished is None else T0 + int(finished * S),
        exit_code=None if finished is None else exit_code,
        reason="" if finished is None else reason,
        reported_backoff_s=reported,
    )


def timeline(
    curve: BackoffCurve,
    run_s: float,
    count: int,
    *,
    overshoot_s: float = 0.3,
    exit_code: int = 0,
    reason: str = "Completed",
    container: str = "app",
    last_running: bool = False,
) -> list[AttemptRecord]:
    """``count`` attempts of ``run_s`` each, restart n after its back-off plus overshoot.

    Each restart that waits carries the level the kubelet reports for it, as
    the pod watch records it: scenario verdicts confirm levels as checks do.
    """
    records, start = [], 0.0
    for n in range(count):
        if n:
            start += curve.delay_before_restart(n).total_seconds() + overshoot_s
        running = last_running and n == count - 1
        level = curve.expected_reported_backoff(n) if n else None
        records.append(
            record(
                n,
                start,
                None if running else start + run_s,
                exit_code=exit_code,
                reason=reason,
                container=container,
                reported=None if level is None else level.total_seconds(),
            )
        )
        start += run_s
    return records
