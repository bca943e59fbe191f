"""What each scenario is doing now, one cell per scenario and worker, for the live demo (pure).

From the attempts recorded so far: per container of the scenario's pod its
restarts, and the most recent exit with its reason and how long ago ("proxy
OOMKilled 4s ago"), so the presenter can say "the sidecar was just
OOMKilled, the app is untouched" while it happens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from crashloop_harness.model.durations import NS_PER_S
from crashloop_harness.recording.records import AttemptRecord

# pod name -> (scenario, worker)
PodMap = Mapping[str, tuple[str, str]]
_NO_REASON: Final = "exited"


@dataclass(frozen=True)
class ScenarioCell:
    """One scenario on one worker: restarts per container, then the latest exit."""

    scenario: str
    worker: str
    counts: str
    last: str = ""

    @property
    def text(self) -> str:
        return " · ".join(filter(None, (self.counts, self.last)))


def scenario_cells(
    records: Sequence[AttemptRecord], pods: PodMap, now_ns: int
) -> list[ScenarioCell]:
    """One cell per (scenario, worker) of ``pods``, in their order; "starting" before any record."""
    by_key: dict[tuple[str, str], list[AttemptRecord]] = {}
    for record in records:
        key = pods.get(record.pod)
        if key is not None:
            by_key.setdefault(key, []).append(record)
    cells = []
    for key in dict.fromkeys(pods.values()):
        found = by_key.get(key, [])
        if not found:
            cells.append(ScenarioCell(key[0], key[1], "starting"))
            continue
        cells.append(ScenarioCell(key[0], key[1], _counts(found), _last(found, now_ns)))
    return cells


def _counts(records: Sequence[AttemptRecord]) -> str:
    restarts: dict[str, int] = {}
    for record in records:
        restarts[record.container] = max(restarts.get(record.container, 0), record.attempt)
    return " · ".join(f"{container} {count}" for container, count in restarts.items())


def _last(records: Sequence[AttemptRecord], now_ns: int) -> str:
    ended = [r for r in records if r.finished_at_ns is not None]
    if not ended:
        return ""
    last = max(ended, key=lambda r: r.finished_at_ns or 0)
    ago = max((now_ns - (last.finished_at_ns or now_ns)) / NS_PER_S, 0.0)
    return f"{last.container} {last.reason or _NO_REASON} {ago:.0f}s ago"
