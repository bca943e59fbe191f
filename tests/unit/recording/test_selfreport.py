"""The workload's own report in the pod status: parsed, recorded from the API alone, compared."""

from __future__ import annotations

import dataclasses
import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from kubernetes import client

from crashloop_harness.recording.apirecorder import WATCH_SLACK_S, ApiRecorder
from crashloop_harness.recording.records import SOURCE_SELF, AttemptRecord
from crashloop_harness.recording.scope import RecordingScope
from crashloop_harness.recording.selfreport import (
    KilledLags,
    SelfReport,
    agreement,
    killed_lags,
    parse_self_report,
)
from tests.unit.recording.pods import app_status, backing_off

S = 1_000_000_000
START_2 = 1_767_261_602_123_456_789  # 2026-01-01T10:00:02.123456789Z


def _message(start: int, end: int, code: int = 1) -> str:
    return json.dumps({"v": 1, "start_ns": start, "exit_ns": end, "exit_code": code})


@pytest.mark.parametrize(
    "message",
    [
        None,
        "",
        "panic: something else the program printed",
        '{"v": 2, "start_ns": 1, "exit_ns": 2, "exit_code": 1}',
        '{"v": 1, "start_ns": "1", "exit_ns": 2, "exit_code": 1}',
        '{"v": 1, "start_ns": 5, "exit_ns": 4, "exit_code": 1}',
        '{"v": 1, "start_ns": true, "exit_ns": 4, "exit_code": 1}',
        "[1, 2, 3]",
    ],
)
def test_anything_but_a_well_formed_report_is_no_report(message: str | None) -> None:
    assert parse_self_report(message) is None


def test_a_report_gives_start_exit_and_code() -> None:
    assert parse_self_report(_message(10, 12, 3)) == SelfReport(10, 12, 3)


def _terminated(
    start_ns: int, end_ns: int, *, message: bool = True
) -> client.V1ContainerStateTerminated:
    return client.V1ContainerStateTerminated(
        exit_code=1,
        reason="Error",
        started_at=datetime.fromtimestamp(start_ns // S, UTC),
        finished_at=datetime.fromtimestamp(end_ns // S, UTC),
        container_id="containerd://abc",
        message=_message(start_ns, end_ns) if message else None,
    )


def _pod(
    restarts: int, last: client.V1ContainerStateTerminated, backoff: str | None
) -> client.V1Pod:
    status = app_status(restarts, backing_off(backoff) if backoff else None, last)
    return client.V1Pod(
        metadata=client.V1ObjectMeta(uid="uid-1", name="crash-fast", resource_version="1"),
        spec=client.V1PodSpec(node_name="node-1", containers=[]),
        status=client.V1PodStatus(container_statuses=[status]),
    )


def _recorder(tmp_path: Path) -> ApiRecorder:
    return ApiRecorder(
        RecordingScope(client.ApiClient(), "ns", "run", tmp_path, {"node-1": "fast"})
    )


def test_an_attempt_is_recorded_from_its_report_with_the_kubelets_level(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path)
    # Attempt 2 exited; the kubelet waits 2s before attempt 3.
    recorder.watch.observe_pod(_pod(2, _terminated(START_2, START_2 + 5_000_000), "2s"))
    (record,) = recorder.attempts()
    assert (record.worker, record.node, record.pod, record.attempt) == (
        "fast",
        "node-1",
        "crash-fast",
        2,
    )
    assert (record.started_at_ns, record.finished_at_ns) == (START_2, START_2 + 5_000_000)
    assert record.created_at_ns is None  # the API alone never knows the create time
    assert record.source == SOURCE_SELF
    assert record.container_id == "containerd://abc"
    assert recorder.pending_backoffs() == {("uid-1", "app"): (3, 2.0)}


def test_a_status_without_a_report_records_nothing(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path)
    recorder.watch.observe_pod(_pod(2, _terminated(START_2, START_2 + 1, message=False), None))
    assert recorder.attempts() == []


def test_a_pod_on_a_node_that_is_not_checked_records_nothing(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path)
    recorder.node_workers = {"node-9": "other"}
    recorder.watch.observe_pod(_pod(2, _terminated(START_2, START_2 + 1), None))
    assert recorder.attempts() == []


def test_the_nodes_now_is_never_overstated(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path)
    assert recorder.listed_at_ns("node-1") is None  # nothing known yet: nothing can be overdue
    # A report that left the node 1s before it arrived here: the node's clock is
    # at most (here - 1s) now, and the slack for reports still on their way comes off.
    exited = time.time_ns() - S
    recorder.watch.observe_pod(_pod(2, _terminated(exited - 1000, exited), None))
    before = time.time_ns()
    listed = recorder.listed_at_ns("node-1")
    assert listed is not None
    assert listed <= before - S - int(WATCH_SLACK_S * S) + S // 10


def _record(
    started: int, finished: int, self_start: int | None, self_end: int | None
) -> AttemptRecord:
    return AttemptRecord(
        run_id="r",
        worker="fast",
        node="n",
        namespace="ns",
        pod="p",
        pod_uid="u",
        container="app",
        attempt=0,
        container_id="c",
        started_at_ns=started,
        finished_at_ns=finished,
        self_started_at_ns=self_start,
        self_finished_at_ns=self_end,
    )


def _kill(heartbeat_ms: int, lag_ms: int) -> AttemptRecord:
    ms = 1_000_000
    record = _record(0, (heartbeat_ms + lag_ms) * ms, 0, heartbeat_ms * ms)
    return dataclasses.replace(record, self_finish_is_heartbeat=True)


def test_a_killed_lag_past_its_bound_is_the_host_s_only_while_the_host_was_saturated() -> None:
    ms = 1_000_000
    # Saturated from 10 s to 12 s (host clock): the kill 336 ms after its heartbeat at
    # 11 s is the host's; the same lag at 20 s, with the host below saturation, is late,
    # and 2 s past a heartbeat is past anything a busy host accounts for.
    kills = [_kill(1_000, 30), _kill(2_000, 250), _kill(11_000, 336), _kill(20_000, 336)]
    found = killed_lags(
        [*kills, _kill(11_500, 2_000), _record(0, 5 * ms, 0, 4 * ms)],
        bound_ms=250.0,
        reach_ms=1_600.0,
        saturated=[(10_000 * ms, 12_000 * ms, 0.97)],
    )
    assert found == KilledLags(held=(30.0, 250.0), host_s=(336.0,), late=(336.0, 2_000.0))
    assert not found.passed
    assert KilledLags(held=(30.0, 250.0), host_s=(336.0,), late=()).passed


def test_the_host_excuses_the_odd_killed_lag_never_most_of_them() -> None:
    # A reader taking a stale heartbeat makes every kill late: were the host saturated
    # throughout, the lags set aside would outnumber those held to the bound.
    assert not KilledLags(held=(30.0,), host_s=(400.0, 420.0), late=()).passed
    assert not KilledLags(held=(), host_s=(), late=()).passed
    nodes = [
        KilledLags(held=(), host_s=(336.0,), late=()),
        KilledLags(held=(20.0, 25.0), host_s=(), late=()),
    ]
    assert KilledLags.joined(nodes) == KilledLags(held=(20.0, 25.0), host_s=(336.0,), late=())
    assert KilledLags.joined(nodes).passed


def test_agreement_is_measured_only_where_both_sources_saw_the_attempt() -> None:
    ms = 1_000_000
    records = [
        _record(0, 10 * ms, 1 * ms, 10 * ms + ms // 2),
        _record(0, 10 * ms, 3 * ms, 9 * ms),
        _record(0, 10 * ms, None, None),
    ]
    found = agreement(records)
    assert found.attempts == 2
    assert (found.start_median_ms, found.start_max_ms) == (2.0, 3.0)
    assert (found.finish_median_ms, found.finish_max_ms) == (0.75, 1.0)
    assert found.within(start_median_ms=2.0, finish_median_ms=0.75, max_ms=3.0)
    assert not found.within(start_median_ms=2.0, finish_median_ms=0.75, max_ms=2.9)
    # Each median against its own bound: the start's typical difference too
    # large, then the finish's, the other bound generous.
    assert not found.within(start_median_ms=1.9, finish_median_ms=10.0, max_ms=3.0)
    assert not found.within(start_median_ms=10.0, finish_median_ms=0.74, max_ms=3.0)
    assert not agreement([]).within(start_median_ms=10.0, finish_median_ms=10.0, max_ms=10.0)


def test_a_watch_that_stops_answering_stops_the_nodes_clock(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path)
    exited = time.time_ns() - S
    recorder.watch.observe_pod(_pod(2, _terminated(exited - 1000, exited), None))
    first = recorder.listed_at_ns("node-1")
    # Nothing more heard from the API: "now" on the node does not move on, so no
    # restart the watch failed to deliver can turn overdue.
    assert recorder.listed_at_ns("node-1") == first
    heard = recorder.watch.heard_at_ns
    assert heard is not None
    assert first is not None
    assert first < heard - int(WATCH_SLACK_S * S)


def test_a_heartbeat_gives_the_start_and_a_lower_bound_of_the_exit() -> None:
    # Padded as the workload writes it, so each report overwrites the last in place.
    message = json.dumps({"v": 1, "start_ns": 10, "alive_ns": 15}).ljust(120)
    report = parse_self_report(message)
    assert report == SelfReport(10, 15, None)
    assert report is not None
    assert not report.exited
    assert parse_self_report(_message(10, 12, 3).ljust(120)) == SelfReport(10, 12, 3)
    # An exit without its code is no report (the workload always writes both).
    assert parse_self_report('{"v": 1, "start_ns": 10, "exit_ns": 12}') is None


def _killed(start_ns: int, alive_ns: int) -> client.V1ContainerStateTerminated:
    return client.V1ContainerStateTerminated(
        exit_code=137,
        reason="OOMKilled",
        started_at=datetime.fromtimestamp(start_ns // S, UTC),
        finished_at=datetime.fromtimestamp(alive_ns // S, UTC),
        container_id="containerd://abc",
        message=json.dumps({"v": 1, "start_ns": start_ns, "alive_ns": alive_ns}),
    )


def test_a_killed_attempt_is_recorded_with_its_last_heartbeat(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path)
    recorder.watch.observe_pod(_pod(2, _killed(START_2, START_2 + 7 * S), "2s"))
    (record,) = recorder.attempts()
    assert record.finished_at_ns == START_2 + 7 * S
    assert record.self_finish_is_heartbeat
    assert (record.exit_code, record.reason) == (137, "OOMKilled")


def _being_deleted(pod: client.V1Pod) -> client.V1Pod:
    pod.metadata.deletion_timestamp = datetime.now(UTC)
    return pod


def test_an_attempt_the_run_ended_keeps_its_start_and_no_exit(tmp_path: Path) -> None:
    # Deleting the pod stops its running container: that is no exit for the
    # kubelet to restart from, so only its start is recorded.
    recorder = _recorder(tmp_path)
    pod = _being_deleted(_pod(3, _terminated(START_2, START_2 + 9 * S), None))
    # The current attempt (3) shows as terminated; lastState holds none.
    status = pod.status.container_statuses[0]
    status.state = client.V1ContainerState(terminated=status.last_state.terminated)
    status.last_state = client.V1ContainerState()
    recorder.watch.observe_pod(pod)
    (record,) = recorder.attempts()
    assert (record.attempt, record.started_at_ns) == (3, START_2)
    assert (record.finished_at_ns, record.exit_code, record.reason) == (None, None, "")


def test_the_attempt_before_the_one_the_run_ended_keeps_its_exit(tmp_path: Path) -> None:
    # lastState ended before the current attempt started: a deletion cannot have ended it.
    recorder = _recorder(tmp_path)
    recorder.watch.observe_pod(_being_deleted(_pod(3, _terminated(START_2, START_2 + S), None)))
    (record,) = recorder.attempts()
    assert (record.attempt, record.finished_at_ns, record.exit_code) == (2, START_2 + S, 1)


def test_an_exit_recorded_before_the_deletion_is_kept(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path)
    recorder.watch.observe_pod(_pod(2, _killed(START_2, START_2 + 7 * S), "2s"))
    recorder.watch.observe_pod(_being_deleted(_pod(2, _killed(START_2, START_2 + 7 * S), "2s")))
    (record,) = recorder.attempts()
    assert record.finished_at_ns == START_2 + 7 * S
    assert record.reason == "OOMKilled"
    assert record.self_finish_is_heartbeat


def test_killed_attempts_are_compared_apart_from_exits() -> None:
    ms = 1_000_000
    killed = dataclasses.replace(
        _record(0, 100 * ms, 1 * ms, 40 * ms), self_finish_is_heartbeat=True
    )
    found = agreement([_record(0, 10 * ms, 1 * ms, 10 * ms), killed])
    assert (found.killed, found.killed_lag_median_ms, found.killed_lag_max_ms) == (1, 60.0, 60.0)
    assert found.finish_max_ms == 0.0  # the heartbeat's 60ms lag is not an exit's disagreement
    assert found.within(start_median_ms=1.0, finish_median_ms=1.0, max_ms=1.0)


def test_a_pod_being_deleted_has_ended_once_no_container_runs(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path)
    pod = _being_deleted(_pod(3, _terminated(START_2, START_2 + S), None))
    running = client.V1ContainerStateRunning(started_at=datetime.fromtimestamp(START_2 // S, UTC))
    pod.status.container_statuses[0].state = client.V1ContainerState(running=running)
    recorder.watch.observe_pod(pod)
    assert recorder.watch.ended_pods == set()  # its container has not reported its end yet
    terminated = client.V1ContainerState(terminated=_terminated(START_2, START_2 + 9 * S))
    pod.status.container_statuses[0].state = terminated
    recorder.watch.observe_pod(pod)
    assert recorder.watch.ended_pods == {"uid-1"}


# --- a history: the attempts the pod status never showed -------------------------------------


def _with_history(start: int, end: int, attempt: int, earlier: list[object]) -> str:
    report = {"v": 1, "start_ns": start, "exit_ns": end, "exit_code": 0}
    return json.dumps({**report, "attempt": attempt, "earlier": earlier}).ljust(400)


def _own(start: int, end: int, code: int = 0) -> dict[str, int]:
    return {"v": 1, "start_ns": start, "exit_ns": end, "exit_code": code}


def test_a_history_numbers_the_attempt_and_gives_the_earlier_reports_newest_first() -> None:
    heartbeat = {"v": 1, "start_ns": 1, "alive_ns": 2}
    report = parse_self_report(_with_history(50, 60, 3, [_own(30, 40), None, heartbeat]))
    assert report == SelfReport(
        50, 60, 0, attempt=3, earlier=(SelfReport(30, 40, 0), None, SelfReport(1, 2, None))
    )


@pytest.mark.parametrize(
    "history",
    [{"attempt": -1, "earlier": []}, {"attempt": "3", "earlier": []}, {"attempt": 3}],
)
def test_a_history_that_does_not_parse_leaves_the_report_alone(history: dict[str, object]) -> None:
    message = json.dumps({**_own(50, 60), **history})
    assert parse_self_report(message) == SelfReport(50, 60, 0)


def _killed_by_probe(start_ns: int, end_ns: int, message: str) -> client.V1ContainerStateTerminated:
    terminated = _terminated(start_ns, end_ns)
    terminated.exit_code, terminated.message = 0, message
    return terminated


def test_an_attempt_the_status_skipped_is_recorded_from_the_next_ones_report(
    tmp_path: Path,
) -> None:
    recorder = _recorder(tmp_path)
    # Attempts 1 and 2 ended between two status updates: the status shows 2 ended.
    one = (START_2, START_2 + S)
    two = (START_2 + 2 * S, START_2 + 3 * S)
    message = _with_history(*two, 2, [_own(*one), _own(START_2 - 2 * S, START_2 - S)])
    recorder.watch.observe_pod(_pod(3, _killed_by_probe(*two, message), None))
    by_attempt = {r.attempt: r for r in recorder.attempts()}
    # Attempt 0 was never shown ended either: it is recovered too.
    assert sorted(by_attempt) == [0, 1, 2]
    skipped = by_attempt[1]
    assert (skipped.started_at_ns, skipped.finished_at_ns, skipped.exit_code) == (*one, 0)
    assert (skipped.container_id, skipped.reason, skipped.source) == ("", "", SOURCE_SELF)
    assert (skipped.pod, skipped.worker) == ("crash-fast", "fast")


def test_a_skipped_attempt_already_recorded_is_not_replaced(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path)
    one = (START_2, START_2 + S)
    recorder.watch.observe_pod(_pod(2, _terminated(*one), None))
    two = (START_2 + 2 * S, START_2 + 3 * S)
    wrong = _own(START_2 + S // 2, START_2 + S)  # would move attempt 1's start if taken
    recorder.watch.observe_pod(
        _pod(3, _killed_by_probe(*two, _with_history(*two, 2, [wrong])), None)
    )
    by_attempt = {r.attempt: r for r in recorder.attempts()}
    assert by_attempt[1].started_at_ns == one[0]
    assert by_attempt[1].container_id == "containerd://abc"


def test_a_history_counted_differently_from_the_kubelet_is_not_used(tmp_path: Path) -> None:
    # The workload counts 5 attempts where the kubelet counts 2 (its numbers
    # started again, or a process never ran): no earlier report can be placed.
    recorder = _recorder(tmp_path)
    two = (START_2 + 2 * S, START_2 + 3 * S)
    message = _with_history(*two, 5, [_own(START_2, START_2 + S)])
    recorder.watch.observe_pod(_pod(3, _killed_by_probe(*two, message), None))
    assert [r.attempt for r in recorder.attempts()] == [2]
