"""A check's results kept where the cluster keeps things: a ConfigMap per run, an Event per node.

A nightly that runs inside the cluster (crashloop_harness.pods.nightly) leaves its run
directory in an emptyDir that goes with its pod. What a reader needs the next morning stays:
summary.json and junit.xml in a ConfigMap of the check's namespace, labelled so the newest
are found and the oldest pruned (``crashloop fleet --collect`` reads them), and a Warning
Event on each node judged failed or left without an answer (in the ``default`` namespace,
where the API server keeps a Node's Events), where `kubectl describe node` shows it to
whoever looks at that node.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from kubernetes import client

from crashloop_harness.core import timeouts
from crashloop_harness.outputs.summary import RunSummary, WorkerSummary

RESULT_LABEL: Final = "crashloop.harness/result"
STATUS_LABEL: Final = "crashloop.harness/status"
RUN_ANNOTATION: Final = "crashloop.harness/run-id"
SUMMARY_FILE: Final = "summary.json"
JUNIT_FILE: Final = "junit.xml"
# A ConfigMap holds at most 1 MiB; this leaves the object's own metadata room.
MAX_DATA_BYTES: Final = 900_000
# Runs kept in the namespace, newest first: two weeks of nightlies.
RUNS_KEPT: Final = 14
# What an Event's message may hold (the API server refuses longer ones).
EVENT_MESSAGE_MAX: Final = 1024
COMPONENT: Final = "crashloop-harness"
# An Event about a cluster-scoped object (a Node) lives in this namespace: the API server
# refuses any other, and the kubelet writes its own node Events there.
NODE_EVENTS_NAMESPACE: Final = "default"


def bounded_data(summary_json: str, junit_xml: str | None) -> dict[str, str]:
    """The files a ConfigMap keeps, within its size: the JUnit goes first, then the summary is
    cut to its verdict (status, reason, each worker's pass) with a note saying so."""
    return bounded_files(
        SUMMARY_FILE,
        summary_json,
        junit_xml,
        cut=_summary_verdict,
        cut_words="summary.json cut to its verdict and junit.xml left out: over the "
        "ConfigMap's size; the whole run is in the pod's run directory while it lives",
    )


def bounded_files(
    name: str,
    text: str,
    junit_xml: str | None,
    *,
    cut: Callable[[dict[str, Any]], dict[str, Any]],
    cut_words: str,
) -> dict[str, str]:
    """``name`` and junit.xml as a ConfigMap keeps them, within its size: the JUnit left out
    first, then ``name`` cut (its parsed JSON through ``cut``), each said in ``truncated``."""
    data = {name: text}
    if junit_xml is not None:
        data[JUNIT_FILE] = junit_xml
    if data_size(data) <= MAX_DATA_BYTES:
        return data
    data.pop(JUNIT_FILE, None)
    if data_size(data) <= MAX_DATA_BYTES:
        data["truncated"] = "junit.xml left out: over the ConfigMap's size"
        return data
    return {name: json.dumps(cut(json.loads(text)), indent=2), "truncated": cut_words}


def _summary_verdict(whole: dict[str, Any]) -> dict[str, Any]:
    cut: dict[str, Any] = {
        key: whole.get(key)
        for key in ("schema_version", "run_id", "status", "passed", "reason")
        if key in whole
    }
    cut["workers"] = [
        {"worker": w.get("worker"), "node": w.get("node"), "passed": w.get("passed")}
        for w in whole.get("workers", [])
    ]
    return cut


def data_size(data: dict[str, str]) -> int:
    return sum(len(key) + len(value.encode()) for key, value in data.items())


def configmap_name(run_id: str) -> str:
    """A ConfigMap's name for a run: a DNS subdomain, lower case."""
    return f"crashloop-result-{run_id.lower()}"[:253]


def keep_results(api: client.ApiClient, namespace: str, run_dir: Path, summary: RunSummary) -> str:
    """The run's ConfigMap written, older ones pruned to RUNS_KEPT, an Event on each node
    failed or unjudged; returns the ConfigMap's name."""
    core = client.CoreV1Api(api)
    junit = run_dir / "junit.xml"
    data = bounded_data(
        (run_dir / "summary.json").read_text(), junit.read_text() if junit.is_file() else None
    )
    name = write_result(core, namespace, summary.run_id, summary.status, data)
    for node, workers in not_passed_by_node(summary.workers).items():
        _node_event(core, node, workers, summary.run_id)
    return name


def write_result(
    core: client.CoreV1Api, namespace: str, run_id: str, status: str, data: dict[str, str]
) -> str:
    """One run's ConfigMap, labelled to be found and pruned; older ones pruned to RUNS_KEPT."""
    name = configmap_name(run_id)
    body = client.V1ConfigMap(
        metadata=client.V1ObjectMeta(
            name=name,
            labels={RESULT_LABEL: "true", STATUS_LABEL: status},
            annotations={RUN_ANNOTATION: run_id},
        ),
        data=data,
    )
    core.create_namespaced_config_map(namespace, body, _request_timeout=timeouts.API_REQUEST)
    prune(core, namespace)
    return name


def not_passed_by_node(workers: Sequence[WorkerSummary]) -> dict[str, list[WorkerSummary]]:
    """Each node's subjects that did not pass (its bare container's first): one Event each."""
    by_node: dict[str, list[WorkerSummary]] = {}
    for worker in workers:
        if not worker.passed:
            by_node.setdefault(worker.node, []).append(worker)
    return by_node


def prune(core: client.CoreV1Api, namespace: str, kept: int = RUNS_KEPT) -> list[str]:
    """Delete all but the newest ``kept`` results; returns the names deleted."""
    found = core.list_namespaced_config_map(
        namespace, label_selector=f"{RESULT_LABEL}=true", _request_timeout=timeouts.API_REQUEST
    ).items
    gone = [m.metadata.name for m in oldest_first(found)[: max(0, len(found) - kept)]]
    for old in gone:
        core.delete_namespaced_config_map(old, namespace, _request_timeout=timeouts.API_REQUEST)
    return gone


def oldest_first(maps: Sequence[client.V1ConfigMap]) -> list[client.V1ConfigMap]:
    return sorted(maps, key=lambda m: (m.metadata.creation_timestamp, m.metadata.name))


def event_words(workers: Sequence[WorkerSummary]) -> tuple[str, str]:
    """The Event's reason and message for a node whose subjects did not pass: failed when
    any failure is the kubelet's, unjudged when every one is an error."""
    failed = any(not worker.in_error for worker in workers)
    reason = "CrashLoopBackOffCheckFailed" if failed else "CrashLoopBackOffUnjudged"
    worker = workers[0]
    first = (worker.failures or worker.problems or ("no failure recorded",))[0]
    # A failure's words name their subject already ("fast: restart 3: ..."); a node's Event
    # names it once.
    message = first if first.startswith(f"{worker.worker}:") else f"{worker.worker}: {first}"
    if len(workers) > 1:
        others = ", ".join(w.worker for w in workers[1:])
        message = f"{message} (not passed beside it on this node: {others})"
    return reason, fit_event(message)


def fit_event(message: str) -> str:
    """A message cut to what the API server takes in an Event."""
    if len(message) > EVENT_MESSAGE_MAX:
        return message[: EVENT_MESSAGE_MAX - 1] + "…"
    return message


def _node_event(
    core: client.CoreV1Api, node: str, workers: Sequence[WorkerSummary], run_id: str
) -> None:
    reason, message = event_words(workers)
    node_event(core, node, reason, message, run_id)


def node_event(core: client.CoreV1Api, node: str, reason: str, message: str, run_id: str) -> None:
    """A Warning Event on ``node`` that `kubectl describe node` shows."""
    message = fit_event(message)
    now = datetime.now(UTC)
    event = client.CoreV1Event(
        metadata=client.V1ObjectMeta(generate_name=f"crashloop-{node}-"),
        # A node's uid in its Events is its name, as the kubelet writes them: `kubectl
        # describe node` finds them so.
        involved_object=client.V1ObjectReference(
            kind="Node", name=node, uid=node, api_version="v1"
        ),
        reason=reason,
        message=message,
        type="Warning",
        source=client.V1EventSource(component=COMPONENT),
        first_timestamp=now,
        last_timestamp=now,
        count=1,
        reporting_component=COMPONENT,
        reporting_instance=run_id[:128],
    )
    core.create_namespaced_event(
        NODE_EVENTS_NAMESPACE, event, _request_timeout=timeouts.API_REQUEST
    )
