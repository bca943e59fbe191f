"""The recorder's raw inputs, kept as they arrived: a trace a replay can feed back.

Every run's recorder writes ``trace.jsonl.gz`` beside ``attempts.jsonl``: one
JSON object a line, in the order the inputs reached it, each stamped with this
host's wall clock (``t``, Unix ns) and monotonic clock (``m``, ns) at arrival.
What it keeps is what the real code parses, not what it made of it, so that a
replay runs the same parsers, recorder, verdict and endings on the same bytes:

- ``out`` / ``err``: a line of a node reader's stdout (the runtime's events)
  or stderr (the pulse: ticks, listings, the kubelet's process);
- ``ended``: a node reader that ended, with its exit code;
- ``exec``: a command the recorder ran in a node (the clock, a listing, an
  inspect) and its output, or the error it met;
- ``pod``: a pod the watch delivered (``LIST``, ``ADDED``, ``MODIFIED``,
  ``DELETED``), trimmed to what the watch reads; ``watch``: a watch failure;
- ``lease``: a renewal of a node's Lease the API-only recorder read;
- ``view``: what a scenario run's own view answered its scenarios (the pods
  listed by role, a pod file's text) and the objects it created or deleted;
- ``context`` and ``ending``: what the run was (profile, curves, pods) and how
  its kubelets and engine were at the end, written by the run itself.

The first line is a header with the format's version. A trace is small (the
runtime's events compress well): a quick check's is some tens of KB.
"""

from __future__ import annotations

import gzip
import json
import shutil
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

from crashloop_harness.core.conventions import (
    CONTAINER_NAME_LABEL,
    POD_NAME_LABEL,
    POD_NAMESPACE_LABEL,
    POD_UID_LABEL,
    RESTART_COUNT_ANNOTATION,
)

TRACE_FILE: Final = "trace.jsonl.gz"
TRACE_VERSION: Final = 1

# What the pod watch reads of a pod; everything else is left out of the trace.
_POD_METADATA: Final = (
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "deletionTimestamp",
    "labels",
)
# The reason, message and conditions say why a pod never ran (pods.notrunning): kept since
# 2026-12-07, when a drill's replay could not name the taint its live run had named.
_POD_STATUS: Final = (
    "phase",
    "reason",
    "message",
    "conditions",
    "initContainerStatuses",
    "containerStatuses",
)
# What the event parser reads of a runtime event and of each container status in it
# (crashloop_harness.recording.cri.parse_event); the images, mounts, resources and sandbox
# network it carries too would make up most of a trace.
_EVENT_KEYS: Final = ("containerId", "containerEventType", "createdAt")
_STATUS_KEYS: Final = (
    "id",
    "metadata",
    "state",
    "createdAt",
    "startedAt",
    "finishedAt",
    "exitCode",
    "reason",
    "message",
)
_STATUS_LABELS: Final = (POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL, CONTAINER_NAME_LABEL)


@dataclass(frozen=True)
class TraceEntry:
    """One input as it arrived: its kind, host wall and monotonic time (ns), its fields."""

    kind: str
    wall_ns: int
    monotonic_ns: int
    fields: Mapping[str, Any]

    @property
    def node(self) -> str:
        return str(self.fields.get("node", ""))


class TraceWriter:
    """Appends entries to a run's trace; safe to call from every reader thread at once.

    During the run each line goes to ``trace.jsonl`` as it arrives (a run
    that dies keeps what it read); :meth:`close` compresses it into
    :data:`TRACE_FILE`.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.plain = path.with_suffix("")
        self._lock = threading.Lock()
        self._file: IO[str] | None = None
        self._closed = False
        # Why the trace stopped early, if it did (a full disk): a note for the run.
        self.problem: str | None = None

    def write(self, kind: str, **fields: Any) -> None:
        """Append one entry; never raises: a trace that fails stops, the recording goes on."""
        try:
            line = {"kind": kind, "t": time.time_ns(), "m": time.monotonic_ns(), **fields}
            data = json.dumps(line, separators=(",", ":"), default=str) + "\n"
            with self._lock:
                if self._closed:
                    return
                if self._file is None:
                    self._file = self.plain.open("w", encoding="utf-8", buffering=1)
                    header = {"kind": "trace", "version": TRACE_VERSION}
                    self._file.write(json.dumps(header) + "\n")
                self._file.write(data)
        except (OSError, ValueError) as error:
            self._give_up(error)

    def close(self) -> None:
        """Compress what was written; never raises (the plain file stays where this fails)."""
        try:
            with self._lock:
                self._closed = True
                if self._file is None:
                    return
                self._file.close()
                self._file = None
                with self.plain.open("rb") as source, gzip.open(self.path, "wb") as target:
                    shutil.copyfileobj(source, target)
                self.plain.unlink()
        except OSError as error:
            self._give_up(error)

    def _give_up(self, error: Exception) -> None:
        # A full disk must not end a reader thread or the pod watch: the trace
        # is for replays, the attempts are the run's record.
        self.problem = self.problem or f"trace {self.plain}: {error}; the trace stops here"
        self._closed = True


class NoTrace:
    """A writer that keeps nothing (runs whose inputs no replay reads: the overhead cells)."""

    problem: str | None = None

    def write(self, kind: str, **fields: Any) -> None:
        del kind, fields

    def close(self) -> None:
        pass


Tap = TraceWriter | NoTrace


def trimmed_pod(pod: Mapping[str, Any]) -> dict[str, Any]:
    """A serialised pod (the API's camelCase) with only what the pod watch reads."""
    metadata = pod.get("metadata") or {}
    status = pod.get("status") or {}
    return {
        "metadata": {k: metadata[k] for k in _POD_METADATA if metadata.get(k) is not None},
        "spec": {"nodeName": (pod.get("spec") or {}).get("nodeName")},
        "status": {k: status[k] for k in _POD_STATUS if status.get(k) is not None},
    }


def trimmed_event(document: object) -> object:
    """A decoded runtime event with only what the event parser reads (anything else: as is)."""
    if not isinstance(document, Mapping):
        return document
    trimmed: dict[str, Any] = {k: document[k] for k in _EVENT_KEYS if k in document}
    sandbox = document.get("podSandboxStatus")
    if isinstance(sandbox, Mapping):
        trimmed["podSandboxStatus"] = {"id": sandbox.get("id")}
    statuses = document.get("containersStatuses")
    if not isinstance(statuses, list):
        return {**trimmed, "containersStatuses": statuses}
    trimmed["containersStatuses"] = [_trimmed_status(status) for status in statuses]
    return trimmed


def _trimmed_status(status: object) -> object:
    if not isinstance(status, Mapping):
        return status
    kept: dict[str, Any] = {k: status[k] for k in _STATUS_KEYS if k in status}
    for key, names in (("labels", _STATUS_LABELS), ("annotations", (RESTART_COUNT_ANNOTATION,))):
        values = status.get(key)
        if isinstance(values, Mapping):
            kept[key] = {name: values[name] for name in names if name in values}
        elif values is not None:
            kept[key] = values
    return kept


class TraceFormatError(ValueError):
    """A file that is not a trace this code can read, with what is wrong."""


def read_trace(path: Path) -> Iterator[TraceEntry]:
    """The entries of a trace (compressed, or the plain file a run left), in order."""
    with _text(path) as lines:
        header = json.loads(next(lines, "{}") or "{}")
        if header.get("kind") != "trace" or header.get("version") != TRACE_VERSION:
            raise TraceFormatError(
                f"{path}: not a version {TRACE_VERSION} trace (header {header!r:.200})"
            )
        for number, line in enumerate(lines, start=2):
            try:
                raw = json.loads(line)
                kind, wall, mono = raw.pop("kind"), raw.pop("t"), raw.pop("m")
            except (ValueError, KeyError) as error:
                raise TraceFormatError(f"{path}:{number}: {error}") from error
            yield TraceEntry(str(kind), int(wall), int(mono), raw)


def _text(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")
