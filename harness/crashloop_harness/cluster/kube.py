"""The Kubernetes API through the official client: readiness waits and node configs."""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import urllib3
from kubernetes import client, config

from crashloop_harness.cluster.kubeletapi import kubelet_get
from crashloop_harness.core import timeouts
from crashloop_harness.core.conventions import WORKER_LABEL
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.polling import poll_true

# Workloads run at the strictest Pod Security level, as production pods should.
RESTRICTED_NAMESPACE_LABELS = {
    "pod-security.kubernetes.io/enforce": "restricted",
    "pod-security.kubernetes.io/enforce-version": "latest",
}


def api_client(kubeconfig: Path) -> client.ApiClient:
    # new_client_from_config keeps this client apart from the global default,
    # so ~/.kube/config is never read or changed.
    api: client.ApiClient = config.new_client_from_config(config_file=str(kubeconfig))
    return api


@dataclass(frozen=True)
class NodeStatus:
    name: str
    ready: bool
    kubelet_version: str
    labels: dict[str, str]
    # The address the API server uses to reach this node's kubelet (logs, exec, configz).
    internal_ip: str | None = None
    # False for a cordoned node (spec.unschedulable).
    schedulable: bool = True


def node_statuses(api: client.ApiClient) -> list[NodeStatus]:
    nodes = client.CoreV1Api(api).list_node(_request_timeout=timeouts.API_REQUEST).items
    statuses = []
    for node in nodes:
        conditions = node.status.conditions or []
        ready = any(c.type == "Ready" and c.status == "True" for c in conditions)
        statuses.append(
            NodeStatus(
                name=node.metadata.name,
                ready=ready,
                kubelet_version=node.status.node_info.kubelet_version,
                labels=dict(node.metadata.labels or {}),
                internal_ip=next(
                    (a.address for a in node.status.addresses or [] if a.type == "InternalIP"),
                    None,
                ),
                schedulable=not (node.spec is not None and node.spec.unschedulable),
            )
        )
    return sorted(statuses, key=lambda status: status.name)


def unready_system_pods(api: client.ApiClient) -> list[str]:
    """kube-system pods that are not Running with every container ready."""
    pods = (
        client.CoreV1Api(api)
        .list_namespaced_pod("kube-system", _request_timeout=timeouts.API_REQUEST)
        .items
    )
    waiting = []
    for pod in pods:
        statuses = pod.status.container_statuses or []
        if pod.status.phase != "Running" or not statuses or not all(s.ready for s in statuses):
            waiting.append(f"{pod.metadata.name} ({pod.status.phase})")
    return waiting if pods else ["no kube-system pods yet"]


def _wait(what: str, timeout: float, probe: Any) -> None:
    """Poll ``probe`` (returning a list of what is still missing) until it is empty."""
    last: list[str] = []

    def attempt() -> bool:
        nonlocal last
        try:
            last = probe()
        except Exception as error:  # the API may not answer yet while it starts
            last = [f"API error: {error}"]
        return not last

    if not poll_true(attempt, within=timeout):
        raise HarnessError(
            f"{what} within {timeout:.0f}s; still waiting for: {', '.join(last[:8])}",
            "inspect the cluster (`crashloop status`, `kind export logs`) or raise the timeout "
            "in harness/crashloop_harness/core/timeouts.py",
        )


def wait_nodes_ready(
    api: client.ApiClient, expected: int, timeout: float = timeouts.NODES_READY
) -> list[NodeStatus]:
    def missing() -> list[str]:
        statuses = node_statuses(api)
        not_ready = [s.name for s in statuses if not s.ready]
        if len(statuses) < expected:
            not_ready.append(f"{expected - len(statuses)} node(s) not registered")
        return not_ready

    _wait("nodes did not become Ready", timeout, missing)
    return node_statuses(api)


def wait_system_pods_ready(api: client.ApiClient) -> None:
    _wait(
        "kube-system pods did not become Ready",
        timeouts.SYSTEM_PODS_READY,
        lambda: unready_system_pods(api),
    )


def node_configz(api: client.ApiClient, node: str) -> dict[str, Any]:
    """The live kubelet configuration of a node, as /configz returns it."""
    payload: dict[str, Any] = json.loads(kubelet_get(api, node, "configz"))
    return payload


def create_namespace(
    api: client.ApiClient,
    prefix: str,
    *,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    body = client.V1Namespace(
        metadata=client.V1ObjectMeta(
            name=name,
            labels={**RESTRICTED_NAMESPACE_LABELS, **(labels or {})},
            annotations=dict(annotations or {}) or None,
        )
    )
    client.CoreV1Api(api).create_namespace(body)
    return name


def force_delete_pods(api: client.ApiClient, namespace: str, label_selector: str = "") -> None:
    """Remove the pods of a namespace now (grace period 0), whether their kubelets answer or
    not: every pod, or those ``label_selector`` selects.

    Best effort: when the API server is away, the namespace deletion that
    follows retries and removes them.
    """
    with contextlib.suppress(client.ApiException, urllib3.exceptions.HTTPError):
        client.CoreV1Api(api).delete_collection_namespaced_pod(
            namespace,
            grace_period_seconds=0,
            label_selector=label_selector,
            _request_timeout=timeouts.API_REQUEST,
        )


def delete_namespace(api: client.ApiClient, name: str) -> None:
    """Delete a namespace and wait until it is gone.

    The API server may be briefly away (restarting, overloaded): both the
    request and the wait retry until NAMESPACE_GONE rather than leave the
    namespace behind on the first refused connection.
    """
    core = client.CoreV1Api(api)
    requested = False

    def gone() -> bool:
        nonlocal requested
        try:
            if not requested:
                core.delete_namespace(name, grace_period_seconds=0)
                requested = True
            core.read_namespace(name)
        except client.ApiException as error:
            if error.status == 404:
                return True
            if error.status < 500 and error.status != 429:
                raise
        except urllib3.exceptions.HTTPError:
            return False
        return False

    if not poll_true(gone, within=timeouts.NAMESPACE_GONE):
        raise HarnessError(
            f"namespace {name} was not gone within {timeouts.NAMESPACE_GONE:.0f}s",
            f"see `kubectl get namespace {name} -o yaml` (its finalizers and conditions); "
            "`crashloop status` names what is left",
        )


def worker_nodes(api: client.ApiClient) -> dict[str, str]:
    """worker name -> node name, from the nodes' worker labels."""
    return {
        status.labels[WORKER_LABEL]: status.name
        for status in node_statuses(api)
        if WORKER_LABEL in status.labels
    }
