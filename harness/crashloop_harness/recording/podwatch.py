"""The pod watch: what the pod status says about each attempt of a run.

It reads the kubelet's own decision (``state.waiting.message``, the back-off
before the next attempt) and the API's whole-second times, a cross-check of
the runtime's, and hands each to the recorder as a note keyed like the
runtime's attempts. It resumes from its resourceVersion after a dropped
stream and relists after 410 Gone; a relist loses nothing, since the runtime
is the source of attempts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Protocol

from kubernetes import client, watch

from crashloop_harness.core import timeouts
from crashloop_harness.model.backoff import parse_backoff_message
from crashloop_harness.pods.notrunning import is_refusal, not_running_cause
from crashloop_harness.recording.records import AttemptKey
from crashloop_harness.recording.selfreport import SelfReport, parse_self_report
from crashloop_harness.recording.trace import NoTrace, Tap, trimmed_pod

WATCH_WINDOW_S: Final = 60
# After a failed watch request, ask again this soon (a period, not a wait).
WATCH_RETRY_S: Final = 1.0
_GONE: Final = 410
# Turns client models into the API's JSON for the trace; it sends no request.
_SERIALISER: Final = client.ApiClient()


@dataclass(frozen=True)
class Ended:
    """An attempt the pod status shows as terminated, with the workload's own report."""

    pod: str
    node: str
    container_id: str
    exit_code: int | None
    reason: str
    report: SelfReport | None
    # The pod was being deleted: the attempt ended because the run ended it.
    deleting: bool = False


@dataclass(frozen=True)
class PodNote:
    """What one pod status says of one attempt; None where it says nothing.

    ``reported``: the back-off the kubelet posted before it (seconds);
    ``started``/``finished``: the API's whole-second times (ISO 8601);
    ``ended``: the attempt as the status shows it terminated.
    """

    reported: float | None = None
    started: str | None = None
    finished: str | None = None
    ended: Ended | None = None


class Note(Protocol):
    """Where the watch hands what it read about one attempt."""

    def __call__(self, key: AttemptKey, note: PodNote) -> None: ...


class PodWatch:
    """Watches the pods of ``namespace`` and notes what their statuses say."""

    def __init__(
        self,
        api: client.ApiClient,
        namespace: str,
        note: Note,
        problem: Callable[[str], None],
        stop: threading.Event,
        *,
        label_selector: str = "",
        tap: Tap | None = None,
    ) -> None:
        self.api = api
        # Every pod delivered and every failure goes to the run's trace.
        self.tap: Tap = tap or NoTrace()
        self.namespace = namespace
        # Only the pods this selects (empty: every pod of the namespace).
        self.label_selector = label_selector
        self.relists = 0
        # The API load of the watch: list and watch requests, events delivered.
        self.requests = 0
        self.events = 0
        # When the API last answered (this host's clock, ns): a pod it delivered, or a
        # watch window that ended as planned. A watch that fails answers nothing.
        self.heard_at_ns: int | None = None
        # UIDs of pods being deleted whose containers have all stopped (the
        # kubelet posted their ends), or that are gone: nothing more to note.
        self.ended_pods: set[str] = set()
        # Pod name -> when (UTC, ISO 8601) it was seen deleted, evicted (the
        # eviction API deletes) or replaced by a pod of the same name; and the
        # uid each name last had. Read from the run's thread.
        self._deleted: dict[str, str] = {}
        self._uids: dict[str, str] = {}
        # Pod name -> why its containers cannot run, as its latest status says
        # (crashloop_harness.pods.notrunning); absent once nothing says so.
        self._not_running: dict[str, str] = {}
        self._deleted_lock = threading.Lock()
        self._note = note
        self._problem = problem
        self._stop = stop

    def run(self) -> None:
        """List, then watch, until stopped; resume or relist as the API requires."""
        core = client.CoreV1Api(self.api)
        resource_version = ""
        while not self._stop.is_set():
            try:
                if not resource_version:
                    listed = core.list_namespaced_pod(
                        self.namespace,
                        label_selector=self.label_selector,
                        _request_timeout=timeouts.API_REQUEST,
                    )
                    for pod in listed.items:
                        self.on_watch_event("LIST", pod)
                    self.on_relisted([pod.metadata.name for pod in listed.items])
                    resource_version = listed.metadata.resource_version
                    self.relists += 1
                    self.requests += 1
                stream = watch.Watch().stream(
                    core.list_namespaced_pod,
                    self.namespace,
                    label_selector=self.label_selector,
                    resource_version=resource_version,
                    timeout_seconds=WATCH_WINDOW_S,
                    _request_timeout=WATCH_WINDOW_S + timeouts.API_REQUEST,
                )
                self.requests += 1
                for event in stream:
                    self.events += 1
                    if self._stop.is_set():
                        break
                    if event["type"] == "ERROR":
                        self.tap.write("watch", error=event["raw_object"])
                        if event["raw_object"].get("code") == _GONE:
                            resource_version = ""
                            break
                        continue
                    pod = event["object"]
                    resource_version = pod.metadata.resource_version
                    self.on_watch_event(event["type"], pod)
                else:
                    self.heard_at_ns = time.time_ns()
            except client.ApiException as error:
                if error.status == _GONE:
                    resource_version = ""
                    continue
                self.problem(f"pod watch: {error.status} {error.reason}")
                self._stop.wait(WATCH_RETRY_S)
            except Exception as error:  # a dropped stream: resume from resource_version
                self.problem(f"pod watch: {type(error).__name__}: {error}")
                self._stop.wait(WATCH_RETRY_S)

    def problem(self, message: str) -> None:
        self.tap.write("watch", problem=message)
        self._problem(message)

    def on_watch_event(self, event_type: str, pod: Any) -> None:
        """A pod the API delivered (listed, or a watch event): noted, a deletion remembered."""
        if not isinstance(self.tap, NoTrace):
            self.tap.write("pod", type=event_type, pod=_serialised(pod))
        self.observe_pod(pod)
        if event_type == "DELETED":
            self.ended_pods.add(pod.metadata.uid)
        self._note_deletion(event_type, pod)

    def on_relisted(self, names: Iterable[str]) -> None:
        """A relist shows every pod still there: one known before and missing was deleted.

        Its DELETED event fell in the gap the relist covers (a watch too far
        behind, 410 Gone).
        """
        listed = set(names)
        self.tap.write("watch", relisted=sorted(listed))
        with self._deleted_lock:
            for name in self._uids.keys() - listed:
                self._deleted.setdefault(name, _now_utc())

    def not_running(self) -> dict[str, str]:
        """Pod name -> why its containers cannot run (a refusal, a pull), as last seen."""
        with self._deleted_lock:
            return dict(self._not_running)

    def deleted_pods(self) -> dict[str, str]:
        """Pod name -> when it was seen deleted, evicted or replaced (UTC, ISO 8601)."""
        with self._deleted_lock:
            return dict(self._deleted)

    def _note_deletion(self, event_type: str, pod: Any) -> None:
        """Remember a pod being deleted or gone, or replaced by another of its name.

        Stamped when the watch saw it: a graceful deletion's deletionTimestamp
        is the end of its grace period, not the moment of the deletion.
        """
        name, uid = pod.metadata.name, pod.metadata.uid
        # A deletion with no grace period may come as DELETED alone, without a deletionTimestamp.
        deleting = event_type == "DELETED" or pod.metadata.deletion_timestamp is not None
        with self._deleted_lock:
            # The same name with a new uid: the pod seen before was deleted and
            # another created in its place (a missed DELETED event).
            replaced = self._uids.get(name, uid) != uid
            self._uids[name] = uid
            if deleting or replaced:
                self._deleted.setdefault(name, _now_utc())

    def _note_cause(self, name: str, cause: str | None) -> None:
        """Why a pod cannot run, as its latest status says; a refusal is final, and its first
        words name why (a later status of the pod, deleted after it, may say only "Failed")."""
        with self._deleted_lock:
            kept = self._not_running.get(name)
            if kept is not None and is_refusal(kept):
                return
            if cause is None:
                self._not_running.pop(name, None)
            else:
                self._not_running[name] = cause

    def observe_pod(self, pod: Any) -> None:
        """Note what one pod's container statuses say about each attempt."""
        self.heard_at_ns = time.time_ns()
        uid = pod.metadata.uid
        self._note_cause(pod.metadata.name, not_running_cause(pod))
        statuses = [
            *(pod.status.init_container_statuses or []),
            *(pod.status.container_statuses or []),
        ]
        if pod.metadata.deletion_timestamp is not None and not any(
            s.state and s.state.running for s in statuses
        ):
            self.ended_pods.add(uid)
        for status in statuses:
            restarts = int(status.restart_count or 0)
            waiting = status.state.waiting if status.state else None
            if waiting is not None and waiting.message:
                backoff = parse_backoff_message(waiting.message)
                if backoff is not None:
                    # The wait before the next attempt, numbered like the runtime's.
                    self._note(
                        (uid, status.name, restarts + 1), PodNote(reported=backoff.total_seconds())
                    )
            running = status.state.running if status.state else None
            if running is not None and running.started_at is not None:
                self._note(
                    (uid, status.name, restarts), PodNote(started=running.started_at.isoformat())
                )
            terminated = status.state.terminated if status.state else None
            if terminated is not None:
                started, finished = _times(terminated)
                self._note(
                    (uid, status.name, restarts),
                    PodNote(None, started, finished, _ended(pod, terminated)),
                )
            # While the container waits out its back-off (a waiting state with the
            # kubelet's reason), the kubelet has moved the attempt that just exited
            # (number `restarts`) into lastState. While an attempt runs, shows as
            # terminated, or is created but not yet started (waiting with no
            # reason, `restarts` already counting it), lastState is the one before.
            last = status.last_state.terminated if status.last_state else None
            backing_off = waiting is not None and bool(waiting.reason)
            last_attempt = restarts if backing_off else restarts - 1
            if last is not None and last_attempt >= 0:
                started, finished = _times(last)
                # An attempt in lastState ended before the current one
                # started: a deletion can only end the current one.
                ended = _ended(pod, last, current=False)
                self._note(
                    (uid, status.name, last_attempt), PodNote(None, started, finished, ended)
                )


def _now_utc() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _serialised(pod: Any) -> dict[str, Any]:
    """The pod as the API sent it (camelCase), trimmed; never fails the watch over a trace."""
    try:
        return trimmed_pod(_SERIALISER.sanitize_for_serialization(pod))
    except Exception as error:  # not a client model (a test's stand-in): say so in the trace
        return {"unserialisable": f"{type(pod).__name__}: {error}"}


def _ended(pod: Any, terminated: Any, *, current: bool = True) -> Ended:
    return Ended(
        pod=pod.metadata.name,
        node=pod.spec.node_name or "",
        container_id=terminated.container_id or "",
        exit_code=terminated.exit_code,
        reason=terminated.reason or "",
        report=parse_self_report(terminated.message),
        deleting=current and pod.metadata.deletion_timestamp is not None,
    )


def _times(terminated: Any) -> tuple[str | None, str | None]:
    """A terminated state's start and finish, as the pod status gives them."""
    return (
        terminated.started_at.isoformat() if terminated.started_at else None,
        terminated.finished_at.isoformat() if terminated.finished_at else None,
    )
