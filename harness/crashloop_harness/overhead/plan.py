"""The overhead sweep's plan: what to measure, checked before anything is created.

First against the cluster spec alone (an unknown worker, a pod count no node
takes, a window too short to see one capped restart, a negative warm-up),
then against the live nodes (each worker's maxPods and the pods already
there) before the first pod is made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from kubernetes import client

from crashloop_harness.cluster.kube import node_configz, worker_nodes
from crashloop_harness.cluster.lifecycle import Cluster
from crashloop_harness.cluster.liveconfig import live_config_rows
from crashloop_harness.cluster.profiles import ClusterSpec
from crashloop_harness.core import timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.model.backoff import BackoffCurve

# A baseline's window: running pods' cost holds steady (0.069 and 0.070 cores in
# two runs).
BASELINE_WINDOW_S: Final = 60.0
# The share of a cap a crashing window adds beyond it, so that one capped restart fits.
CAP_MARGIN: Final = 1.1
# A crashing cell's window when none is given, unless its cap needs longer. A
# minute left the figures to chance: the fast worker at 108 pods swings between
# 13 and 43 QPS from one 10 s reading to the next, and in a window of one 60 s
# cap each reduced pod restarts about once, so whether the restarts bunch in it
# or spread out (the kubelet requeues each 0-30 s past its back-off) decided a
# peak of 8 QPS in one run and 15 in the next.
CRASHING_WINDOW_S: Final = 180.0
DEFAULT_WARMUP_S: Final = 30.0
DEFAULT_PODS: Final = "0,10,30,60,full"
DEFAULT_WORKERS: Final = "fast,reduced,default"
FULL: Final = "full"
# The kubelet's maxPods when its config does not set one.
DEFAULT_MAX_PODS: Final = 110


@dataclass(frozen=True)
class WorkerTarget:
    """One worker of the sweep: its node, its live curve, and how many pods still fit."""

    worker: str
    node: str
    curve: BackoffCurve
    max_pods: int
    pods_there: int

    @property
    def room(self) -> int:
        return max(self.max_pods - self.pods_there, 0)


@dataclass(frozen=True)
class OverheadPlan:
    """What the sweep will do, checked before anything is created."""

    targets: tuple[WorkerTarget, ...]
    pods: tuple[int, ...]
    warmup_s: float
    windows_s: Mapping[str, float]  # worker -> its window
    baseline_worker: str

    def cells(self) -> list[tuple[WorkerTarget, int, bool]]:
        """(target, pods, crashing): per pod count its baseline, then each worker's
        crashing cell; no crashing cell of zero pods.

        A ratio's two sides are so measured minutes apart, not an hour: with every
        baseline first, one sweep's kubelet cost 0.112 cores for 108 running pods
        (0.067-0.082 in seven other runs) an hour before the crashing cells, and
        every ratio divided by it; whatever loaded the node then was gone by them.

        The baseline's own worker comes second, so that with three workers no
        cell follows one on its own node: a cell's pods are made once its node is
        rid of the cell before, and the other nodes' teardown runs beside its climb.
        """
        base = next(t for t in self.targets if t.worker == self.baseline_worker)
        others = [t for t in self.targets if t is not base]
        crashing = [*others[:1], base, *others[1:]]
        order: list[tuple[WorkerTarget, int, bool]] = []
        for n in self.pods:
            order.append((base, n, False))
            order += [(t, n, True) for t in crashing if n > 0]
        return order


def window_for(curve: BackoffCurve, duration_s: float | None) -> float:
    """The window of one crashing cell: given (one capped restart must fit), or
    CRASHING_WINDOW_S, or one cap plus a margin where that is longer."""
    needed = curve.maximum.total_seconds() * CAP_MARGIN
    if duration_s is None:
        return max(CRASHING_WINDOW_S, needed)
    if duration_s < needed:
        raise HarnessError(
            f"--duration {duration_s:g}s is too short to see one capped restart on a worker "
            f"whose back-off caps at {curve.maximum.total_seconds():g}s",
            f"use --duration {needed:.0f} or more, or leave it out (each worker's window is "
            f"then {CRASHING_WINDOW_S:.0f}s, or its cap plus {CAP_MARGIN - 1:.0%} where that "
            "is longer)",
        )
    return duration_s


def parse_pod_counts(text: str) -> list[int | None]:
    """``0,10,30,full`` -> [0, 10, 30, None] (None: as many as the node takes)."""
    counts: list[int | None] = []
    for item in (part.strip() for part in text.split(",")):
        if item == FULL:
            counts.append(None)
            continue
        try:
            value = int(item)
        except ValueError:
            value = -1
        if value < 0:
            raise HarnessError(
                f"--pods {text!r}: {item!r} is not a pod count",
                f"give counts such as {DEFAULT_PODS} (whole numbers, or {FULL!r}: as many "
                "as the node takes)",
            )
        counts.append(value)
    if not counts:
        raise HarnessError("--pods is empty", f"give counts such as {DEFAULT_PODS}")
    return counts


@dataclass(frozen=True)
class OverheadRequest:
    """The sweep asked for, checked against the cluster spec alone (nothing exists yet)."""

    workers: tuple[str, ...]
    counts: tuple[int | None, ...]  # None: as many as fit
    duration_s: float | None
    warmup_s: float


def check_overhead_request(
    spec: ClusterSpec,
    *,
    workers: Sequence[str],
    pods: str,
    duration_s: float | None,
    warmup_s: float,
) -> OverheadRequest:
    """Every refusal that needs no cluster: before one is created or a pod made."""
    known = [w.name for w in spec.workers]
    unknown = [w for w in workers if w not in known]
    if unknown or not workers:
        raise HarnessError(
            f"unknown worker(s) {unknown}" if unknown else "no worker to measure",
            f"choose from {', '.join(known)} (--workers fast,reduced,default)",
        )
    if warmup_s < 0:
        raise HarnessError(f"--warmup {warmup_s:g}s is negative", "give 0 or more seconds")
    counts = parse_pod_counts(pods)
    for count in counts:
        if count is not None and count > DEFAULT_MAX_PODS:
            raise HarnessError(
                f"{count} pods do not fit one node (the kubelet's maxPods is {DEFAULT_MAX_PODS}, "
                "and its node's own pods take some)",
                f"use at most {DEFAULT_MAX_PODS}, or {FULL!r} for as many as fit",
            )
    for worker in workers:
        window_for(spec.worker(worker).curve, duration_s)
    return OverheadRequest(tuple(workers), tuple(counts), duration_s, warmup_s)


def plan_overhead(
    api: client.ApiClient, cluster: Cluster, request: OverheadRequest
) -> OverheadPlan:
    """The sweep on the live nodes, or a HarnessError: a count that does not fit a node."""
    rows = {row.worker: row for row in live_config_rows(api, cluster.spec) if row.worker}
    nodes = worker_nodes(api)
    targets = tuple(_target(api, w, nodes[w], rows[w].curve) for w in request.workers)
    least_room = min(t.room for t in targets)
    for target in targets:
        for count in request.counts:
            if count is not None and count > target.room:
                raise HarnessError(
                    f"{count} pods do not fit worker {target.worker} (node {target.node}: "
                    f"maxPods {target.max_pods}, {target.pods_there} pods there already)",
                    f"use at most {target.room}, or {FULL!r} for as many as fit",
                )
    resolved = tuple(sorted({least_room if c is None else c for c in request.counts}))
    windows = {t.worker: window_for(t.curve, request.duration_s) for t in targets}
    return OverheadPlan(
        targets=targets,
        pods=resolved,
        warmup_s=request.warmup_s,
        windows_s=windows,
        baseline_worker=targets[0].worker,
    )


def _target(api: client.ApiClient, worker: str, node: str, curve: BackoffCurve) -> WorkerTarget:
    config = node_configz(api, node).get("kubeletconfig", {})
    max_pods = int(config.get("maxPods", DEFAULT_MAX_PODS))
    there = client.CoreV1Api(api).list_pod_for_all_namespaces(
        field_selector=f"spec.nodeName={node},status.phase!=Succeeded,status.phase!=Failed",
        _request_timeout=timeouts.API_REQUEST,
    )
    return WorkerTarget(worker, node, curve, max_pods, len(there.items))
