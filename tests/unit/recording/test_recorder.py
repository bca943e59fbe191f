"""The recorder's runtime sampling, with a fake node instead of `docker exec`."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

import pytest
from kubernetes import client

from crashloop_harness.cluster.kubeletstate import KubeletProcess
from crashloop_harness.core import timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.recording.cri import CriEvent, parse_event, parse_ps
from crashloop_harness.recording.nodestream import Listing, Tick
from crashloop_harness.recording.recorder import ApiView, Recorder
from crashloop_harness.recording.scope import RecordingScope
from tests.unit.recording.pods import app_status, backing_off


def _ps_item(container_id: str, attempt: int) -> dict[str, object]:
    return {
        "id": container_id,
        "podSandboxId": "sandbox",
        "metadata": {"name": "app", "attempt": attempt},
        "state": "CONTAINER_EXITED",
        "createdAt": str(1_000_000_000 * (attempt + 1)),
        "labels": {
            "io.kubernetes.pod.name": "crash-fast",
            "io.kubernetes.pod.namespace": "ns",
            "io.kubernetes.pod.uid": "uid-1",
            "io.kubernetes.container.name": "app",
        },
        "annotations": {"io.kubernetes.container.restartCount": str(attempt)},
    }


def _inspect_item(container_id: str, attempt: int) -> dict[str, object]:
    started = f"2026-11-30T03:00:{10 + 3 * attempt:02d}.000000001Z"
    finished = f"2026-11-30T03:00:{11 + 3 * attempt:02d}.5Z"
    return {
        "status": {
            "id": container_id,
            "metadata": {"name": "app", "attempt": attempt},
            "state": "CONTAINER_EXITED",
            "createdAt": started,
            "startedAt": started,
            "finishedAt": finished,
            "exitCode": 1,
            "reason": "Error",
            "labels": _ps_item(container_id, attempt)["labels"],
            "annotations": _ps_item(container_id, attempt)["annotations"],
        }
    }


def _view(recorder: Recorder, key: tuple[str, str, int]) -> ApiView:
    view = recorder.api_view(key)
    assert view is not None, f"the watch noted nothing about {key}"
    return view


def _recorder(
    run_dir: Path,
    exec_in_node: Callable[[str, list[str]], str],
    node_workers: dict[str, str] | None = None,
) -> Recorder:
    """A recorder of namespace ``ns`` whose nodes are fakes, with no API."""
    return Recorder(
        RecordingScope(
            cast(client.ApiClient, None), "ns", "run", run_dir, node_workers or {"node-1": "fast"}
        ),
        exec_in_node=exec_in_node,
    )


class FakeNode:
    """Two exited attempts; `gone` was removed after `crictl ps` listed it."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, _node: str, argv: list[str]) -> str:
        self.calls.append(argv)
        if argv[:2] == ["crictl", "ps"]:
            items = [_ps_item("first", 0), _ps_item("gone", 1), _ps_item("second", 2)]
            return json.dumps({"containers": items})
        ids = argv[2:]
        if "gone" in ids:
            raise HarnessError("crictl inspect failed: container gone not found")
        items = [_inspect_item(i, {"first": 0, "second": 2}[i]) for i in ids]
        return json.dumps(items[0] if len(items) == 1 else items)


def test_one_removed_container_does_not_hide_the_others(tmp_path: Path) -> None:
    node = FakeNode()
    recorder = _recorder(tmp_path, node)
    recorder.sample_once("node-1")
    recorded = sorted(recorder.attempts(), key=lambda r: r.attempt)
    assert [r.attempt for r in recorded] == [0, 2]
    assert all(r.finished_at_ns is not None for r in recorded)
    assert recorded[0].started_at_ns % 1_000_000_000 == 1
    assert any("gone" in message for message in recorder.errors.messages)
    # The batch was tried first, then every container on its own.
    inspects = [call[2:] for call in node.calls if call[:2] == ["crictl", "inspect"]]
    assert inspects[0] == ["first", "gone", "second"]
    assert ["first"] in inspects
    assert ["second"] in inspects


# The pod watch ----------------------------------------------------------


def _pod(resource_version: str, backoff: str | None = None) -> client.V1Pod:
    """A pod with restartCount 2, waiting out a back-off when ``backoff`` is given."""
    return _pod_with(resource_version, app_status(2, backing_off(backoff) if backoff else None))


def _pod_with(resource_version: str, status: client.V1ContainerStatus) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(uid="uid-1", resource_version=resource_version),
        spec=client.V1PodSpec(node_name="node-1", containers=[]),
        status=client.V1PodStatus(container_statuses=[status]),
    )


def test_the_reported_backoff_reaches_the_attempt_it_precedes(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path, FakeNode())
    recorder.sample_once("node-1")
    recorder.watch.observe_pod(_pod("3", backoff="40s"))
    # restartCount 2 and waiting: the back-off precedes attempt 3; attempt 2 has none.
    by_attempt = {r.attempt: r for r in recorder.attempts()}
    assert by_attempt[2].reported_backoff_s is None
    assert _view(recorder, ("uid-1", "app", 3)).reported_backoff_s == 40.0


# Which attempt the pod status's times belong to -----------------------------

T2_START = datetime(2026, 1, 1, 10, 0, 2, tzinfo=UTC)
T2_END = datetime(2026, 1, 1, 10, 0, 3, tzinfo=UTC)
T3_START = datetime(2026, 1, 1, 10, 0, 23, tzinfo=UTC)
T3_END = datetime(2026, 1, 1, 10, 0, 24, tzinfo=UTC)


def _terminated(started: datetime, finished: datetime) -> client.V1ContainerStateTerminated:
    return client.V1ContainerStateTerminated(
        exit_code=1, reason="Error", started_at=started, finished_at=finished
    )


def _api_times(recorder: Recorder, attempt: int) -> tuple[str | None, str | None]:
    view = _view(recorder, ("uid-1", "app", attempt))
    return view.api_started_at, view.api_finished_at


def test_while_waiting_last_state_is_the_attempt_that_just_exited(tmp_path: Path) -> None:
    # Attempt 2 exited; the kubelet waits out the back-off before attempt 3.
    # restartCount is still 2 (the newest container's) and lastState holds attempt 2.
    recorder = _recorder(tmp_path, FakeNode())
    waiting = client.V1ContainerStateWaiting(
        reason="CrashLoopBackOff",
        message="back-off 20s restarting failed container=app pod=crash-default_ns(uid-1)",
    )
    status = app_status(2, client.V1ContainerState(waiting=waiting), _terminated(T2_START, T2_END))
    recorder.watch.observe_pod(_pod_with("5", status))
    assert _api_times(recorder, 2) == (T2_START.isoformat(), T2_END.isoformat())
    assert recorder.api_view(("uid-1", "app", 1)) is None
    assert _view(recorder, ("uid-1", "app", 3)).reported_backoff_s == 20.0


def test_while_running_last_state_is_the_attempt_before(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path, FakeNode())
    running = client.V1ContainerStateRunning(started_at=T3_START)
    status = app_status(3, client.V1ContainerState(running=running), _terminated(T2_START, T2_END))
    recorder.watch.observe_pod(_pod_with("6", status))
    assert _api_times(recorder, 2) == (T2_START.isoformat(), T2_END.isoformat())
    assert _api_times(recorder, 3) == (T3_START.isoformat(), None)


def test_just_terminated_is_this_attempt_and_last_state_the_one_before(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path, FakeNode())
    terminated = _terminated(T3_START, T3_END)
    status = app_status(
        3, client.V1ContainerState(terminated=terminated), _terminated(T2_START, T2_END)
    )
    recorder.watch.observe_pod(_pod_with("7", status))
    assert _api_times(recorder, 2) == (T2_START.isoformat(), T2_END.isoformat())
    assert _api_times(recorder, 3) == (T3_START.isoformat(), T3_END.isoformat())


def test_created_not_started_counts_the_new_attempt_and_last_state_the_one_before(
    tmp_path: Path,
) -> None:
    # Attempt 3 created, not yet started: restartCount 3, an empty waiting state.
    recorder = _recorder(tmp_path, FakeNode())
    created = client.V1ContainerState(waiting=client.V1ContainerStateWaiting())
    status = app_status(3, created, _terminated(T2_START, T2_END))
    recorder.watch.observe_pod(_pod_with("8", status))
    assert _api_times(recorder, 2) == (T2_START.isoformat(), T2_END.isoformat())
    assert recorder.api_view(("uid-1", "app", 3)) is None


def test_a_pending_backoff_is_offered_until_its_attempt_is_recorded(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path, FakeNode())
    recorder.sample_once("node-1")
    recorder.watch.observe_pod(_pod("3", backoff="40s"))
    assert recorder.pending_backoffs() == {("uid-1", "app"): (3, 40.0)}


def test_a_listing_is_stamped_on_the_nodes_clock(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path, FakeNode())
    assert recorder.listed_at_ns("node-1") is None
    recorder._clock_offset_ns["node-1"] = 5 * 10**9
    before = time.time_ns()
    recorder.sample_once("node-1")
    listed = recorder.listed_at_ns("node-1")
    assert listed is not None
    assert before + 5 * 10**9 <= listed <= time.time_ns() + 5 * 10**9


# A node that stops answering ------------------------------------------------


class SwitchableNode(FakeNode):
    """A node whose runtime answers until the engine goes away."""

    def __init__(self) -> None:
        super().__init__()
        self.engine_up = True

    def __call__(self, node: str, argv: list[str]) -> str:
        if not self.engine_up:
            raise HarnessError("Cannot connect to the Docker daemon at unix:///var/run/docker.sock")
        return super().__call__(node, argv)


def test_a_node_that_stops_answering_is_named_with_its_last_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = [1000.0]
    monkeypatch.setattr("crashloop_harness.recording.recorder.time.monotonic", lambda: clock[0])
    node = SwitchableNode()
    recorder = _recorder(tmp_path, node, {"node-1": "fast", "node-2": "default"})
    recorder.sample_once("node-1")
    recorder.sample_once("node-2")
    node.engine_up = False
    clock[0] += 20
    recorder.sample_once("node-1")
    assert recorder.silent_nodes(longer_than=30) == []
    clock[0] += 15
    recorder.sample_once("node-1")
    (silent,) = [m for m in recorder.silent_nodes(longer_than=30) if "node-1" in m]
    assert "has not answered for 35s" in silent
    assert "Cannot connect to the Docker daemon" in silent
    # node-2 was never asked again: silent too, without an error to show.
    assert any("node-2" in m and "no error recorded" in m for m in recorder.silent_nodes(30))
    node.engine_up = True
    recorder.sample_once("node-1")
    recorder.sample_once("node-2")
    assert recorder.silent_nodes(longer_than=30) == []


def test_a_gap_between_listings_is_kept_as_an_unobserved_span(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = _recorder(tmp_path, FakeNode())
    clock = [1000.0]
    monkeypatch.setattr("crashloop_harness.recording.recorder.time.monotonic", lambda: clock[0])
    recorder.sample_once("node-1")
    clock[0] += 1.5  # a normal pace: nothing unobserved
    recorder.sample_once("node-1")
    assert recorder.unobserved("node-1") == []
    before_gap = recorder.listed_at_ns("node-1")
    clock[0] += 8.0  # the node paused: no listing for 8s
    recorder.sample_once("node-1")
    after_gap = recorder.listed_at_ns("node-1")
    assert before_gap is not None
    assert after_gap is not None
    # From the last sign of life before the gap to the first after it.
    (span,) = recorder.unobserved("node-1")
    assert before_gap <= span[0] < after_gap <= span[1]


# The event-driven observer ------------------------------------------------


def _event(container_id: str, attempt: int, *, namespace: str = "ns") -> CriEvent:
    """A stop event whose pod shows attempt ``attempt`` exited."""
    status = _inspect_item(container_id, attempt)["status"]
    assert isinstance(status, dict)
    labels = {**status["labels"], "io.kubernetes.pod.namespace": namespace}
    return parse_event(
        {
            "containerId": container_id,
            "containerEventType": "CONTAINER_STOPPED_EVENT",
            "createdAt": "1796059452468416603",
            "podSandboxStatus": {"id": "sandbox"},
            "containersStatuses": [{**status, "labels": labels}],
        }
    )


def test_an_event_records_its_pods_attempts_and_stamps_first_sight_once(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path, FakeNode())
    recorder.on_event("node-1", _event("first", 0))
    (record,) = recorder.attempts()
    assert record.attempt == 0
    assert record.finished_at_ns is not None
    assert record.seen_at_ns is not None
    first_sight = record.seen_at_ns
    recorder.on_event("node-1", _event("first", 0))
    (again,) = recorder.attempts()
    assert again.seen_at_ns == first_sight
    # Other namespaces on the node are not this run's.
    recorder.on_event("node-1", _event("other", 1, namespace="kube-system"))
    assert len(recorder.attempts()) == 1


def test_a_listing_counts_only_once_everything_it_shows_is_recorded(tmp_path: Path) -> None:
    node = FakeNode()
    recorder = _recorder(tmp_path, node)
    recorder.on_event("node-1", _event("first", 0))
    recorder.on_event("node-1", _event("second", 2))
    complete = Listing(1_000, tuple(parse_ps(json.dumps({"containers": [_ps_item("first", 0)]}))))
    recorder.on_pulse("node-1", complete)
    assert recorder.listed_at_ns("node-1") == 1_000
    assert recorder.reconciled == 0
    assert not any(call[:2] == ["crictl", "inspect"] for call in node.calls)


def _wait_until(recorder: Recorder, condition: Callable[[], bool], timeout: float = 5.0) -> None:
    """Wait on the recorder's changes (a condition, not a sleep) until ``condition`` holds."""
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        recorder.wait_for_change(timeout=0.1)


def test_a_container_the_events_missed_is_inspected_then_the_listing_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("crashloop_harness.recording.recorder.EVENT_GRACE", 0.05)
    node = FakeNode()
    recorder = _recorder(tmp_path, node)
    listing = Listing(
        2_000,
        tuple(parse_ps(json.dumps({"containers": [_ps_item("first", 0), _ps_item("second", 2)]}))),
    )
    recorder.on_pulse("node-1", listing)
    _wait_until(recorder, lambda: recorder.listed_at_ns("node-1") is not None)
    assert recorder.listed_at_ns("node-1") == 2_000
    assert sorted(r.attempt for r in recorder.attempts()) == [0, 2]
    assert recorder.reconciled == 2
    assert ["crictl", "inspect", "first", "second"] in node.calls


def test_a_listing_with_a_container_that_cannot_be_inspected_does_not_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("crashloop_harness.recording.recorder.EVENT_GRACE", 0.05)
    recorder = _recorder(tmp_path, FakeNode())
    listing = Listing(3_000, tuple(parse_ps(json.dumps({"containers": [_ps_item("gone", 1)]}))))
    recorder.on_pulse("node-1", listing)
    _wait_until(recorder, lambda: bool(recorder.errors.messages))
    assert recorder.listed_at_ns("node-1") is None
    assert any("gone" in m for m in recorder.errors.messages)


def test_a_silent_pulse_leaves_an_unobserved_span(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = _recorder(tmp_path, FakeNode())
    clock = [1000.0]
    monkeypatch.setattr("crashloop_harness.recording.recorder.time.monotonic", lambda: clock[0])
    recorder.on_pulse("node-1", Tick())
    clock[0] += 0.5
    recorder.on_pulse("node-1", Tick())
    assert recorder.unobserved("node-1") == []
    clock[0] += 12.0  # paused
    recorder.on_pulse("node-1", Tick())
    (span,) = recorder.unobserved("node-1")
    assert span[0] < span[1]


def test_a_kubelet_that_changed_between_pulses_is_a_restart(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path, FakeNode(), {"node-1": "fast", "node-2": "reduced"})
    recorder.on_pulse("node-1", KubeletProcess(pid=10, active_since_us=1))
    recorder.on_pulse("node-2", KubeletProcess(pid=20, active_since_us=1))
    recorder.on_pulse("node-1", KubeletProcess(pid=10, active_since_us=1))
    assert recorder.kubelet_changes().restarted == ()
    recorder.on_pulse("node-2", KubeletProcess(pid=21, active_since_us=5))
    (restarted,) = recorder.kubelet_changes().restarted
    assert "node-2" in restarted
    assert "20 -> 21" in restarted
    recorder.on_pulse("node-1", KubeletProcess(pid=0, active_since_us=1))
    assert any("node-1" in s for s in recorder.kubelet_changes().stopped)


def test_a_problem_reported_by_a_reader_is_kept_and_named_for_its_node(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path, FakeNode())
    recorder.on_problem("node-1", "the node's reader ended (exit code 1); starting it again")
    assert recorder.errors.messages == [
        "reading node-1: the node's reader ended (exit code 1); starting it again"
    ]


def test_nothing_is_written_once_the_log_is_closed(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path, FakeNode())
    recorder.stop()  # never started: the final listing records both attempts
    recorded = len(recorder.attempts())
    recorder.on_event("node-1", _event("late", 7))  # a reconcile that returns too late
    assert len(recorder.attempts()) == recorded


def test_a_later_status_without_the_workload_s_report_keeps_what_it_said(
    tmp_path: Path,
) -> None:
    recorder = _recorder(tmp_path, FakeNode())
    recorder.sample_once("node-1")  # attempts 0 and 2, from the runtime
    killed = _terminated(T2_START, T2_END)
    killed.message = json.dumps({"v": 1, "start_ns": 5, "alive_ns": 9})
    running = client.V1ContainerStateRunning(started_at=T3_START)
    recorder.watch.observe_pod(
        _pod_with("9", app_status(3, client.V1ContainerState(running=running), killed))
    )
    # The same attempt again, its message gone from the status (as when the watch
    # delivers an older or a trimmed view): the heartbeat stays what it was.
    plain = _terminated(T2_START, T2_END)
    recorder.watch.observe_pod(
        _pod_with("10", app_status(3, client.V1ContainerState(running=running), plain))
    )
    (second,) = [r for r in recorder.attempts() if r.attempt == 2]
    assert (second.self_started_at_ns, second.self_finished_at_ns) == (5, 9)
    assert second.self_finish_is_heartbeat


# A node whose runtime stopped ---------------------------------------------

_ENDED = "the node's reader ended (exit code 0); starting it again"
_REFUSED = "crictl ps failed: 'connect: connection refused'"
_EMPTY_LISTING = Listing(1_000, ())


def test_a_runtime_that_keeps_failing_while_its_node_answers_is_broken(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path, FakeNode(), {"node-1": "fast", "node-2": "default"})
    # containerd stopped: each new reader's listing fails, its pulse ticks, its subscription ends.
    recorder.on_problem("node-1", _ENDED, unanswered=True)
    recorder.on_problem("node-1", _REFUSED, unanswered=True)
    recorder.on_pulse("node-1", Tick())
    assert recorder.broken_nodes() == []
    recorder.on_problem("node-1", _ENDED, unanswered=True)
    assert recorder.broken_nodes() == [
        f"the container runtime of node node-1 stopped answering: {_ENDED}"
    ]
    # A complete listing: the runtime answers again.
    recorder.on_pulse("node-1", _EMPTY_LISTING)
    assert recorder.broken_nodes() == []


def test_subscriptions_dropped_now_and_then_never_make_a_broken_node(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path, FakeNode())
    for _ in range(5):
        # One reconnect and a good listing after each drop.
        recorder.on_problem("node-1", _ENDED, unanswered=True)
        recorder.on_pulse("node-1", Tick())
        recorder.on_pulse("node-1", _EMPTY_LISTING)
    assert recorder.broken_nodes() == []


def test_a_node_that_answers_nothing_is_silent_not_broken(tmp_path: Path) -> None:
    # The Docker engine gone: every reader ends at once and the node never
    # speaks; silent_nodes names that, with its hint about the engine.
    recorder = _recorder(tmp_path, FakeNode())
    for _ in range(5):
        recorder.on_problem(
            "node-1", "the node's reader ended (exit code 1); starting it again", unanswered=True
        )
    assert recorder.broken_nodes() == []


def test_problems_that_are_not_the_runtime_failing_do_not_count(tmp_path: Path) -> None:
    recorder = _recorder(tmp_path, FakeNode())
    for _ in range(5):
        recorder.on_problem("node-1", "pulse: unexpected line 'bogus'")
        recorder.on_pulse("node-1", Tick())
    assert recorder.broken_nodes() == []


def test_a_container_created_and_not_started_is_known_as_such(tmp_path: Path) -> None:
    """A restart the kubelet made, which a slow runtime has yet to start: the listing shows it
    CREATED, with its creation time; once recorded it is no longer pending."""
    recorder = _recorder(tmp_path, FakeNode())
    recorder.on_event("node-1", _event("first", 0))
    created = {**_ps_item("third", 1), "state": "CONTAINER_CREATED"}
    listing = Listing(1_000, tuple(parse_ps(json.dumps({"containers": [created]}))))
    recorder.on_pulse("node-1", listing)
    assert recorder.created_unstarted() == {("uid-1", "app"): (1, 2_000_000_000)}
    recorder.on_pulse("node-1", Listing(2_000, ()))
    assert recorder.created_unstarted() == {}


def test_a_second_container_under_one_restart_count_is_said_not_silently_replaced(
    tmp_path: Path,
) -> None:
    recorder = _recorder(tmp_path, FakeNode())
    recorder.on_event("node-1", _event("first", 0))
    recorder.on_event("node-1", _event("again", 0))
    assert [r.container_id for r in recorder.attempts()] == ["again"]
    said = [m for m in recorder.errors.messages if "a second container" in m]
    assert said, recorder.errors.messages
    assert "under restart count 0" in said[0]
    assert "first" in said[0]


class UninspectableNode(FakeNode):
    """Lists a container it can never inspect: every listing stays incomplete."""

    def __call__(self, node: str, argv: list[str]) -> str:
        if argv[:2] == ["crictl", "inspect"]:
            raise HarnessError("crictl inspect failed: context deadline exceeded")
        return super().__call__(node, argv)


def test_a_node_whose_listings_stay_incomplete_is_broken_within_its_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a complete listing there is no 'now' on the node's clock, and an overdue
    restart could never be judged: past LISTING_STALE the run is told to end as an error."""
    now = [1000.0]
    monkeypatch.setattr("crashloop_harness.recording.recorder.time.monotonic", lambda: now[0])
    monkeypatch.setattr(
        "crashloop_harness.recording.recorder.time.time_ns", lambda: int(now[0] * 1e9)
    )
    monkeypatch.setattr("crashloop_harness.recording.recorder.EVENT_GRACE", 0.0)
    recorder = _recorder(tmp_path, UninspectableNode())
    recorder.prepare()
    recorder._heard("node-1")  # first heard: the wait for a complete listing starts
    listing = Listing(1_000, tuple(parse_ps(json.dumps({"containers": [_ps_item("first", 0)]}))))
    # The reconciling inspect of what the events did not deliver, as on_pulse starts it.
    recorder._reconcile("node-1", listing, list(listing.containers))
    assert recorder.listed_at_ns("node-1") is None
    now[0] += timeouts.LISTING_STALE - 1
    recorder._heard("node-1")
    assert recorder.broken_nodes() == []
    now[0] += 2
    recorder._heard("node-1")  # the node speaks; its listings still do not complete
    (broken,) = recorder.broken_nodes()
    assert "node node-1 gave no complete listing" in broken
