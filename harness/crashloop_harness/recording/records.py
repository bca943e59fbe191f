"""One record per container attempt, streamed to the run directory as it happens.

A run directory holds ``attempts.jsonl``: one JSON object per line, appended
and fsync'd the moment the recorder learns something, so a run that is
interrupted (SIGINT, a crash, a lost cluster) keeps everything it measured.
The file is a log, not a table: the same attempt appears again when more is
known about it (its finish, the back-off the kubelet reported), and readers
keep the latest line per attempt. Its first line names the layout and the
harness that wrote it (logs written before that have no such line).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

from crashloop_harness.core.version import produced_by
from crashloop_harness.recording.cri import CriContainer

ATTEMPTS_FILE: Final = "attempts.jsonl"
SOURCE_CRI: Final = "cri"
# Recorded from the workload's own report in the pod status (no node access).
SOURCE_SELF: Final = "self"

AttemptKey = tuple[str, str, int]
# The log's first line: {"schema": ATTEMPTS_SCHEMA, "schema_version": ..., "harness_version": ...}.
ATTEMPTS_SCHEMA: Final = "crashloop-attempts"
ATTEMPTS_SCHEMA_VERSION: Final = 1


class AttemptLogError(ValueError):
    """attempts.jsonl holds a line that is not an attempt record."""


@dataclass(frozen=True, kw_only=True)
class AttemptRecord:
    """One container attempt of one pod.

    ``attempt`` is the kubelet's restart count for the container (the CRI
    annotation io.kubernetes.container.restartCount): 0 for the first run,
    n for the n-th restart. Times are the runtime's Unix nanoseconds
    (``created_at_ns``: when the kubelet had the runtime create the container,
    its decision to restart; ``started_at_ns`` comes after it by the start
    latency);
    ``api_*`` are the pod status's whole-second strings, kept only to
    cross-check them. ``reported_backoff_s`` is the back-off the kubelet put in
    ``state.waiting.message`` before this attempt started, None when no
    message was seen (the watch can miss it). ``seen_at_ns`` is when the
    recorder first learned that the attempt had started (node clock): minus
    ``started_at_ns`` it is the observation latency.
    """

    run_id: str
    worker: str
    node: str
    namespace: str
    pod: str
    pod_uid: str
    container: str
    attempt: int
    container_id: str
    started_at_ns: int
    finished_at_ns: int | None = None
    created_at_ns: int | None = None
    exit_code: int | None = None
    reason: str = ""
    reported_backoff_s: float | None = None
    api_started_at: str | None = None
    api_finished_at: str | None = None
    seen_at_ns: int | None = None
    source: str = SOURCE_CRI
    # The workload's own report (its termination message, node clock, ns):
    # its process start and exit, a third source beside the runtime and the API.
    self_started_at_ns: int | None = None
    self_finished_at_ns: int | None = None
    # True: the process was killed (OOMKilled) and its self-reported finish is
    # its last heartbeat, up to 0.1s before the real exit; None until a report
    # was read (so merging an observation without one keeps what was known).
    self_finish_is_heartbeat: bool | None = None

    @property
    def key(self) -> AttemptKey:
        """What makes an attempt unique: a pod instance, a container, a number."""
        return (self.pod_uid, self.container, self.attempt)

    @classmethod
    def from_cri(
        cls,
        container: CriContainer,
        *,
        run_id: str,
        worker: str,
        node: str,
        reported_backoff_s: float | None = None,
        api_started_at: str | None = None,
        api_finished_at: str | None = None,
        seen_at_ns: int | None = None,
    ) -> AttemptRecord:
        """A record from ``crictl inspect`` (``crictl ps`` has no start time)."""
        if container.started_at_ns is None:
            raise ValueError(
                f"container {container.id} ({container.pod_namespace}/{container.pod_name} "
                f"{container.name} attempt {container.attempt}) has no start time yet: "
                "record it once it is running, from crictl inspect"
            )
        return cls(
            run_id=run_id,
            worker=worker,
            node=node,
            namespace=container.pod_namespace,
            pod=container.pod_name,
            pod_uid=container.pod_uid,
            container=container.name,
            attempt=container.attempt,
            container_id=container.id,
            started_at_ns=container.started_at_ns,
            finished_at_ns=container.finished_at_ns,
            created_at_ns=container.created_at_ns,
            exit_code=container.exit_code,
            reason=container.reason,
            reported_backoff_s=reported_backoff_s,
            api_started_at=api_started_at,
            api_finished_at=api_finished_at,
            seen_at_ns=seen_at_ns,
        )

    def merged_with(self, newer: AttemptRecord) -> AttemptRecord:
        """``newer``, with what it lacks (None) taken from this older observation.

        Observations come from different moments (the start from one
        inspect, the finish from a later one, the back-off message from the
        watch), so a later one must not erase what an earlier one knew; and
        ``seen_at_ns``, the first sight, is never replaced by a later one.
        """
        if newer.key != self.key:
            raise ValueError(f"cannot merge attempt {newer.key} into {self.key}")
        if newer.container_id and self.container_id and newer.container_id != self.container_id:
            # Another container under the same number: a 1.35 kubelet numbers
            # a pod's containers from 0 again after RestartAllContainers
            # removed them (and their logs, which it counts restarts by).
            # Nothing of the old one belongs to it.
            return newer
        filled = {
            field.name: getattr(self, field.name)
            for field in dataclasses.fields(self)
            if getattr(newer, field.name) is None
        }
        if self.seen_at_ns is not None:
            # First sight stays first, whichever source saw the attempt again.
            filled["seen_at_ns"] = self.seen_at_ns
        return dataclasses.replace(newer, **filled)

    def to_json(self) -> str:
        """One line of JSON (no newline), keys in field order."""
        return json.dumps(dataclasses.asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> AttemptRecord:
        """Parse :meth:`to_json` output, checking every field's type."""
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as error:
            raise AttemptLogError(f"not JSON: {error}") from error
        if not isinstance(raw, dict):
            raise AttemptLogError(f"expected a JSON object, got {type(raw).__name__}")
        return cls(**_checked_fields(raw))


# Allowed JSON types per field; bool (an int to Python) only where named.
_FIELD_TYPES: Final[dict[str, tuple[type, ...]]] = {
    "run_id": (str,),
    "worker": (str,),
    "node": (str,),
    "namespace": (str,),
    "pod": (str,),
    "pod_uid": (str,),
    "container": (str,),
    "attempt": (int,),
    "container_id": (str,),
    "started_at_ns": (int,),
    "finished_at_ns": (int, type(None)),
    "created_at_ns": (int, type(None)),
    "exit_code": (int, type(None)),
    "reason": (str,),
    "reported_backoff_s": (float, int, type(None)),
    "api_started_at": (str, type(None)),
    "api_finished_at": (str, type(None)),
    "seen_at_ns": (int, type(None)),
    "source": (str,),
    "self_started_at_ns": (int, type(None)),
    "self_finished_at_ns": (int, type(None)),
    "self_finish_is_heartbeat": (bool, type(None)),
}
_REQUIRED: Final = frozenset(
    f.name
    for f in dataclasses.fields(AttemptRecord)
    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
)


def _checked_fields(raw: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(raw) - set(_FIELD_TYPES))
    if unknown:
        # A newer harness wrote fields this one does not know: refuse rather
        # than drop data silently.
        raise AttemptLogError(f"unknown fields {unknown}")
    missing = sorted(_REQUIRED - set(raw))
    if missing:
        raise AttemptLogError(f"missing fields {missing}")
    for name, value in raw.items():
        allowed = _FIELD_TYPES[name]
        if (isinstance(value, bool) and bool not in allowed) or not isinstance(value, allowed):
            raise AttemptLogError(f"field {name!r}: unexpected value {value!r}")
    if raw["reported_backoff_s"] is not None:
        raw = {**raw, "reported_backoff_s": float(raw["reported_backoff_s"])}
    return raw


class AttemptLog:
    """Append-only writer of ``<run_dir>/attempts.jsonl``.

    Each new or changed attempt is one line, written, flushed and fsync'd at
    once. An attempt seen again is merged with what was known
    (:meth:`AttemptRecord.merged_with`) and appended only if that adds
    something. Opening an existing log resumes it: its records seed the
    de-duplication, and a last line the previous writer did not finish is
    repaired (:func:`_repair_tail`) so the next record starts on a line of its own.
    """

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / ATTEMPTS_FILE
        self._latest: dict[AttemptKey, AttemptRecord] = {}
        # A second container under one restart count, said once each: both stay in the log.
        self.replaced: list[str] = []
        existed = self.path.exists()
        if existed:
            _repair_tail(self.path)
            self._latest = {r.key: r for r in read_attempts(self.path)}
        self._file: IO[str] = self.path.open("a", encoding="utf-8")
        if not existed:
            header = {"schema": ATTEMPTS_SCHEMA, "schema_version": ATTEMPTS_SCHEMA_VERSION}
            self._file.write(json.dumps({**header, **produced_by()}) + "\n")
            self._file.flush()
            os.fsync(self._file.fileno())
            # Make the new directory entry itself durable, not only the data.
            _fsync_dir(self.path.parent)

    def __enter__(self) -> AttemptLog:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._file.close()

    def latest(self) -> list[AttemptRecord]:
        """What the log knows now: the latest record per attempt."""
        return list(self._latest.values())

    def append(self, record: AttemptRecord) -> bool:
        """Write the record if it is new or adds something; True when written."""
        known = self._latest.get(record.key)
        if (
            known is not None
            and known.container_id
            and record.container_id
            and known.container_id != record.container_id
        ):
            self.replaced.append(
                f"{record.pod}/{record.container}: a second container "
                f"({record.container_id[:13]}) under restart count {record.attempt}, after "
                f"{known.container_id[:13]}; both are in {ATTEMPTS_FILE}, the verdict reads the "
                "second (a kubelet counts restarts by the containers it keeps: one it removed "
                "is counted again)"
            )
        merged = record if known is None else known.merged_with(record)
        if merged == known:
            return False
        self._file.write(merged.to_json() + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())
        self._latest[merged.key] = merged
        return True

    def extend(self, records: Iterable[AttemptRecord]) -> int:
        """Append several records; the number of lines written."""
        return sum(self.append(r) for r in records)


def read_attempts(path: Path) -> list[AttemptRecord]:
    """The latest record per attempt, in the order attempts were first seen.

    A last line without its newline that does not parse is the one a killed
    writer left half written, and is ignored; a bad line anywhere else is
    corruption and raises.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise AttemptLogError(
            f"{path}: not UTF-8 text at byte {error.start}: not an attempt log this harness "
            "wrote (or one damaged since)"
        ) from error
    lines = text.split("\n")
    # After a final newline split() leaves "", so lines[-1] is the torn tail if any.
    latest: dict[AttemptKey, AttemptRecord] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip() or (number == 1 and _is_header(line, path)):
            continue
        try:
            record = AttemptRecord.from_json(line)
        except AttemptLogError as error:
            if number == len(lines):
                break
            raise AttemptLogError(f"{path}:{number}: {error}") from error
        known = latest.get(record.key)
        latest[record.key] = record if known is None else known.merged_with(record)
    return list(latest.values())


def _is_header(line: str, path: Path) -> bool:
    """Whether the first line is the log's header; one of a layout this harness cannot read
    is refused, naming it."""
    try:
        raw = json.loads(line)
    except json.JSONDecodeError:
        return False
    if not isinstance(raw, dict) or raw.get("schema") != ATTEMPTS_SCHEMA:
        return False
    if raw.get("schema_version") != ATTEMPTS_SCHEMA_VERSION:
        raise AttemptLogError(
            f"{path}: layout version {raw.get('schema_version')!r}, this harness reads "
            f"{ATTEMPTS_SCHEMA_VERSION} (written by crashloop-harness "
            f"{raw.get('harness_version', 'unknown')}): read it with that version"
        )
    return True


def _repair_tail(path: Path) -> None:
    """End the log on a line boundary before appending to it again.

    An unterminated last line is either complete (the writer died between
    the record and its newline: keep it, add the newline) or torn (cut it:
    it cannot be read, and the next record must not be glued to it).
    """
    with path.open("rb+") as handle:
        data = handle.read()
        if not data or data.endswith(b"\n"):
            return
        start = data.rfind(b"\n") + 1
        try:
            AttemptRecord.from_json(data[start:].decode("utf-8"))
        except (AttemptLogError, UnicodeDecodeError):
            handle.truncate(start)
        else:
            handle.write(b"\n")
        handle.flush()
        os.fsync(handle.fileno())


def _fsync_dir(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
