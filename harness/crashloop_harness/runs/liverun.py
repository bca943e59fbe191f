"""A scenario run as its scenarios see it: the RunView over the API and the nodes.

The workload's own logs live in each pod's emptyDir. On the harness's own
cluster they are read from the node's disk (``docker exec <node> cat
/var/lib/kubelet/pods/<uid>/volumes/kubernetes.io~empty-dir/records/<file>``)
before the namespace is deleted, so nothing needs ``kubectl exec`` into a
shell-less image. On an existing cluster (a kubeconfig alone) the container
that keeps a file also echoes it on its stdout, read through ``pods/log``,
and every pod is bound to its node by name.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Final

from kubernetes import client

from crashloop_harness.cluster.kubeletapi import kubelet_get
from crashloop_harness.cluster.kubeletstate import KubeletProcess, KubeletRestart, restart_kubelet
from crashloop_harness.cluster.nodecommand import run_in_node
from crashloop_harness.cluster.target import NODE_ACCESS, Capabilities
from crashloop_harness.core import timeouts
from crashloop_harness.core.conventions import ROLE_LABEL, WORKER_LABEL
from crashloop_harness.core.errors import HarnessError, first_line
from crashloop_harness.pods.skeleton import MAIN_CONTAINER
from crashloop_harness.recording.recorder import AttemptRecorder
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.scenarios.common import LivePod


def _as_placed(manifest: dict[str, Any], _node: str) -> dict[str, Any]:
    """A kind cluster's pods select their worker by its label already."""
    return manifest


_EMPTY_DIR: Final = "/var/lib/kubelet/pods/{uid}/volumes/kubernetes.io~empty-dir/records/{file}"


@dataclass
class LiveRun:
    """The run as its scenarios see it: a :class:`~crashloop_harness.scenarios.common.RunView`."""

    core: client.CoreV1Api
    namespace: str
    run_id: str
    image: str
    nodes: dict[str, str]
    recorder: AttemptRecorder
    # Set when the run ends: the scenarios' own work stops (this run's own).
    stopping: threading.Event = field(default_factory=threading.Event)
    # Set by the caller to end the whole observation early (never set here).
    interrupt: threading.Event = field(default_factory=threading.Event)
    errors: list[str] = field(default_factory=list)
    # What the cluster lets the run do besides its API (crashloop_harness.cluster.target):
    # without a node command, files are read from pods/log, no kubelet is restarted.
    capabilities: Capabilities = NODE_ACCESS
    # The cluster's own way of binding a manifest to a subject's node.
    place: Callable[[dict[str, Any], str], dict[str, Any]] = _as_placed
    kubelet_versions: dict[str, str] = field(default_factory=dict)  # worker -> version
    # node -> the kubelet process a restart this run made started (restart_kubelet).
    kubelets_restarted: dict[str, KubeletProcess] = field(default_factory=dict)

    def attempts(self) -> list[AttemptRecord]:
        return self.recorder.attempts()

    def wait_for_change(self, timeout: float) -> None:
        self.recorder.wait_for_change(timeout=timeout)

    def pods(self, role: str) -> list[LivePod]:
        listed = self._list_pods(role)
        # A replay answers the scenarios with what the run answered them.
        self.recorder.trace.write("view", op="pods", role=role, pods=[asdict(p) for p in listed])
        return listed

    def _list_pods(self, role: str) -> list[LivePod]:
        try:
            found = self.core.list_namespaced_pod(
                self.namespace,
                label_selector=f"{ROLE_LABEL}={role}",
                _request_timeout=timeouts.API_REQUEST,
            ).items
        except client.ApiException as error:
            self.problem(f"listing {role} pods: {error.status} {error.reason}")
            return []
        return [live for pod in found if (live := self._live_pod(pod)) is not None]

    def read_pod_file(self, pod: LivePod, file: str) -> str | None:
        """A file of the pod's records emptyDir, read from the node's disk; None if absent."""
        text = self._read_pod_file(pod, file)
        self.recorder.trace.write("view", op="file", pod=pod.name, file=file, text=text)
        return text

    def _read_pod_file(self, pod: LivePod, file: str) -> str | None:
        if not self.capabilities.node_command:
            return self._read_echoed(pod, file)
        node = self.nodes[pod.worker]
        try:
            return run_in_node(
                node,
                ["cat", _EMPTY_DIR.format(uid=pod.uid, file=file)],
                timeout=timeouts.API_REQUEST,
            )
        except HarnessError as error:
            self.problem(f"reading {file} of pod {pod.name} on {node}: {first_line(error)}")
            return None

    def _read_echoed(self, pod: LivePod, file: str) -> str | None:
        """The lines of ``file`` its main container echoed on stdout, as the file holds them."""
        try:
            log = self.core.read_namespaced_pod_log(
                pod.name,
                self.namespace,
                container=MAIN_CONTAINER,
                _request_timeout=timeouts.API_REQUEST,
            )
        except client.ApiException as error:
            self.problem(f"reading {file} of {pod.name}: pods/log {error.status} {error.reason}")
            return None
        return "".join(line + "\n" for line in echoed_lines(log, file))

    def create_object(self, manifest: dict[str, Any]) -> None:
        """Create a Pod or a StatefulSet of the run (bound to its node on an existing cluster)."""
        kind, name = manifest["kind"], manifest["metadata"]["name"]
        node = self.nodes[manifest["metadata"]["labels"][WORKER_LABEL]]
        self.recorder.trace.write("view", op="create", object=kind, name=name)
        manifest = self.place(manifest, node)
        try:
            if kind == "Pod":
                self.core.create_namespaced_pod(self.namespace, manifest)
            elif kind == "StatefulSet":
                self._apps().create_namespaced_stateful_set(self.namespace, manifest)
            else:
                raise HarnessError(
                    f"a scenario asked for a {kind}", "scenarios deploy Pods or StatefulSets"
                )
        except client.ApiException as error:
            raise HarnessError(
                f"creating {kind} {name}: {error.status} {_api_message(error)}",
                "see the run's evidence for the API server's state",
            ) from error

    def delete_statefulset(self, name: str) -> None:
        """Delete the StatefulSet, orphaning its pods: they stay, to be read and ended."""
        self.recorder.trace.write("view", op="delete", object="StatefulSet", name=name)
        try:
            self._apps().delete_namespaced_stateful_set(
                name, self.namespace, propagation_policy="Orphan"
            )
        except client.ApiException as error:
            raise HarnessError(
                f"deleting StatefulSet {name}: {error.status} {error.reason}",
                "see the run's evidence for the API server's state",
            ) from error

    def _apps(self) -> client.AppsV1Api:
        return client.AppsV1Api(self.core.api_client)

    def delete_pod(self, name: str) -> int:
        """Delete the pod at once; when the request went (host clock, ns)."""
        sent_ns = time.time_ns()
        self.recorder.trace.write("view", op="delete", object="Pod", name=name, sent_ns=sent_ns)
        try:
            self.core.delete_namespaced_pod(name, self.namespace, grace_period_seconds=0)
        except client.ApiException as error:
            raise HarnessError(
                f"deleting pod {name}: {error.status} {error.reason}",
                "see the run's evidence for the API server's state",
            ) from error
        return sent_ns

    def restart_kubelet(self, worker: str) -> KubeletRestart:
        """Restart ``worker``'s kubelet (``systemctl restart`` in its node container), then wait
        until it answers /healthz through the API server; its new process is this run's own
        doing from then on, not a reason to end the run."""
        if not self.capabilities.restart_kubelet:
            raise self.capabilities.refusal(
                "restart a kubelet", "run the scenario on the harness's own cluster"
            )
        node = self.nodes[worker]

        def answers() -> bool:
            return kubelet_get(self.core.api_client, node, "healthz").strip() == b"ok"

        restart = restart_kubelet(node, answers)
        if restart.after is not None:
            self.kubelets_restarted[node] = restart.after
        self.recorder.trace.write("view", op="restart_kubelet", worker=worker, **asdict(restart))
        return restart

    def problem(self, text: str) -> None:
        self.errors.append(text)

    def _live_pod(self, pod: Any) -> LivePod | None:
        worker = next((w for w, n in self.nodes.items() if n == pod.spec.node_name), None)
        if worker is None:
            return None
        conditions = pod.status.conditions or []
        statuses = pod.status.container_statuses or []
        return LivePod(
            name=pod.metadata.name,
            uid=pod.metadata.uid,
            worker=worker,
            ready=any(c.type == "Ready" and c.status == "True" for c in conditions),
            restart_counts={s.name: int(s.restart_count or 0) for s in statuses},
            phase=pod.status.phase or "",
            api_started_ns={
                s.name: int(s.state.running.started_at.timestamp()) * 1_000_000_000
                for s in statuses
                if s.state and s.state.running and s.state.running.started_at
            },
        )


def _api_message(error: client.ApiException) -> str:
    """The API server's own message (a validation error names the field), else the reason."""
    try:
        message = json.loads(error.body or "{}").get("message")
    except (ValueError, AttributeError):
        message = None
    return str(message or error.reason)


def echoed_lines(log: str, file: str) -> list[str]:
    """The events of ``file`` in a container log, as the file's own lines (pure).

    The workload echoes each line of a record file as ``{"file": F, "event":
    E, "unix_ns": T}``; anything else in the log (stderr, other files) is not
    part of it.
    """
    lines = []
    for line in log.splitlines():
        try:
            raw = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(raw, dict) and raw.get("file") == file:
            lines.append(json.dumps({"event": raw.get("event"), "unix_ns": raw.get("unix_ns")}))
    return lines
