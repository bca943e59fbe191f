"""A kind cluster's run ending: its kubelet processes, and Leases that tell a frozen one."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import pytest

from crashloop_harness.cluster.kindkubelets import KindKubelets
from crashloop_harness.cluster.kubeletstate import KubeletProcess
from crashloop_harness.cluster.target import RunEnding
from crashloop_harness.core.polling import Polled

NS = 1_000_000_000


def _ending_with_leases(
    monkeypatch: pytest.MonkeyPatch,
    readings: Sequence[Mapping[str, int | None]],
    confirm: set[str],
) -> RunEnding:
    """The ending of a kind cluster whose kubelet processes are unchanged, reading the Leases
    from ``readings`` in turn (the first at the end, the next while confirming)."""
    clock = [2_000 * NS]
    monkeypatch.setattr("crashloop_harness.cluster.kindkubelets.time.time_ns", lambda: clock[0])
    monkeypatch.setattr("crashloop_harness.cluster.kindkubelets.engine_gone_reason", lambda: None)
    process = KubeletProcess(pid=7, active_since_us=1)
    monkeypatch.setattr(
        "crashloop_harness.cluster.kindkubelets.kubeletstate.snapshot",
        lambda nodes: dict.fromkeys(nodes, process),
    )
    answers = iter(readings)
    monkeypatch.setattr(
        "crashloop_harness.cluster.kindkubelets.last_renewals", lambda _api, nodes: next(answers)
    )

    def poll_once(read: Any, until: Any, **_: Any) -> Polled[Any]:
        clock[0] += 15 * NS  # the watch lasts its LEASE_CONFIRM when nothing is renewed
        last = read()
        return Polled(until(last), last)

    monkeypatch.setattr("crashloop_harness.cluster.kindkubelets.poll", poll_once)
    kubelets = KindKubelets(cast(Any, None), {"w1": process, "w2": process})
    return kubelets.ending(confirm)


def test_a_kubelet_frozen_just_before_the_end_is_said_stopped_once_its_lease_lapses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its Lease renewed 5 s before the end: too early to tell, so the ending watches it for a
    renewal period; no renewal comes, and it is said stopped like an exited kubelet."""
    at_end = {"w1": 1_995 * NS, "w2": 1_996 * NS}
    lapsed = {"w1": 1_995 * NS}
    stopped = _ending_with_leases(monkeypatch, [at_end, lapsed], confirm={"w1"}).stopped
    assert list(stopped) == ["w1"]
    said = stopped["w1"]
    assert said.startswith("the kubelet of node w1 stopped answering")
    renewed = {"w1": 2_004 * NS}
    alive = _ending_with_leases(monkeypatch, [at_end, renewed], confirm={"w1"})
    assert alive.stopped == {}


def test_a_kubelet_whose_lease_lapsed_is_said_stopped_without_waiting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at_end = {"w1": 1_930 * NS, "w2": 1_996 * NS}
    ending = _ending_with_leases(monkeypatch, [at_end], confirm={"w1"})
    (said,) = ending.stopped.values()
    assert list(ending.stopped) == ["w1"]
    assert said.startswith("the kubelet of node w1 stopped answering: its Lease was last renewed")
