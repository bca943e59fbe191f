"""The nodes' Leases as the API-only recorder's heartbeat: missed renewals, silent nodes."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from freezegun import freeze_time
from kubernetes import client

from crashloop_harness.cluster.leases import RENEW_GAP_NS, stopped_renewing
from crashloop_harness.recording.leasereader import LEASE_POLL_S, LeaseReader
from crashloop_harness.recording.trace import NoTrace
from crashloop_harness.verdict import Observation, judge_worker
from tests.fakeclock import REAL_TIME_FOR
from tests.unit.factories import DEFAULT, attempts, expected_reports

# The client's lazily built models must see the real datetime.
NS = 1_000_000_000
T0 = 1_767_261_600 * NS


def _reader(problems: list[str] | None = None) -> LeaseReader:
    found = problems if problems is not None else []
    return LeaseReader(None, ["n1", "n2"], found.append, threading.Event(), tap=NoTrace())


def test_renewals_ten_seconds_apart_leave_no_unobserved_span() -> None:
    reader = _reader()
    with freeze_time("2026-01-01 10:00:00", ignore=REAL_TIME_FOR) as clock:
        for k in range(6):
            assert reader.on_renewed("n1", T0 + k * 10 * NS)
            clock.tick(10)
        assert reader.unobserved("n1") == []
        assert reader.silent(longer_than=60) == []


def test_a_repeated_renewal_is_not_a_new_one() -> None:
    reader = _reader()
    assert reader.on_renewed("n1", T0)
    assert not reader.on_renewed("n1", T0)


def test_a_gap_longer_than_a_live_kubelet_s_is_a_span_on_the_node_s_clock() -> None:
    reader = _reader()
    with freeze_time("2026-01-01 10:00:00", ignore=REAL_TIME_FOR) as clock:
        reader.on_renewed("n1", T0)
        clock.tick(45)
        reader.on_renewed("n1", T0 + 45 * NS)  # paused 35 s past a renewal
        assert reader.unobserved("n1") == [(T0, T0 + 45 * NS)]
        # One poll and a jitter under the bound is still a live kubelet.
        reader.on_renewed("n1", T0 + 45 * NS + RENEW_GAP_NS)
        assert reader.unobserved("n1") == [(T0, T0 + 45 * NS)]
        assert reader.unobserved("n2") == []


def test_a_lease_gone_still_is_an_open_span_then_a_silent_node() -> None:
    reader = _reader()
    with freeze_time("2026-01-01 10:00:00", ignore=REAL_TIME_FOR) as clock:
        reader.on_renewed("n1", T0)
        clock.tick(RENEW_GAP_NS / NS + LEASE_POLL_S - 0.5)
        assert reader.unobserved("n1") == []
        clock.tick(1)
        ((start, end),) = reader.unobserved("n1")
        assert start == T0
        assert end > T0 + 3600 * NS
        assert reader.silent(longer_than=60) == []
        clock.tick(60)
        (silent,) = reader.silent(longer_than=60)
        assert silent.startswith("node n1: its kubelet has not renewed its Lease for 74s")


def test_an_overdue_restart_across_a_lease_gap_is_an_error_not_a_failure() -> None:
    # The default worker's restart 3 (20 s back-off) never came: its node was paused.
    records = attempts([0.4, 10.6], reported=expected_reports(DEFAULT, 2))
    last_exit = records[-1].finished_at_ns
    assert last_exit is not None
    now = last_exit + 120 * NS
    judged = judge_worker(records, DEFAULT, observation=Observation(now_ns=now))
    assert not judged.passed
    assert not judged.in_error
    reader = _reader()
    with freeze_time("2026-01-01 10:00:00", ignore=REAL_TIME_FOR):
        reader.on_renewed("n1", last_exit - 5 * NS)
        reader.on_renewed("n1", now - 2 * NS)
    frozen = judge_worker(
        records,
        DEFAULT,
        observation=Observation(now_ns=now, unobserved=tuple(reader.unobserved("n1"))),
    )
    assert frozen.in_error, frozen.failures
    assert "node frozen" in frozen.errors[0].words


def test_a_lease_that_cannot_be_read_is_said_once_and_the_reader_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    problems: list[str] = []

    class _Forbidden:
        def read_namespaced_lease(self, *args: Any, **kwargs: Any) -> Any:
            raise client.ApiException(status=403, reason="Forbidden")

    monkeypatch.setattr(client, "CoordinationV1Api", lambda api: _Forbidden())
    reader = LeaseReader(
        client.ApiClient(), ["n1", "n2"], problems.append, threading.Event(), tap=NoTrace()
    )
    reader.run()
    assert problems == [
        "the Lease of node n1 cannot be read (403 Forbidden): node freezes are not detected"
    ]
    assert reader.unreadable == problems[0]


def test_a_kubelet_whose_lease_stopped_moving_is_said_stopped_once_frozen_or_exited() -> None:
    """SIGSTOP leaves the process alive; its Lease stops, as an exited kubelet's does: the run
    says the same of both, and nothing twice of a node its process already said stopped."""
    now = 1_796_402_400 * 1_000_000_000
    renewals = {
        "frozen": now - 70 * 1_000_000_000,
        "live": now - 4 * 1_000_000_000,
        "exited": now - 90 * 1_000_000_000,
        "unread": None,
    }
    said_of = stopped_renewing(renewals, now, already=["exited"])
    assert list(said_of) == ["frozen"]
    said = said_of["frozen"]
    assert said.startswith("the kubelet of node frozen stopped answering: its Lease was last")
    assert "70s before the run's end" in said
