"""Other pods' start-ups read from a kubelet's own pod list."""

from __future__ import annotations

from typing import Any

from crashloop_harness.core.conventions import RUN_LABEL
from crashloop_harness.model.durations import NS_PER_S
from crashloop_harness.recording.nodepods import (
    SANDBOX_READY,
    PodStartup,
    startup_time_within,
    startups_of,
)

T0 = 1_796_650_683  # 2026-12-07 13:38:03 UTC, whole seconds as the API writes them


def _pod(name: str, started: str | None, ready: str | None, run: str | None = None) -> Any:
    status: dict[str, Any] = {}
    if started is not None:
        status["startTime"] = started
    if ready is not None:
        status["conditions"] = [
            {"type": SANDBOX_READY, "status": "True", "lastTransitionTime": ready}
        ]
    labels = {RUN_LABEL: run} if run else {}
    return {"metadata": {"namespace": "other", "name": name, "labels": labels}, "status": status}


def test_a_kubelet_s_pod_list_gives_each_other_pod_s_start_up() -> None:
    listed = {
        "items": [
            _pod("a", "2026-12-07T13:38:03Z", "2026-12-07T13:38:04Z"),
            _pod("starting", "2026-12-07T13:38:05Z", None),
            _pod("ours", "2026-12-07T13:38:03Z", "2026-12-07T13:38:04Z", run="run-1"),
            _pod("unscheduled", None, None),
        ]
    }
    assert startups_of(listed, "run-1") == [
        PodStartup("other/a", T0 * NS_PER_S, (T0 + 1) * NS_PER_S),
        PodStartup("other/starting", (T0 + 2) * NS_PER_S, None),
    ]


def test_a_start_up_overlaps_by_whole_seconds_and_one_still_starting_overlaps_all_after() -> None:
    ready = PodStartup("ns/p", T0 * NS_PER_S, (T0 + 1) * NS_PER_S)
    # Its sandbox ready "at 13:38:04" may have been as late as 13:38:04.999.
    assert ready.overlaps((T0 + 1) * NS_PER_S + 900_000_000, (T0 + 3) * NS_PER_S)
    assert not ready.overlaps((T0 + 2) * NS_PER_S, (T0 + 3) * NS_PER_S)
    assert not ready.overlaps((T0 - 3) * NS_PER_S, T0 * NS_PER_S)
    starting = PodStartup("ns/q", T0 * NS_PER_S, None)
    assert starting.overlaps((T0 + 100) * NS_PER_S, (T0 + 101) * NS_PER_S)
    assert PodStartup.from_fields(ready.to_fields()) == ready


def test_start_ups_that_overlap_are_counted_once_within_the_window() -> None:
    at = T0 * NS_PER_S
    startups = [
        PodStartup("ns/a", at, at + NS_PER_S),  # may run to at + 2 s
        PodStartup("ns/b", at + NS_PER_S, at + NS_PER_S),  # at + 1 s .. at + 2 s, inside a's
        PodStartup("ns/c", at + 5 * NS_PER_S, None),  # still starting
    ]
    assert startup_time_within(startups, at, at + 10 * NS_PER_S) == 2 * NS_PER_S + 5 * NS_PER_S
    assert startup_time_within(startups, at + 3 * NS_PER_S, at + 4 * NS_PER_S) == 0
