"""Evidence of a failed test or run, collected before cleanup deletes it.

What a reader needs to tell a kubelet regression from a harness bug: every
pod of the namespace as YAML, current and previous logs of every container,
the namespace's events in time order, each node's live kubelet config
(/configz), and once per session ``kind export logs`` (kubelet and
containerd journals of every node).

Layout under the target directory a caller picks (for a test:
``<run_dir>/evidence/<test>/``, see :func:`evidence_dir`)::

    errors.txt                      only when a collector failed: what and why
    <namespace>/pods/<pod>.yaml
    <namespace>/logs/<pod>/<container>.log
    <namespace>/logs/<pod>/<container>.previous.log
    <namespace>/logs/<pod>/<container>.{current,previous}.unavailable.txt
                                    instead of a log the API did not serve, with why
    <namespace>/events.yaml         the Event objects, oldest first
    <namespace>/events.txt          the same, one line each
    nodes/<node>.configz.json

Evidence is collected because something already failed; a collector that
raised would replace that failure with its own. So every collector catches
its own errors (``Exception``, not ``BaseException``: Ctrl-C still stops
it), writes them to ``errors.txt`` and carries on with the next item.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import yaml
from kubernetes import client

from crashloop_harness.cluster.kube import node_configz
from crashloop_harness.core import timeouts
from crashloop_harness.core.errors import HarnessError

ERRORS_FILE: Final = "errors.txt"

# A crash-looping container writes little, but a chatty one restarting for
# hours could fill the artifact store; the tail is where the crash is.
LOG_LIMIT_BYTES: Final = 8 * 1024 * 1024

# The API answers with 400 and this message when a container has no
# previous instance: expected for a container that never restarted, so it
# is recorded next to the logs, not as a collector error.
_NO_PREVIOUS: Final = re.compile(r"previous terminated container .* not found")

# ... and with HTTP 200 and this text when the container the status names
# was already removed. Measured on v1.35.8: the kubelet keeps one dead
# container per container, so while a crash-looping container waits out its
# back-off the "current" log is its last crash, and "previous" (the status's
# lastState) names the attempt before, already removed with its log file.
# A previous log is served only while the next attempt runs.
_UNABLE_TO_RETRIEVE: Final = b"unable to retrieve container logs for "
_REMOVED_HINT: Final = (
    "the kubelet keeps one dead container per container; during a back-off wait the "
    "current log holds the last crash and the attempt before it is already removed"
)

_UNSAFE_NAME: Final = re.compile(r"[^A-Za-z0-9._-]+")
_NAME_LIMIT: Final = 120
_EPOCH: Final = datetime.min.replace(tzinfo=UTC)


class CollectorErrors:
    """Appends one line per failed collector to ``<root>/errors.txt``."""

    def __init__(self, root: Path) -> None:
        self.path = root / ERRORS_FILE

    def record(self, what: str, error: BaseException) -> None:
        line = f"{datetime.now(UTC).isoformat(timespec='seconds')} {what}: {describe(error)}\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as out:
                out.write(line)
        except OSError:
            # Nowhere left to write (disk full, directory gone): losing this
            # line is better than raising over the test's own failure.
            pass

    @contextmanager
    def guard(self, what: str) -> Iterator[None]:
        """Run the body; on any Exception record it under ``what`` and continue."""
        try:
            yield
        except Exception as error:
            self.record(what, error)


def describe(error: BaseException) -> str:
    """One line for an error; the API's own message rather than its HTTP dump."""
    if isinstance(error, client.ApiException):
        message = _api_message(error)
        return f"HTTP {error.status} {error.reason}" + (f": {message}" if message else "")
    if isinstance(error, HarnessError):
        # The problem is the useful part; the fix is for interactive users.
        return " ".join(error.problem.split())
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _api_message(error: Any) -> str:
    body = error.body
    if isinstance(body, bytes):
        body = body.decode("utf-8", errors="replace")
    if not body:
        return ""
    try:
        status = json.loads(body)
    except ValueError:
        return " ".join(str(body).split())[:300]
    if isinstance(status, dict) and isinstance(status.get("message"), str):
        return str(status["message"])
    return " ".join(str(body).split())[:300]


def safe_name(text: str) -> str:
    """A file name from a pod, container, node or test name (never a path)."""
    cleaned = _UNSAFE_NAME.sub("-", text).strip("-.")
    return cleaned[:_NAME_LIMIT] or "unnamed"


def evidence_dir(run_dir: Path, test_name: str) -> Path:
    """``<run_dir>/evidence/<test>``, e.g. for a pytest node id."""
    return Path(run_dir) / "evidence" / safe_name(test_name)


def _dump_yaml(api: client.ApiClient, obj: Any) -> str:
    # sanitize_for_serialization turns the client's models into the API's own
    # camelCase JSON shape (and datetimes into ISO text), as kubectl shows it.
    data = api.sanitize_for_serialization(obj)
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False)


def collect_namespace_evidence(
    api: client.ApiClient,
    namespace: str,
    target_dir: Path,
    pod_selector: str = "",
    silent: Collection[str] = (),
) -> Path:
    """Pods, container logs and events of ``namespace`` into ``target_dir/<namespace>``:
    with ``pod_selector``, only the pods it selects and the events about them. No log is
    asked of a pod on a ``silent`` node (its kubelet stopped answering): why is written
    where the log would be.

    Never raises (see the module docstring); returns the namespace directory.
    """
    target_dir = Path(target_dir)
    errors = CollectorErrors(target_dir)
    ns_dir = target_dir / safe_name(namespace)
    core = client.CoreV1Api(api)
    pods: list[Any] = []
    with errors.guard(f"namespace {namespace}: listing pods"):
        ns_dir.mkdir(parents=True, exist_ok=True)
        pods = core.list_namespaced_pod(
            namespace, label_selector=pod_selector, _request_timeout=timeouts.API_REQUEST
        ).items
    for pod in pods:
        _collect_pod(api, core, pod, ns_dir, errors, silent=silent)
    about = {pod.metadata.name for pod in pods} if pod_selector else None
    with errors.guard(f"namespace {namespace}: events"):
        _collect_events(api, core, namespace, ns_dir, about)
    return ns_dir


def _collect_pod(
    api: client.ApiClient,
    core: client.CoreV1Api,
    pod: Any,
    ns_dir: Path,
    errors: CollectorErrors,
    *,
    silent: Collection[str] = (),
) -> None:
    name = pod.metadata.name
    with errors.guard(f"pod {pod.metadata.namespace}/{name}: YAML"):
        # List items carry no apiVersion/kind; put them back so the file
        # reads (and re-applies) like `kubectl get pod -o yaml`.
        pod.api_version = pod.api_version or "v1"
        pod.kind = pod.kind or "Pod"
        path = ns_dir / "pods" / f"{safe_name(name)}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_dump_yaml(api, pod), encoding="utf-8")
    node = pod.spec.node_name
    for container in _container_names(pod):
        pod_dir = ns_dir / "logs" / safe_name(name)
        if node in silent:
            with errors.guard(f"pod {pod.metadata.namespace}/{name}: its node's note"):
                pod_dir.mkdir(parents=True, exist_ok=True)
                (pod_dir / f"{safe_name(container)}.unavailable.txt").write_text(
                    f"no log asked: node {node}'s kubelet stopped answering during the run\n",
                    encoding="utf-8",
                )
            continue
        _collect_logs(core, pod, container, pod_dir, errors)


def _container_names(pod: Any) -> list[str]:
    """Init, regular and ephemeral containers: a sidecar's crash is in an init container."""
    spec = pod.spec
    groups = (spec.init_containers, spec.containers, spec.ephemeral_containers)
    return [container.name for group in groups for container in group or []]


class LogUnavailableError(Exception):
    """The kubelet answered 200 but with its "unable to retrieve container logs" text."""


def _collect_logs(
    core: client.CoreV1Api, pod: Any, container: str, pod_dir: Path, errors: CollectorErrors
) -> None:
    namespace, name = pod.metadata.namespace, pod.metadata.name
    base = pod_dir / safe_name(container)
    with errors.guard(f"pod {namespace}/{name} container {container}: current log"):
        pod_dir.mkdir(parents=True, exist_ok=True)
        try:
            data = _read_log(core, namespace, name, container, previous=False)
        except (client.ApiException, LogUnavailableError) as error:
            _write_unavailable(base, "current", error)
            raise
        base.with_name(f"{base.name}.log").write_bytes(data)
    with errors.guard(f"pod {namespace}/{name} container {container}: previous log"):
        try:
            data = _read_log(core, namespace, name, container, previous=True)
        except (client.ApiException, LogUnavailableError) as error:
            # Write down why there is no previous log, next to where it would
            # be; only an unexpected refusal is a collector error as well.
            reason = _write_unavailable(base, "previous", error)
            if not (_NO_PREVIOUS.search(reason) or isinstance(error, LogUnavailableError)):
                raise
            return
        base.with_name(f"{base.name}.previous.log").write_bytes(data)


def _write_unavailable(base: Path, which: str, error: Exception) -> str:
    reason = describe(error)
    if isinstance(error, LogUnavailableError):
        reason += f" ({_REMOVED_HINT})"
    base.with_name(f"{base.name}.{which}.unavailable.txt").write_text(
        f"no {which} log: {reason}\n", encoding="utf-8"
    )
    return reason


def _read_log(
    core: client.CoreV1Api, namespace: str, pod: str, container: str, *, previous: bool
) -> bytes:
    # Raw bytes (no preload): the client would otherwise decode the log as
    # UTF-8 and fail on a binary crash dump, losing the whole log.
    response = core.read_namespaced_pod_log(
        pod,
        namespace,
        container=container,
        previous=previous,
        timestamps=True,
        limit_bytes=LOG_LIMIT_BYTES,
        _preload_content=False,
        _request_timeout=timeouts.API_REQUEST,
    )
    data: bytes = response.data
    if data.startswith(_UNABLE_TO_RETRIEVE):
        # Not a log line: the kubelet's own note that the container (and its
        # log file) is gone. Saved as a log it would read like the workload's.
        raise LogUnavailableError(data.decode("utf-8", errors="replace").strip())
    return data


def _event_time(event: Any) -> datetime:
    """When an event last happened; older APIs fill only some of the fields."""
    for moment in (
        event.last_timestamp,
        event.event_time,
        event.first_timestamp,
        event.metadata.creation_timestamp,
    ):
        if isinstance(moment, datetime):
            return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return _EPOCH


def _collect_events(
    api: client.ApiClient,
    core: client.CoreV1Api,
    namespace: str,
    ns_dir: Path,
    about: set[str] | None = None,
) -> None:
    """The namespace's events, or only those about the pods named in ``about``."""
    items = core.list_namespaced_event(namespace, _request_timeout=timeouts.API_REQUEST).items
    if about is not None:
        items = [e for e in items if e.involved_object and e.involved_object.name in about]
    events = sorted(items, key=_event_time)
    ns_dir.mkdir(parents=True, exist_ok=True)
    (ns_dir / "events.yaml").write_text(_dump_yaml(api, events), encoding="utf-8")
    lines = [_event_line(event) for event in events]
    (ns_dir / "events.txt").write_text(
        "\n".join(lines) + "\n" if lines else f"no events in namespace {namespace}\n",
        encoding="utf-8",
    )


def _event_line(event: Any) -> str:
    moment = _event_time(event)
    when = "-" if moment == _EPOCH else moment.astimezone(UTC).isoformat(timespec="seconds")
    involved = event.involved_object
    what = f"{involved.kind}/{involved.name}" if involved else "-"
    count = f" (x{event.count})" if event.count and event.count > 1 else ""
    message = " ".join((event.message or "").split())
    return f"{when} {event.type or '-'} {event.reason or '-'} {what}{count}: {message}"


def collect_node_configs(
    api: client.ApiClient,
    target_dir: Path,
    nodes: Sequence[str] | None = None,
    silent: Collection[str] = (),
) -> Path:
    """Every node's live kubelet config (or only ``nodes``') into
    ``target_dir/nodes/<node>.configz.json``; none asked of a ``silent`` node (its kubelet
    stopped answering), whose file says so.

    Never raises; returns the nodes directory.
    """
    target_dir = Path(target_dir)
    errors = CollectorErrors(target_dir)
    nodes_dir = target_dir / "nodes"
    names: list[str] = sorted(nodes or ())
    with errors.guard("nodes: listing"):
        nodes_dir.mkdir(parents=True, exist_ok=True)
        if nodes is None:
            items = client.CoreV1Api(api).list_node(_request_timeout=timeouts.API_REQUEST).items
            names = sorted(node.metadata.name for node in items)
    for name in names:
        if name in silent:
            with errors.guard(f"node {name}: its note"):
                (nodes_dir / f"{safe_name(name)}.configz.unavailable.txt").write_text(
                    "not asked: its kubelet stopped answering during the run\n", encoding="utf-8"
                )
            continue
        with errors.guard(f"node {name}: configz"):
            payload = node_configz(api, name)
            (nodes_dir / f"{safe_name(name)}.configz.json").write_text(
                json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8"
            )
    return nodes_dir


def collect_failure_evidence(
    api: client.ApiClient,
    namespaces: Sequence[str],
    target_dir: Path,
    *,
    pod_selector: str = "",
    nodes: Sequence[str] | None = None,
    silent: Collection[str] = (),
) -> Path:
    """Every namespace's evidence plus the node configs into ``target_dir``; never raises.

    ``pod_selector`` and ``nodes`` keep it to one run's pods and nodes (default: all);
    nothing is asked of a ``silent`` node's kubelet."""
    for namespace in namespaces:
        collect_namespace_evidence(api, namespace, target_dir, pod_selector, silent)
    collect_node_configs(api, target_dir, nodes, silent)
    return Path(target_dir)
