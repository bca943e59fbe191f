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
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import yaml
from kubernetes import client

from harness.cluster.kube import node_configz
from harness.core import timeouts
from harness.core.errors import HarnessError
from harness.core.proc import run
from harness.outputs.summary import RunSummary

ERRORS_FILE: Final = "errors.txt"
KIND_LOGS_MARKER: Final = ".crashloop-kind-logs"

# `kind export logs` copies every node's journal and container logs; on a
# 4-node cluster that is tens of MB and well under a minute, but a wedged
# node can make `docker exec` hang, and evidence must not hang the session.
KIND_EXPORT_LOGS_TIMEOUT: Final = 300.0

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


class _Errors:
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


def collect_namespace_evidence(api: client.ApiClient, namespace: str, target_dir: Path) -> Path:
    """Pods, container logs and events of ``namespace`` into ``target_dir/<namespace>``.

    Never raises (see the module docstring); returns the namespace directory.
    """
    target_dir = Path(target_dir)
    errors = _Errors(target_dir)
    ns_dir = target_dir / safe_name(namespace)
    core = client.CoreV1Api(api)
    pods: list[Any] = []
    with errors.guard(f"namespace {namespace}: listing pods"):
        ns_dir.mkdir(parents=True, exist_ok=True)
        pods = core.list_namespaced_pod(namespace, _request_timeout=timeouts.API_REQUEST).items
    for pod in pods:
        _collect_pod(api, core, pod, ns_dir, errors)
    with errors.guard(f"namespace {namespace}: events"):
        _collect_events(api, core, namespace, ns_dir)
    return ns_dir


def _collect_pod(
    api: client.ApiClient, core: client.CoreV1Api, pod: Any, ns_dir: Path, errors: _Errors
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
    for container in _container_names(pod):
        _collect_logs(core, pod, container, ns_dir / "logs" / safe_name(name), errors)


def _container_names(pod: Any) -> list[str]:
    """Init, regular and ephemeral containers: a sidecar's crash is in an init container."""
    spec = pod.spec
    groups = (spec.init_containers, spec.containers, spec.ephemeral_containers)
    return [container.name for group in groups for container in group or []]


class LogUnavailableError(Exception):
    """The kubelet answered 200 but with its "unable to retrieve container logs" text."""


def _collect_logs(
    core: client.CoreV1Api, pod: Any, container: str, pod_dir: Path, errors: _Errors
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
    api: client.ApiClient, core: client.CoreV1Api, namespace: str, ns_dir: Path
) -> None:
    items = core.list_namespaced_event(namespace, _request_timeout=timeouts.API_REQUEST).items
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


def collect_node_configs(api: client.ApiClient, target_dir: Path) -> Path:
    """Every node's live kubelet config into ``target_dir/nodes/<node>.configz.json``.

    Never raises; returns the nodes directory.
    """
    target_dir = Path(target_dir)
    errors = _Errors(target_dir)
    nodes_dir = target_dir / "nodes"
    names: list[str] = []
    with errors.guard("nodes: listing"):
        nodes_dir.mkdir(parents=True, exist_ok=True)
        items = client.CoreV1Api(api).list_node(_request_timeout=timeouts.API_REQUEST).items
        names = sorted(node.metadata.name for node in items)
    for name in names:
        with errors.guard(f"node {name}: configz"):
            payload = node_configz(api, name)
            (nodes_dir / f"{safe_name(name)}.configz.json").write_text(
                json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8"
            )
    return nodes_dir


def collect_failure_evidence(
    api: client.ApiClient, namespaces: Sequence[str], target_dir: Path
) -> Path:
    """Every namespace's evidence plus the node configs into ``target_dir``; never raises."""
    for namespace in namespaces:
        collect_namespace_evidence(api, namespace, target_dir)
    collect_node_configs(api, target_dir)
    return Path(target_dir)


def export_kind_logs(kind_bin: Path, cluster_name: str, target_dir: Path) -> Path:
    """``kind export logs`` into ``target_dir`` once: later calls find the marker and return.

    Meant for one directory per session: the node journals cover every test,
    so one copy is enough, and a second export after a failure (cluster gone)
    would only cost another timeout. The marker is claimed before exporting
    (exclusive create), so concurrent callers do not export twice, and then
    says how the export ended. Never raises; failures go to
    ``target_dir/errors.txt``.
    """
    target_dir = Path(target_dir)
    errors = _Errors(target_dir)
    marker = target_dir / KIND_LOGS_MARKER
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
        with marker.open("x", encoding="utf-8") as claim:
            claim.write(f"started {datetime.now(UTC).isoformat(timespec='seconds')}\n")
    except FileExistsError:
        return target_dir
    except OSError as error:
        errors.record(f"kind export logs {cluster_name}: marker", error)
        return target_dir
    outcome = "failed (see errors.txt)"
    with errors.guard(f"kind export logs {cluster_name}"):
        run(
            [str(kind_bin), "export", "logs", str(target_dir), "--name", cluster_name],
            timeout=KIND_EXPORT_LOGS_TIMEOUT,
        )
        outcome = "exported"
    with (
        errors.guard(f"kind export logs {cluster_name}: marker"),
        marker.open("a", encoding="utf-8") as out,
    ):
        out.write(f"{outcome} {datetime.now(UTC).isoformat(timespec='seconds')}\n")
    return target_dir


# --- explain: one line a human reads first on a CI failure page -------------

# The two spellings of a restart failure: WorkerVerdict.failures
# ("expected 2s (accepting up to 3.5s), measured 6.200s: ...") and the JUnit
# message ("expected 2s, measured 6.200s, bound 3.5s: ..."). Worker names are
# plain words, which keeps a pytest "E   " prefix out of the name.
_RESTART: Final = re.compile(
    r"(?P<worker>[\w.-]+): restart (?P<n>\d+): expected (?P<expected>[\d.]+)s"
    r"(?: \(accepting up to (?P<bound_a>[\d.]+)s\))?, "
    r"(?:measured (?P<measured>[\d.]+)s|not measured)"
    r"(?:, bound (?P<bound_b>[\d.]+)s)?: (?P<reason>[^\n]*)"
)
_RUN: Final = re.compile(r"^run (?P<status>interrupted|error|failed)(?:: (?P<reason>.*))?$")
_NOTHING_RECORDED: Final = re.compile(r"(?P<worker>[\w.-]+): no container attempt")


@dataclass(frozen=True)
class _Rule:
    """A reason fragment and what it means for a reader."""

    pattern: re.Pattern[str]
    meaning: str


# Checked in order against a restart failure's reason; the verdict lists its
# problems with the most telling first, so the first match is the headline.
_RESTART_RULES: Final = (
    _Rule(re.compile(r"^too late"), "the kubelet restarted later than its backoff allows"),
    _Rule(
        re.compile(r"^too early"),
        "the kubelet restarted before its backoff had passed (a shorter curve than the "
        "live config implies)",
    ),
    _Rule(
        re.compile(r"never recorded|no recorded finish"),
        "an attempt was not recorded, so the delay could not be measured: a recorder "
        "problem, not a kubelet verdict",
    ),
    _Rule(
        re.compile(r"the kubelet reported a"),
        "the kubelet announced a different back-off than the model expects: its live "
        "config or the model is off",
    ),
)

# Failures that are not restart checks: setup and infrastructure.
_OTHER_RULES: Final = (
    _Rule(
        re.compile(r"live kubelet config differs from the profile"),
        "a worker's kubelet does not run its profile: the cluster config did not reach "
        "the node (recreate the cluster)",
    ),
    _Rule(
        re.compile(r"did not become Ready"),
        "the cluster never became Ready: an infrastructure problem, see kind-logs",
    ),
    _Rule(
        re.compile(r"not every worker showed enough restarts"),
        "the observation timed out before every worker reached the restarts it needs",
    ),
    _Rule(
        re.compile(r"ImagePullBackOff|ErrImageNeverPull|ErrImagePull"),
        "the workload image was not in the node: it must be loaded with `kind load`",
    ),
)


def explain(summary_or_failure_text: RunSummary | str) -> str:
    """A short line saying what a failure means, for a JUnit message or terminal.

    Takes a run summary or failure text (a verdict or JUnit message, a
    HarnessError, pytest's output); explains the first failure it recognises
    and says how many more there are. Pure.
    """
    if isinstance(summary_or_failure_text, RunSummary):
        return _explain_summary(summary_or_failure_text)
    lines = [line.strip() for line in summary_or_failure_text.splitlines() if line.strip()]
    explained = [e for e in (_explain_line(line) for line in lines) if e is not None]
    if explained:
        return _with_more(explained[0], len(explained) - 1)
    if not lines:
        return "no failure message"
    return _shorten(lines[0])


def _explain_summary(summary: RunSummary) -> str:
    if summary.passed:
        return f"{summary.run_id}: passed: every worker restarted on its curve"
    explained = [_explain_line(message) or message for message in summary.failures]
    if summary.status in ("interrupted", "error"):
        run_line = _explain_line(f"run {summary.status}: {summary.reason}".rstrip(": "))
        explained.insert(0, run_line or summary.reason)
    if not explained:
        return f"{summary.run_id}: {summary.status}: nothing was judged"
    return _with_more(explained[0], len(explained) - 1)


def _explain_line(line: str) -> str | None:
    restart = _RESTART.search(line)
    if restart:
        return _explain_restart(restart)
    nothing = _NOTHING_RECORDED.search(line)
    if nothing:
        return (
            f"{nothing['worker']}: no restart was recorded: the pod never ran or the "
            "recorder saw nothing (see the pod's events in the evidence)"
        )
    run_case = _RUN.match(line)
    if run_case:
        reason = run_case["reason"] or ""
        meaning = _meaning(_OTHER_RULES, reason)
        if run_case["status"] == "interrupted":
            headline = "the run was interrupted before every worker was observed"
        elif run_case["status"] == "error":
            headline = "the run ended in an error, not a verdict"
        else:
            headline = "the run judged nothing"
        return f"{headline}: {meaning or reason or 'no reason given'}"
    return _meaning(_OTHER_RULES, line)


def _explain_restart(match: re.Match[str]) -> str:
    expected = float(match["expected"])
    bound_text = match["bound_a"] or match["bound_b"]
    bound = f"{float(bound_text):.1f}s" if bound_text else "?"
    measured = f"measured {float(match['measured']):.1f}s" if match["measured"] else "not measured"
    reason = match["reason"]
    meaning = _meaning(_RESTART_RULES, reason) or reason
    return (
        f"{match['worker'].strip()}: restart {match['n']} {measured}, "
        f"allowed {expected:.1f}..{bound}: {meaning}"
    )


def _meaning(rules: Sequence[_Rule], text: str) -> str | None:
    return next((rule.meaning for rule in rules if rule.pattern.search(text)), None)


def _with_more(line: str, more: int) -> str:
    if more <= 0:
        return line
    return f"{line} (and {more} more failure{'s' if more > 1 else ''})"


def _shorten(line: str, limit: int = 200) -> str:
    return line if len(line) <= limit else line[: limit - 3] + "..."
