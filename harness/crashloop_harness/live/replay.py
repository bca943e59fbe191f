"""A recorded demo run, shown again through the live view: no cluster, no network.

The fallback for a venue whose machine or network misbehaves: the run
directory of a rehearsal holds every attempt (``attempts.jsonl``) and the
curves the kubelets were judged on (``summary.json``). The replay advances a
clock over the recording ``speed`` times faster than it happened and shows
the workers as they were at each moment, then the same takeaways.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from crashloop_harness.core.errors import HarnessError
from crashloop_harness.live.keys import KeyAction
from crashloop_harness.live.view import JudgedWindows, Window, WorkerState
from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.model.durations import NS_PER_S
from crashloop_harness.model.releases import release_of
from crashloop_harness.outputs.summary import RunSummary
from crashloop_harness.outputs.summaryfile import read_summary
from crashloop_harness.pods.skeleton import crashing_pod_name
from crashloop_harness.recording.records import (
    ATTEMPTS_FILE,
    AttemptLogError,
    AttemptRecord,
    read_attempts,
)


@dataclass(frozen=True)
class Recording:
    """A demo's bare-curve run as recorded: every attempt per worker, the curves, the window."""

    summary: RunSummary
    attempts: Mapping[str, Sequence[AttemptRecord]]
    curves: Mapping[str, BackoffCurve]
    start_ns: int
    duration_s: float
    # Each restart's window as the verdict judged it: the panels show these, as the
    # closing table does.
    judged: JudgedWindows = dataclasses.field(default_factory=dict)


def load_recording(run_dir: Path) -> Recording:
    """The run directory of a demo (or any check) run, checked before anything is shown."""
    attempts_file = run_dir / ATTEMPTS_FILE
    if not attempts_file.is_file():
        raise HarnessError(
            f"{run_dir} holds no {ATTEMPTS_FILE}: it is not the run directory of a check",
            "name a demo run (runs/<id>-check-demo-*), e.g. one `crashloop demo` recorded",
        )
    summary = read_summary(run_dir)
    try:
        records = read_attempts(attempts_file)
    except AttemptLogError as error:
        # Its words name the file and the byte already.
        raise HarnessError(str(error), "record the run again") from error
    release = release_of(summary.cluster.kubernetes_version)
    curves: dict[str, BackoffCurve] = {}
    for worker in summary.workers:
        if worker.live_config is None:
            continue
        curves[worker.worker] = BackoffCurve(
            initial=timedelta(seconds=worker.live_config.initial_s),
            maximum=timedelta(seconds=worker.live_config.max_s),
            requeue=release.requeue,
        )
    by_worker: dict[str, list[AttemptRecord]] = {}
    for record in records:
        # Each worker's bare crashing pod: its panel, as live (not the variants beside it,
        # nor the restart-cost probes recorded under the same worker).
        if record.worker in curves and record.pod == crashing_pod_name(record.worker):
            by_worker.setdefault(record.worker, []).append(record)
    if not any(by_worker.values()):
        raise HarnessError(f"{run_dir} recorded no attempt of its workers", "record it again")
    start_ns = min(r.started_at_ns for group in by_worker.values() for r in group)
    window = (summary_end_ns(summary) or start_ns) - start_ns
    judged: dict[str, dict[int, Window]] = {
        worker.worker: {check.n: (check.expected_s, check.upper_bound_s) for check in worker.checks}
        for worker in summary.workers
    }
    return Recording(summary, by_worker, curves, start_ns, max(window / NS_PER_S, 1.0), judged)


def summary_end_ns(summary: RunSummary) -> int | None:
    """When the run's observation ended (its summary's finish), Unix ns; None if unreadable."""
    try:
        finished = datetime.fromisoformat(summary.finished_at.replace("Z", "+00:00"))
    except ValueError:
        return None
    return int(finished.timestamp() * NS_PER_S)


@dataclass(frozen=True)
class AsOf:
    """The recording as it stood ``at_ns``: what a live view would have seen then."""

    attempts: Mapping[str, Sequence[AttemptRecord]]


def as_of(recording: Recording, at_ns: int) -> AsOf:
    """Attempts started by ``at_ns``; an exit after it is not known yet."""
    seen: dict[str, list[AttemptRecord]] = {}
    for worker, records in recording.attempts.items():
        for record in records:
            if record.started_at_ns > at_ns:
                continue
            ended_later = record.finished_at_ns is not None and record.finished_at_ns > at_ns
            known = dataclasses.replace(record, finished_at_ns=None) if ended_later else record
            seen.setdefault(worker, []).append(known)
    return AsOf(seen)


def replay(
    recording: Recording,
    *,
    speed: float,
    show: Callable[[AsOf, int, float], None],
    wait: Callable[[float], KeyAction | None],
    frame_s: float = 0.25,
) -> bool:
    """Step through the recording; ``show(view, now_ns, elapsed_s)`` draws a frame.

    ``wait(seconds)`` waits out one frame in real time and returns the key
    pressed meanwhile, as live: "pause" holds the clock (again, resumes),
    "skip" jumps to the recording's end (then the takeaways), "quit" stops.
    Returns True when it ran (or skipped) to the end.
    """
    if speed <= 0:
        raise HarnessError(f"--speed {speed:g} is not positive", "give a factor such as 1 or 10")
    elapsed = 0.0
    paused = False
    while True:
        now_ns = recording.start_ns + int(elapsed * NS_PER_S)
        show(as_of(recording, now_ns), now_ns, elapsed)
        if elapsed >= recording.duration_s:
            return True
        action = wait(frame_s)
        if action == "quit":
            return False
        if action == "pause":
            paused = not paused
        if action == "skip":
            elapsed = recording.duration_s
        elif not paused:
            elapsed = min(elapsed + frame_s * speed, recording.duration_s)


def with_endings(
    states: Sequence[WorkerState], seen: AsOf, recording: Recording
) -> list[WorkerState]:
    """Workers whose restart is due but who have no later attempt in the recording, "ended".

    Live, a due restart may still come; a replay knows it never did: the check
    decided the worker early, or stopped observing it. Its panel says so, with
    the worker's verdict in a word (the closing verdict line gives its reason),
    instead of a restart "due now" until the end.
    """
    verdicts = {w.worker: w for w in recording.summary.workers}
    shown = []
    for state in states:
        recorded = recording.attempts.get(state.worker, ())
        if state.state != "crashed" or len(seen.attempts.get(state.worker, ())) < len(recorded):
            shown.append(state)
            continue
        verdict = verdicts.get(state.worker)
        word = "passed" if verdict is not None and verdict.passed else "failed"
        shown.append(dataclasses.replace(state, state="ended", ended=f"none: {word}"))
    return shown
