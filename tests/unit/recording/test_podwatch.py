"""The pod watch alone: which attempt each pod status speaks of, and what it says of it.

A recording ``note`` stands in for the recorders; the API is a scripted fake.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
import urllib3
from kubernetes import client

from crashloop_harness.recording.podwatch import PodNote, PodWatch
from crashloop_harness.recording.records import AttemptKey
from tests.unit.recording.pods import app_status

T2_START = datetime(2026, 11, 30, 3, 0, 10, tzinfo=UTC)
T2_END = datetime(2026, 11, 30, 3, 0, 11, tzinfo=UTC)
T3_START = datetime(2026, 11, 30, 3, 0, 31, tzinfo=UTC)
T3_END = datetime(2026, 11, 30, 3, 0, 32, tzinfo=UTC)
REPORT = json.dumps({"v": 1, "start_ns": 1_000, "exit_ns": 2_000, "exit_code": 1})


@dataclass
class Notes:
    """Every note the watch handed over, and every problem it named."""

    notes: list[tuple[AttemptKey, PodNote]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def note(self, key: AttemptKey, note: PodNote) -> None:
        self.notes.append((key, note))

    def of(self, attempt: int) -> list[PodNote]:
        return [note for key, note in self.notes if key == ("uid-1", "app", attempt)]


def _watch(notes: Notes, stop: threading.Event | None = None) -> PodWatch:
    return PodWatch(
        client.ApiClient(), "ns", notes.note, notes.problems.append, stop or threading.Event()
    )


def _terminated(
    started: datetime, finished: datetime, message: str | None = None
) -> client.V1ContainerStateTerminated:
    return client.V1ContainerStateTerminated(
        exit_code=1,
        reason="Error",
        started_at=started,
        finished_at=finished,
        container_id="containerd://c",
        message=message,
    )


def _pod(
    restarts: int,
    state: client.V1ContainerState,
    last: client.V1ContainerStateTerminated | None = None,
    *,
    name: str = "crash-default",
    uid: str = "uid-1",
    deleting: bool = False,
) -> client.V1Pod:
    status = app_status(restarts, state, last)
    return client.V1Pod(
        metadata=client.V1ObjectMeta(
            name=name,
            uid=uid,
            resource_version="1",
            deletion_timestamp=datetime(2026, 1, 1, 10, 0, 30, tzinfo=UTC) if deleting else None,
        ),
        spec=client.V1PodSpec(node_name="node-1", containers=[]),
        status=client.V1PodStatus(container_statuses=[status]),
    )


def _waiting(message: str | None = None) -> client.V1ContainerState:
    reason = "CrashLoopBackOff" if message else None
    return client.V1ContainerState(
        waiting=client.V1ContainerStateWaiting(reason=reason, message=message)
    )


# Which attempt a status speaks of -------------------------------------------------------


def test_a_posted_back_off_is_noted_for_the_attempt_it_precedes() -> None:
    # Attempt 2 exited; restartCount is still 2 while the kubelet waits before attempt 3.
    notes = Notes()
    message = "back-off 20s restarting failed container=app pod=crash-default_ns(uid-1)"
    _watch(notes).observe_pod(_pod(2, _waiting(message), _terminated(T2_START, T2_END)))
    assert [n.reported for n in notes.of(3)] == [20.0]
    # lastState is the attempt that just exited, with its whole-second times.
    (ended,) = notes.of(2)
    assert (ended.started, ended.finished) == (T2_START.isoformat(), T2_END.isoformat())
    assert ended.ended is not None
    assert not ended.ended.deleting
    assert notes.of(1) == []


def test_a_waiting_message_that_is_not_a_back_off_notes_no_level() -> None:
    notes = Notes()
    _watch(notes).observe_pod(_pod(2, _waiting("Back-off pulling image"), None))
    assert notes.notes == []


def test_while_running_the_start_is_this_attempt_s_and_last_state_the_one_before() -> None:
    notes = Notes()
    running = client.V1ContainerState(running=client.V1ContainerStateRunning(started_at=T3_START))
    _watch(notes).observe_pod(_pod(3, running, _terminated(T2_START, T2_END)))
    assert [n.started for n in notes.of(3)] == [T3_START.isoformat()]
    assert [n.finished for n in notes.of(2)] == [T2_END.isoformat()]


def test_created_not_started_the_last_state_is_the_attempt_before() -> None:
    # Attempt 3 created, not yet started: restartCount 3 and a waiting state with no reason.
    notes = Notes()
    _watch(notes).observe_pod(_pod(3, _waiting(), _terminated(T2_START, T2_END)))
    assert len(notes.of(2)) == 1
    assert notes.of(3) == []


def test_a_terminated_attempt_carries_the_workload_s_own_report() -> None:
    notes = Notes()
    terminated = client.V1ContainerState(terminated=_terminated(T3_START, T3_END, REPORT))
    _watch(notes).observe_pod(_pod(3, terminated, _terminated(T2_START, T2_END)))
    (this,) = notes.of(3)
    assert this.ended is not None
    assert this.ended.report is not None
    assert (this.ended.report.started_ns, this.ended.report.finished_ns) == (1_000, 2_000)
    assert (this.ended.pod, this.ended.node, this.ended.exit_code) == ("crash-default", "node-1", 1)
    (before,) = notes.of(2)
    assert before.ended is not None
    assert before.ended.report is None


def test_only_the_current_attempt_of_a_pod_being_deleted_ended_by_the_deletion() -> None:
    notes = Notes()
    watch = _watch(notes)
    terminated = client.V1ContainerState(terminated=_terminated(T3_START, T3_END))
    watch.observe_pod(_pod(3, terminated, _terminated(T2_START, T2_END), deleting=True))
    (this,) = notes.of(3)
    (before,) = notes.of(2)
    assert this.ended is not None
    assert this.ended.deleting
    assert before.ended is not None
    assert not before.ended.deleting
    # Nothing of it runs any more: the pod has nothing more to say.
    assert watch.ended_pods == {"uid-1"}


def test_a_pod_being_deleted_with_a_container_still_running_has_more_to_say() -> None:
    watch = _watch(Notes())
    running = client.V1ContainerState(running=client.V1ContainerStateRunning(started_at=T3_START))
    watch.observe_pod(_pod(3, running, None, deleting=True))
    assert watch.ended_pods == set()


# Deletions --------------------------------------------------------------------------------


def test_a_pod_being_deleted_or_gone_is_named_with_when_it_was_seen(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    watch = _watch(Notes())
    for name in ("crash-fast", "crash-reduced", "crash-default"):
        watch.on_watch_event("ADDED", _pod(0, _waiting(), name=name, uid=f"uid-{name}"))
    assert watch.deleted_pods() == {}
    monkeypatch.setattr(
        "crashloop_harness.recording.podwatch._now_utc", lambda: "2026-01-01T10:00:00+00:00"
    )
    watch.on_watch_event(
        "MODIFIED", _pod(0, _waiting(), name="crash-fast", uid="uid-crash-fast", deleting=True)
    )
    # Deleted with no grace period: the DELETED event may be all there is.
    watch.on_watch_event(
        "DELETED", _pod(0, _waiting(), name="crash-reduced", uid="uid-crash-reduced")
    )
    # When the watch saw it, not the end of the grace period its deletion was given.
    assert watch.deleted_pods() == {
        "crash-fast": "2026-01-01T10:00:00+00:00",
        "crash-reduced": "2026-01-01T10:00:00+00:00",
    }
    assert "uid-crash-reduced" in watch.ended_pods


def test_a_pod_replaced_under_its_name_or_missing_from_a_relist_was_deleted() -> None:
    watch = _watch(Notes())
    for name, uid in (
        ("crash-fast", "uid-1"),
        ("crash-default", "uid-2"),
        ("crash-reduced", "uid-3"),
    ):
        watch.on_watch_event("ADDED", _pod(0, _waiting(), name=name, uid=uid))
    # The watch fell behind (410 Gone) and relisted: one pod came back under a
    # new uid, another is gone; their DELETED events were never delivered.
    watch.on_watch_event("LIST", _pod(0, _waiting(), name="crash-fast", uid="uid-9"))
    watch.on_watch_event("LIST", _pod(0, _waiting(), name="crash-reduced", uid="uid-3"))
    watch.on_relisted(["crash-fast", "crash-reduced"])
    assert set(watch.deleted_pods()) == {"crash-fast", "crash-default"}


# The watch loop against a scripted API -----------------------------------------------------


class FakeApi:
    """The API side of a watch: a list, then one scripted step per watch request."""

    def __init__(self, stop: threading.Event, steps: list[object]) -> None:
        self.stop = stop
        self.steps = steps
        self.lists = 0
        self.watched_from: list[str] = []

    def list_namespaced_pod(self, _namespace: str, **_: object) -> SimpleNamespace:
        self.lists += 1
        return SimpleNamespace(
            items=[], metadata=SimpleNamespace(resource_version=f"list-{self.lists}")
        )

    def stream(
        self, _func: object, _namespace: str, **kwargs: object
    ) -> Iterator[dict[str, object]]:
        self.watched_from.append(str(kwargs["resource_version"]))
        if not self.steps:
            self.stop.set()
            return
        step = self.steps.pop(0)
        if isinstance(step, BaseException):
            raise step
        yield {"type": "MODIFIED", "object": step}


def _pod_at(resource_version: str) -> client.V1Pod:
    pod = _pod(0, _waiting())
    pod.metadata.resource_version = resource_version
    return pod


def _run(monkeypatch: pytest.MonkeyPatch, steps: list[object]) -> tuple[PodWatch, FakeApi, Notes]:
    notes = Notes()
    stop = threading.Event()
    api = FakeApi(stop, steps)
    monkeypatch.setattr("kubernetes.client.CoreV1Api", lambda _api: api)
    monkeypatch.setattr("kubernetes.watch.Watch", lambda: api)
    # No wait between attempts: the stop event is what the loop waits on.
    monkeypatch.setattr(stop, "wait", lambda _timeout: False)
    watch = _watch(notes, stop)
    watch.run()
    return watch, api, notes


def test_a_dropped_stream_resumes_from_its_resource_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reset = urllib3.exceptions.ProtocolError("Connection broken", ConnectionResetError(104))
    watch, api, notes = _run(monkeypatch, [_pod_at("7"), reset, _pod_at("9")])
    assert api.lists == 1, "a dropped stream needs no relist"
    assert api.watched_from == ["list-1", "7", "7", "9"]
    assert any("ProtocolError" in problem for problem in notes.problems)
    assert watch.requests == 5
    assert watch.events == 2


def test_gone_relists_and_watches_from_the_new_list(monkeypatch: pytest.MonkeyPatch) -> None:
    gone = client.ApiException(status=410, reason="Expired: too old resource version")
    watch, api, notes = _run(monkeypatch, [_pod_at("7"), gone, _pod_at("12")])
    assert api.lists == 2
    assert watch.relists == 2
    assert api.watched_from == ["list-1", "7", "list-2", "12"]
    assert notes.problems == [], "410 is routine, not a problem"


def test_another_api_error_is_a_problem_and_the_watch_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    refused = client.ApiException(status=503, reason="Service Unavailable")
    _, api, notes = _run(monkeypatch, [refused, _pod_at("8")])
    assert notes.problems == ["pod watch: 503 Service Unavailable"]
    assert api.watched_from == ["list-1", "list-1", "8"]
