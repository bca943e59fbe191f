"""The live view's tests' shared makings: workers' attempts as a check's result holds them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from crashloop_harness.live.view import WorkerState, states_from
from crashloop_harness.recording.records import AttemptRecord
from tests.unit.factories import DEFAULT, FAST, NS, REDUCED, attempts


@dataclass
class FakeResult:
    """Just what states_from reads of a CheckResult."""

    attempts: Mapping[str, Sequence[AttemptRecord]] = field(default_factory=dict)


CURVES = {"fast": FAST, "reduced": REDUCED, "default": DEFAULT}


def records(
    worker: str, delays_s: list[float], *, last_running: bool = False
) -> list[AttemptRecord]:
    return [
        dataclasses.replace(r, worker=worker) for r in attempts(delays_s, last_running=last_running)
    ]


def finished_ns(attempt: AttemptRecord) -> int:
    assert attempt.finished_at_ns is not None
    return attempt.finished_at_ns


def sample_states() -> list[WorkerState]:
    """fast waiting 0.5s after its third exit, reduced running, default not started."""
    fast = records("fast", [0.4, 2.3, 2.2])
    reduced = records("reduced", [0.5, 1.2], last_running=True)
    now = finished_ns(fast[-1]) + NS // 2
    return states_from(FakeResult({"fast": fast, "reduced": reduced}), CURVES, now)
