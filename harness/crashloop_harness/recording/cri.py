"""What a kind node's container runtime says about containers, parsed exactly.

Input is the JSON that crictl (cri-tools v1.34) prints inside the node; nothing
here runs crictl. The two commands print timestamps differently, and both
shapes come from cri-tools itself, not from the runtime:

* ``crictl ps -a -o json`` prints ``ListContainersResponse`` through protojson,
  so int64 fields such as ``createdAt`` are *decimal strings* of Unix
  nanoseconds ("1767261600123456789"), enums are names ("CONTAINER_EXITED"),
  and there is no startedAt, finishedAt or exit code at all.
* ``crictl inspect ID...`` rewrites ``status.createdAt/startedAt/finishedAt``
  as Go ``time.RFC3339Nano`` text in the *node's local zone*, with trailing
  zeros of the fraction dropped ("2026-01-01T10:00:00.1234Z"). A time the
  runtime does not have is printed as Go's zero time "0001-01-01T00:00:00Z"
  (created containers, a running container's finish) or, when the runtime
  sent 0 in a state where crictl formats it anyway, as the Unix epoch. One ID
  prints one object ``{"info": {...}, "status": {...}}``; several print a list.

Labels and annotations are the kubelet's own (pkg/kubelet/kuberuntime/labels.go):
pod name, namespace and UID and the container name as labels, the attempt as
the annotation ``io.kubernetes.container.restartCount``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from crashloop_harness.core.conventions import (
    CONTAINER_NAME_LABEL,
    POD_NAME_LABEL,
    POD_NAMESPACE_LABEL,
    POD_UID_LABEL,
    RESTART_COUNT_ANNOTATION,
)
from crashloop_harness.model.durations import NS_PER_S

STATE_CREATED: Final = "CONTAINER_CREATED"
STATE_RUNNING: Final = "CONTAINER_RUNNING"
STATE_EXITED: Final = "CONTAINER_EXITED"
STATE_UNKNOWN: Final = "CONTAINER_UNKNOWN"
# protojson prints enum names, but a number is what an older or hand-written
# encoder would print; both mean the same state.
_STATE_BY_NUMBER: Final = (STATE_CREATED, STATE_RUNNING, STATE_EXITED, STATE_UNKNOWN)

_FRACTION_DIGITS: Final = 9
_SECONDS_PER_MINUTE: Final = 60
_MAX_ZONE_HOUR: Final = 23
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)

# Go's RFC3339Nano output: "2006-01-02T15:04:05.999999999Z07:00". The parser
# also takes what RFC 3339 allows beyond Go's output (lower-case t/z), but not
# more than nine fraction digits: nothing finer than a nanosecond exists.
_RFC3339: Final = re.compile(
    r"(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})[Tt]"
    r"(?P<hour>\d{2}):(?P<minute>\d{2}):(?P<second>\d{2})"
    r"(?:\.(?P<fraction>\d{1,9}))?"
    r"(?P<zone>[Zz]|(?P<sign>[+-])(?P<zone_hour>\d{2}):(?P<zone_minute>\d{2}))"
)


class CriFormatError(ValueError):
    """crictl printed something this parser does not understand.

    Raised rather than guessed around: a changed format would otherwise turn
    into wrong restart delays.
    """


@dataclass(frozen=True)
class CriContainer:
    """One container attempt as the runtime reports it.

    Times are Unix nanoseconds, None when the runtime does not have them:
    ``crictl ps`` never reports start, finish or exit code, and a container
    reports no finish until it has exited. ``exit_code`` is None unless the
    container has finished, since the runtime's 0 means "none yet" while it runs.
    """

    id: str
    pod_sandbox_id: str | None
    pod_name: str
    pod_namespace: str
    pod_uid: str
    name: str
    attempt: int
    state: str
    created_at_ns: int | None
    started_at_ns: int | None = None
    finished_at_ns: int | None = None
    exit_code: int | None = None
    reason: str = ""
    message: str = ""

    @property
    def key(self) -> tuple[str, str, int]:
        """What identifies an attempt across sources: pod UID, container, attempt."""
        return (self.pod_uid, self.name, self.attempt)


def parse_rfc3339_nano(text: str) -> int | None:
    """Go RFC3339Nano text as integer Unix nanoseconds, exact; None for "unknown".

    ``datetime`` stops at microseconds, so the fraction is read as an integer
    count of nanoseconds and the rest is computed in whole seconds. Go's zero
    time and the Unix epoch (and anything before it) mean the runtime had no
    value, which crictl still formats (see the module doc).
    """
    match = _RFC3339.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise CriFormatError(
            f"not an RFC 3339 timestamp: {text!r} (expected Go's RFC3339Nano, "
            'e.g. "2026-01-01T10:00:00.123456789Z")'
        )
    fields = {k: int(v) for k, v in match.groupdict().items() if v and v.isdigit()}
    try:
        # datetime only checks the calendar here (day 31 of April, hour 24,
        # second 60, which Go never prints); it never sees the fraction.
        moment = datetime(
            fields["year"],
            fields["month"],
            fields["day"],
            fields["hour"],
            fields["minute"],
            fields["second"],
            tzinfo=UTC,
        )
    except ValueError as error:
        raise CriFormatError(f"impossible date or time in {text!r}: {error}") from error
    seconds = (moment - _EPOCH) // timedelta(seconds=1)
    if match.group("sign"):
        if fields["zone_hour"] > _MAX_ZONE_HOUR or fields["zone_minute"] >= _SECONDS_PER_MINUTE:
            raise CriFormatError(f"impossible zone offset in {text!r}")
        offset = (fields["zone_hour"] * 60 + fields["zone_minute"]) * _SECONDS_PER_MINUTE
        # Local time = UTC + offset, so UTC = local - offset.
        seconds -= offset if match.group("sign") == "+" else -offset
    fraction = match.group("fraction") or ""
    nanos = int(fraction.ljust(_FRACTION_DIGITS, "0")) if fraction else 0
    total = seconds * NS_PER_S + nanos
    return total if total > 0 else None


def parse_unix_ns(value: object) -> int | None:
    """A protojson int64 of Unix nanoseconds (a decimal string, or a number); 0 is None."""
    if isinstance(value, bool):
        raise CriFormatError(f"expected Unix nanoseconds, got {value!r}")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and re.fullmatch(r"-?\d+", value):
        number = int(value)
    else:
        # A float would already have lost the nanoseconds; refuse it.
        raise CriFormatError(f"expected Unix nanoseconds as an integer string, got {value!r}")
    return number if number > 0 else None


def parse_ps(json_text: str) -> list[CriContainer]:
    """Every container in ``crictl ps -a -o json`` output, in crictl's order (newest first)."""
    document = _load(json_text, "crictl ps -o json")
    containers = document.get("containers") if isinstance(document, Mapping) else None
    if not isinstance(containers, list):
        raise CriFormatError('crictl ps -o json: expected {"containers": [...]}')
    return [_from_ps_item(_mapping(item, "containers[]")) for item in containers]


def parse_inspect(json_text: str) -> CriContainer:
    """The container in ``crictl inspect <id>`` output (exactly one)."""
    containers = parse_inspect_all(json_text)
    if len(containers) != 1:
        raise CriFormatError(
            f"crictl inspect: expected one container, got {len(containers)}; "
            "use parse_inspect_all for several IDs"
        )
    return containers[0]


def parse_inspect_all(json_text: str) -> list[CriContainer]:
    """Every container in ``crictl inspect ID...`` output (one object, or a list)."""
    document = _load(json_text, "crictl inspect")
    # crictl keeps an old quirk: a single result is not wrapped in a list.
    items = document if isinstance(document, list) else [document]
    return [_from_inspect_item(_mapping(item, "inspect result")) for item in items]


SANDBOX_READY: Final = "SANDBOX_READY"


@dataclass(frozen=True)
class CriSandbox:
    """One pod sandbox the runtime holds: ready, or stopped and not yet removed."""

    pod: str
    namespace: str
    ready: bool


def parse_pods(json_text: str) -> list[CriSandbox]:
    """Every sandbox in ``crictl pods -o json`` output (``ListPodSandboxResponse``).

    protojson leaves an empty list out, so ``{}`` is a runtime with no sandbox;
    anything but an object is refused.
    """
    document = _mapping(_load(json_text, "crictl pods -o json"), "crictl pods -o json")
    items = document.get("items", [])
    if not isinstance(items, list):
        raise CriFormatError('crictl pods -o json: expected {"items": [...]}')
    found = []
    for item in items:
        metadata = _mapping(_mapping(item, "items[]").get("metadata"), "items[].metadata")
        found.append(
            CriSandbox(
                pod=str(metadata.get("name", "")),
                namespace=str(metadata.get("namespace", "")),
                ready=item.get("state") in (SANDBOX_READY, 0),
            )
        )
    return found


def _from_ps_item(item: Mapping[str, Any]) -> CriContainer:
    state = _state(item.get("state"))
    return CriContainer(
        **_identity(item),
        pod_sandbox_id=_optional_str(item.get("podSandboxId")),
        state=state,
        created_at_ns=parse_unix_ns(item.get("createdAt", 0)),
    )


def _from_inspect_item(item: Mapping[str, Any]) -> CriContainer:
    status = _mapping(item.get("status"), "status")
    # The sandbox ID is not part of CRI ContainerStatus; containerd adds it to
    # the verbose info (absent with `crictl inspect --quiet`).
    info = item.get("info")
    sandbox = info.get("sandboxID") if isinstance(info, Mapping) else None
    state = _state(status.get("state"))
    finished = _inspect_time(status, "finishedAt")
    exit_code = status.get("exitCode", 0)
    if isinstance(exit_code, bool) or not isinstance(exit_code, int):
        raise CriFormatError(f"status.exitCode: expected an integer, got {exit_code!r}")
    return CriContainer(
        **_identity(status),
        pod_sandbox_id=_optional_str(sandbox),
        state=state,
        created_at_ns=_inspect_time(status, "createdAt"),
        started_at_ns=_inspect_time(status, "startedAt"),
        finished_at_ns=finished,
        exit_code=exit_code if finished is not None or state == STATE_EXITED else None,
        reason=_optional_str(status.get("reason")) or "",
        message=_optional_str(status.get("message")) or "",
    )


def _identity(item: Mapping[str, Any]) -> dict[str, Any]:
    """ID, pod and container names and the attempt, shared by both outputs."""
    labels = _string_map(item.get("labels"), "labels")
    annotations = _string_map(item.get("annotations"), "annotations")
    metadata = item.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    container_id = item.get("id")
    if not isinstance(container_id, str) or not container_id:
        raise CriFormatError(f"container without an id: {dict(item)!r:.200}")
    return {
        "id": container_id,
        "pod_name": labels.get(POD_NAME_LABEL, ""),
        "pod_namespace": labels.get(POD_NAMESPACE_LABEL, ""),
        "pod_uid": labels.get(POD_UID_LABEL, ""),
        # The label is what the kubelet matches on; metadata.name is the same
        # for kubelet containers and the only name for anything else.
        "name": labels.get(CONTAINER_NAME_LABEL) or str(metadata.get("name", "")),
        "attempt": _attempt(container_id, annotations, metadata),
    }


def _attempt(container_id: str, annotations: Mapping[str, str], metadata: Mapping[str, Any]) -> int:
    """The kubelet's restart count for this container.

    The annotation is what the kubelet reads back to number the next attempt;
    metadata.attempt carries the same number and serves containers the
    kubelet did not create.
    """
    raw: object = annotations.get(RESTART_COUNT_ANNOTATION, metadata.get("attempt"))
    if isinstance(raw, str) and raw.isdigit():
        return int(raw)
    if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0:
        return raw
    raise CriFormatError(
        f"container {container_id}: no usable attempt number "
        f"({RESTART_COUNT_ANNOTATION}={annotations.get(RESTART_COUNT_ANNOTATION)!r}, "
        f"metadata.attempt={metadata.get('attempt')!r})"
    )


def _inspect_time(status: Mapping[str, Any], field: str) -> int | None:
    value = status.get(field)
    if value is None:
        return None
    # crictl rewrites the three times as RFC3339Nano text; output that skipped
    # the rewrite still has protojson's int64 decimal string.
    if isinstance(value, str) and _RFC3339.fullmatch(value):
        return parse_rfc3339_nano(value)
    return parse_unix_ns(value)


def _state(raw: object) -> str:
    if isinstance(raw, str) and raw in _STATE_BY_NUMBER:
        return raw
    if isinstance(raw, int) and not isinstance(raw, bool) and 0 <= raw < len(_STATE_BY_NUMBER):
        return _STATE_BY_NUMBER[raw]
    raise CriFormatError(f"unknown container state {raw!r}; expected one of {_STATE_BY_NUMBER}")


def _load(json_text: str, what: str) -> Any:
    try:
        return json.loads(json_text)
    except json.JSONDecodeError as error:
        raise CriFormatError(f"{what}: not JSON ({error})") from error


def _mapping(value: object, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise CriFormatError(f"{what}: expected a JSON object, got {type(value).__name__}")
    return value


def _string_map(value: object, what: str) -> dict[str, str]:
    # protojson prints an empty map as {}; a missing or null one is just as empty.
    if value is None:
        return {}
    mapping = _mapping(value, what)
    return {str(k): str(v) for k, v in mapping.items()}


def _optional_str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


# --- the runtime's event stream -------------------------------------------------------------

EVENT_CREATED: Final = "CONTAINER_CREATED_EVENT"
EVENT_STARTED: Final = "CONTAINER_STARTED_EVENT"
EVENT_STOPPED: Final = "CONTAINER_STOPPED_EVENT"
EVENT_DELETED: Final = "CONTAINER_DELETED_EVENT"
_EVENT_BY_NUMBER: Final = (EVENT_CREATED, EVENT_STARTED, EVENT_STOPPED, EVENT_DELETED)


@dataclass(frozen=True)
class CriEvent:
    """One ``crictl events -o json`` object: a container (or sandbox) event.

    containerd (2.x) sends, with every event, the status of every container of
    the event's pod sandbox (``containersStatuses``), with the same
    nanosecond times ``crictl inspect`` gives, so an event alone is enough to
    record the attempts it concerns. ``created_at_ns`` is when the runtime
    produced the event (node clock).
    """

    container_id: str
    event_type: str
    created_at_ns: int | None
    sandbox_id: str | None
    containers: tuple[CriContainer, ...]


def parse_event(document: object) -> CriEvent:
    """A decoded event object; the container statuses parsed like ``crictl inspect``'s."""
    item = _mapping(document, "crictl events")
    container_id = item.get("containerId")
    if not isinstance(container_id, str) or not container_id:
        raise CriFormatError(f"crictl events: an event without a containerId: {dict(item)!r:.200}")
    kind = item.get("containerEventType", EVENT_CREATED)
    if isinstance(kind, int) and not isinstance(kind, bool) and 0 <= kind < len(_EVENT_BY_NUMBER):
        kind = _EVENT_BY_NUMBER[kind]
    if kind not in _EVENT_BY_NUMBER:
        raise CriFormatError(f"crictl events: unknown event type {kind!r}")
    sandbox = item.get("podSandboxStatus")
    sandbox_id = sandbox.get("id") if isinstance(sandbox, Mapping) else None
    statuses = item.get("containersStatuses") or []
    if not isinstance(statuses, list):
        raise CriFormatError("crictl events: containersStatuses is not a list")
    containers = tuple(
        replace_sandbox(_from_inspect_item({"status": status}), _optional_str(sandbox_id))
        for status in statuses
    )
    return CriEvent(
        container_id=container_id,
        event_type=str(kind),
        created_at_ns=parse_unix_ns(item.get("createdAt", 0)),
        sandbox_id=_optional_str(sandbox_id),
        containers=containers,
    )


def replace_sandbox(container: CriContainer, sandbox_id: str | None) -> CriContainer:
    """``container`` with its sandbox ID filled in where the status did not carry one."""
    if container.pod_sandbox_id is not None or sandbox_id is None:
        return container
    return dataclasses.replace(container, pod_sandbox_id=sandbox_id)


class EventSplitter:
    """Cuts crictl's indented JSON event stream into objects, line by line.

    crictl prints each event as multi-line JSON whose closing brace stands
    alone at the start of a line; strings never hold a raw newline
    (protojson escapes it), so such a line ends an object. A fragment that
    does not parse (a stream cut mid-object by a restart) is reported and
    dropped; the next object starts clean.
    """

    def __init__(self) -> None:
        self._lines: list[str] = []

    def feed(self, line: str) -> object | None:
        """The decoded object that ``line`` completes, or None.

        Raises CriFormatError for a completed fragment that is not JSON.
        """
        text = line.rstrip("\r\n")
        if not self._lines and not text.strip():
            return None
        if text == "{" and self._lines:
            cut, self._lines = len(self._lines), [text]
            raise CriFormatError(f"crictl events: an object cut off after {cut} lines")
        self._lines.append(text)
        if text != "}":
            return None
        fragment, self._lines = "\n".join(self._lines), []
        document: object = _load(fragment, "crictl events")
        return document
