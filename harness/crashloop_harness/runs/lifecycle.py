"""What every measured run (the check, the scenarios) shares, in one place.

At the start: the live configs checked against the profiles, the
worker-to-node map, a run directory, the workload image loaded into the
cluster, a fresh restricted namespace and a recorder writing into the run
directory. After: the run's summary of its cluster, and the clean-up. How a
run ended (its kubelets and engine against the start, evidence) is
:mod:`crashloop_harness.runs.ending`.
"""

from __future__ import annotations

import dataclasses
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from kubernetes import client

from crashloop_harness.cluster.kube import (
    create_namespace,
    delete_namespace,
    force_delete_pods,
    node_statuses,
)
from crashloop_harness.cluster.kubeletswap import NodeKubelet, read_node_kubelet
from crashloop_harness.cluster.lifecycle import Cluster, check_live_configs, live_config_rows
from crashloop_harness.cluster.liveconfig import NodeConfigRow
from crashloop_harness.cluster.remote import (
    RemoteCluster,
    live_rows,
)
from crashloop_harness.core import pins, timeouts
from crashloop_harness.core.conventions import RUN_LABEL, WORKER_LABEL
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.paths import runs_dir
from crashloop_harness.core.progress import Progress
from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.outputs.junit import write_junit
from crashloop_harness.outputs.summary import ClusterInfo, RunSummary
from crashloop_harness.outputs.summaryfile import write_summary
from crashloop_harness.recording.apirecorder import ApiRecorder
from crashloop_harness.recording.norecorder import NoRecorder
from crashloop_harness.recording.observercost import ObserverCost
from crashloop_harness.recording.recorder import AttemptRecorder, Observer, Recorder
from crashloop_harness.recording.scope import RecordingScope
from crashloop_harness.runs import leftovers
from crashloop_harness.substrate.workloadimage import ensure_image, load_into


@dataclass(kw_only=True)
class RunState:
    """Where a measured run is and why; shared by the check and the scenario runs.

    Kept even when the run is interrupted: whatever was measured is judged
    and written with the state it ended in.
    """

    run_id: str
    run_dir: Path
    status: str = "running"
    reason: str = ""
    recorder_errors: list[str] = field(default_factory=list)
    # What observing the run cost; set when the recorder stops.
    observer: ObserverCost | None = None
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    finished_at: datetime | None = None

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclass(frozen=True)
class RunSetup:
    api: client.ApiClient
    rows: list[NodeConfigRow]
    nodes: dict[str, str]  # worker -> node
    curves: dict[str, BackoffCurve]  # worker -> curve of its live kubelet config
    run_id: str
    run_dir: Path
    image: str
    namespace: str
    recorder: AttemptRecorder
    # False when the run uses a namespace prepared for it (an existing
    # cluster's least-privilege set-up): only its pods are deleted afterwards.
    owns_namespace: bool = True


LATEST: Final = "latest"


def new_run_dir(what: str) -> tuple[str, Path]:
    """A new run directory, named by time, kind and a random suffix.

    runs/latest moves to it only when it is finished (:func:`point_latest_at`):
    a reader of runs/latest never finds a half-written run.
    """
    run_id = f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-{what}-{uuid.uuid4().hex[:4]}"
    path = runs_dir() / run_id
    path.mkdir(parents=True)
    return run_id, path


def publish(run_dir: Path, summary: RunSummary) -> RunSummary:
    """summary.json and junit.xml in the run directory, which runs/latest then names."""
    write_summary(run_dir, summary)
    write_junit(run_dir, summary)
    point_latest_at(run_dir)
    return summary


def point_latest_at(run_dir: Path) -> None:
    """Move the ``latest`` link beside ``run_dir`` to it, atomically (a reader never misses it)."""
    link = run_dir.parent / LATEST
    staging = run_dir.parent / f".{LATEST}.{uuid.uuid4().hex[:8]}"
    staging.symlink_to(run_dir.name, target_is_directory=True)
    os.replace(staging, link)


def worker_nodes(api: client.ApiClient) -> dict[str, str]:
    """worker name -> node name, from the nodes' worker labels."""
    return {
        status.labels[WORKER_LABEL]: status.name
        for status in node_statuses(api)
        if WORKER_LABEL in status.labels
    }


Target = Cluster | RemoteCluster


def prepare_run(
    cluster: Target,
    what: str,
    progress: Progress,
    *,
    require_profiles: bool = True,
    observer: Observer | None = "events",
) -> RunSetup:
    """Everything a run needs before its pods are created; fails before creating any.

    ``require_profiles=False`` lets a kubelet run another config than its
    profile (the caller judges against curves of its own; the rows still say
    where they differ). ``observer=None``: the run records nothing as a whole
    (the overhead sweep records each cell itself). An existing cluster
    (:class:`RemoteCluster`) has no profiles: each selected node is judged
    against its own live config, its attempts recorded from the API alone.
    """
    api = cluster.api()
    if isinstance(cluster, RemoteCluster):
        chosen = [s for s in node_statuses(api) if s.name in cluster.nodes]
        rows = live_rows(api, chosen)
        nodes = {status.name: status.name for status in chosen}
        observer = "selfreport"
    else:
        rows = live_config_rows(api, cluster.spec)
        if require_profiles:
            check_live_configs(rows)
        # Which binary each kubelet is, so the summary can say (a swapped one most of all).
        rows = [dataclasses.replace(row, binary=read_node_kubelet(row.node)) for row in rows]
        for row in rows:
            if row.binary is not None and row.binary.swapped is not None:
                progress(f"{row.node} runs a swapped kubelet: {row.binary.swapped}")
        nodes = worker_nodes(api)
    curves = {row.worker: row.curve for row in rows if row.worker is not None}
    run_id, run_dir = new_run_dir(what)
    owns_namespace = True
    if isinstance(cluster, RemoteCluster):
        image = cluster.workload_image
        if cluster.namespace is not None:
            namespace, owns_namespace = cluster.namespace, False
            refuse_busy_namespace(api, namespace)
        else:
            namespace = _run_namespace(api, what, run_id)
    else:
        progress("workload image")
        image = ensure_image()
        load_into(cluster.name, cluster.kind_bin, image)
        clear_leftover_runs(api, progress)
        namespace = _run_namespace(api, what, run_id)
    progress(f"run {run_id}: namespace {namespace}, records in {run_dir}")
    node_workers = {node: worker for worker, node in nodes.items()}
    scope = RecordingScope(api, namespace, run_id, run_dir, node_workers)
    recorder: AttemptRecorder
    if observer is None:
        recorder = NoRecorder()
    elif observer == "selfreport":
        recorder = ApiRecorder(scope)
    else:
        recorder = Recorder(scope, observer=observer)
    return RunSetup(
        api, rows, nodes, curves, run_id, run_dir, image, namespace, recorder, owns_namespace
    )


def _run_namespace(api: client.ApiClient, what: str, run_id: str) -> str:
    return create_namespace(
        api,
        f"crashloop-{what.split('-', maxsplit=1)[0]}",
        labels=leftovers.run_labels(run_id),
        annotations=leftovers.run_annotations(),
    )


def refuse_busy_namespace(api: client.ApiClient, namespace: str) -> None:
    """A prepared namespace must hold no pods of another run: they would load its nodes."""
    try:
        pods = client.CoreV1Api(api).list_namespaced_pod(
            namespace, label_selector=RUN_LABEL, _request_timeout=timeouts.API_REQUEST
        )
    except client.ApiException as error:
        if error.status == 404:
            raise HarnessError(
                f"namespace {namespace} does not exist",
                "create it with its role "
                "(harness/crashloop_harness/resources/rbac/crashloop-check.yaml), or "
                "leave --namespace out to let the check create one",
            ) from error
        raise HarnessError(
            f"cannot list pods in namespace {namespace}: {error.status} {error.reason}",
            "grant the check's role in it "
            "(harness/crashloop_harness/resources/rbac/crashloop-check.yaml)",
        ) from error
    runs = sorted({pod.metadata.labels.get(RUN_LABEL, "") for pod in pods.items})
    if runs:
        raise HarnessError(
            f"namespace {namespace} still holds pods of run {', '.join(runs)}",
            f"wait for that run, or delete them: kubectl -n {namespace} delete pods -l {RUN_LABEL}",
        )


def clear_leftover_runs(api: client.ApiClient, progress: Progress) -> None:
    """Remove run namespaces whose owner is gone; refuse to start beside a live run.

    Their crash-looping pods would load the workers and skew every delay.
    """
    listed = client.CoreV1Api(api).list_namespace(
        label_selector=RUN_LABEL, _request_timeout=timeouts.API_REQUEST
    )
    found = [
        ns
        for item in listed.items
        if (
            ns := leftovers.from_metadata(
                item.metadata.name,
                item.metadata.labels,
                item.metadata.annotations,
                item.status.phase if item.status else "",
            )
        )
        is not None
    ]
    decision = leftovers.classify(found, me=leftovers.owner_of_this_process())
    if decision.busy:
        raise HarnessError(
            "another run is measuring on this cluster: "
            + ", ".join(f"{ns.name} (run {ns.run_id}, owner {ns.owner})" for ns in decision.busy),
            "wait for it to finish, or stop it; if its owner is gone, "
            "`kubectl delete namespace NAME` with the harness's kubeconfig",
        )
    for ns in decision.remove:
        progress(
            f"removing namespace {ns.name} left by run {ns.run_id} (owner {ns.owner or 'unknown'} "
            "is gone): its crash-looping pods would skew this run's delays"
        )
        delete_namespace(api, ns.name)


def cluster_info(cluster: Target, rows: Sequence[NodeConfigRow]) -> ClusterInfo:
    """The cluster as a run's summary names it; an existing one by its kubelets' versions."""
    if isinstance(cluster, RemoteCluster):
        versions = sorted({row.kubelet_version for row in rows if row.kubelet_version})
        return ClusterInfo(
            name=cluster.name,
            node_image="-",
            kubernetes_version=", ".join(versions) or "-",
            # Each node's kubelet as its Node object reports it; its binary is out of reach.
            kubelets=tuple(NodeKubelet(row.node, row.kubelet_version or "-", "-") for row in rows),
        )
    return ClusterInfo(
        name=cluster.name,
        node_image=cluster.image,
        kubernetes_version=cluster.spec.kubernetes.version,
        kubelets=tuple(row.binary for row in rows if row.binary is not None),
        kind_version=pins.KIND_VERSION,
    )


def clean_up(
    api: client.ApiClient, namespace: str, engine_gone: str | None, *, owns_namespace: bool = True
) -> None:
    """Delete the run's pods at once, then its namespace, unless the engine is gone.

    Pods on a node whose kubelet stopped would otherwise hold the namespace
    in Terminating until the node is declared lost (minutes); a run's pods
    hold nothing worth a grace period.
    """
    if engine_gone is None:
        force_delete_pods(api, namespace)
        if owns_namespace:
            delete_namespace(api, namespace)
