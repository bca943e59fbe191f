"""Create, reuse, check and delete the harness's kind clusters.

kind is run directly (:mod:`crashloop_harness.cluster.kindcreate`), always the
project's own kind and kubectl binaries (pytest-kind's ``KindCluster`` is handed
out only where a suite asks for it, with the ``kind`` extra). A cluster is
reused only when every node carries the config hash of the requested spec and
runs the requested image; a cluster whose containers stopped is recreated. A
failed or interrupted creation deletes what it made unless the caller asks to
keep it.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes import client

from crashloop_harness.cluster.evidence import collect_failure_evidence
from crashloop_harness.cluster.info import ClusterInfo
from crashloop_harness.cluster.kindconfig import (
    config_hash_label,
    render_kind_config_yaml,
    write_worker_patches,
)
from crashloop_harness.cluster.kindcreate import create_cluster
from crashloop_harness.cluster.kindkubelets import KindKubelets
from crashloop_harness.cluster.kindlogs import export_kind_logs
from crashloop_harness.cluster.kube import (
    NodeStatus,
    api_client,
    wait_nodes_ready,
    wait_system_pods_ready,
    worker_nodes,
)
from crashloop_harness.cluster.kubeletswap import read_node_kubelet
from crashloop_harness.cluster.liveconfig import (
    NodeConfigRow,
    check_live_configs,
    live_config_rows,
)
from crashloop_harness.cluster.nodecontainers import (
    moved_nodes,
    node_container_ips,
    node_containers,
)
from crashloop_harness.cluster.profiles import ClusterSpec
from crashloop_harness.cluster.reusehealth import (
    api_refusal,
    control_plane_uptime,
    reuse_health_wait,
)
from crashloop_harness.cluster.runnamespace import clear_leftover_runs, create_run_namespace
from crashloop_harness.cluster.target import (
    NODE_ACCESS,
    Capabilities,
    NodeRows,
    RunNamespace,
    RunScope,
)
from crashloop_harness.core import pins, timeouts
from crashloop_harness.core.conventions import CONFIG_HASH_LABEL
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.paths import state_dir
from crashloop_harness.core.proc import run
from crashloop_harness.core.progress import Progress
from crashloop_harness.substrate.engine import engine_cgroup_v1, ensure_engine
from crashloop_harness.substrate.kindbin import ensure_kind
from crashloop_harness.substrate.nodeselect import choose_node_image, kubectl_for
from crashloop_harness.substrate.workloadimage import ensure_image, load_into

# Multi-node kind clusters run out of inotify instances at distro defaults.
_INOTIFY_MINIMUMS = {
    "/proc/sys/fs/inotify/max_user_watches": 524288,
    "/proc/sys/fs/inotify/max_user_instances": 512,
}


@dataclass(frozen=True)
class Cluster:
    """A running cluster and how to reach it."""

    name: str
    kubeconfig: Path
    kind_bin: Path
    kubectl_bin: Path
    image: str
    spec: ClusterSpec
    created: bool  # False when an existing cluster was reused

    def api(self) -> client.ApiClient:
        return api_client(self.kubeconfig)

    # What a run asks of it (crashloop_harness.cluster.target.RunTarget): worker profiles,
    # node containers to read kubelets in, kind's own logs.

    @property
    def capabilities(self) -> Capabilities:
        return NODE_ACCESS

    def node_rows(
        self, api: client.ApiClient, progress: Progress, *, require_profiles: bool
    ) -> NodeRows:
        """Each worker's live config against its profile, and which kubelet binary it runs
        (the summary says so of a swapped one above all)."""
        rows = live_config_rows(api, self.spec)
        if require_profiles:
            check_live_configs(rows)
        rows = [dataclasses.replace(row, binary=read_node_kubelet(row.node)) for row in rows]
        for row in rows:
            if row.binary is not None and row.binary.swapped is not None:
                progress(f"{row.node} runs a swapped kubelet: {row.binary.swapped}")
        return NodeRows(rows, worker_nodes(api))

    def profile_of(self, subject: str) -> str | None:
        return self.spec.worker(subject).profile.name

    def profile_names(self) -> frozenset[str] | None:
        return frozenset(worker.profile.name for worker in self.spec.workers)

    def ready_image(self, progress: Progress) -> str:
        progress("workload image")
        image = ensure_image()
        load_into(self.name, self.kind_bin, image)
        return image

    def run_namespace(
        self, api: client.ApiClient, what: str, run_id: str, progress: Progress
    ) -> RunNamespace:
        """A fresh one, once namespaces of runs whose owner is gone are removed."""
        clear_leftover_runs(api, progress)
        return RunNamespace(create_run_namespace(api, what, run_id), owned=True)

    def place(self, manifest: dict[str, Any], subject: str) -> dict[str, Any]:
        del subject  # the pods select their worker by its label already
        return manifest

    def kubelets_at_start(self, api: client.ApiClient, nodes: Sequence[str]) -> KindKubelets:
        return KindKubelets.read(api, nodes)

    def gather_evidence(
        self, api: client.ApiClient, namespace: str, into: Path, *, run: RunScope
    ) -> None:
        # The run's namespace is its own, and kind's logs hold every node.
        collect_failure_evidence(api, [namespace], into, silent=run.silent)
        export_kind_logs(self.kind_bin, self.name, into / "kind-logs")

    def describe(self, rows: Sequence[NodeConfigRow]) -> ClusterInfo:
        return ClusterInfo(
            name=self.name,
            node_image=self.image,
            kubernetes_version=self.spec.kubernetes.version,
            kubelets=tuple(row.binary for row in rows if row.binary is not None),
            kind_version=pins.KIND_VERSION,
        )


def host_is_cgroup_v1() -> bool:
    """Whether kind's nodes get cgroup v1: the engine's host (or VM) decides, not ours."""
    return engine_cgroup_v1()


def raise_inotify_limits() -> None:
    """Raise (never lower) the inotify limits when running as root."""
    for path, minimum in _INOTIFY_MINIMUMS.items():
        try:
            if int(Path(path).read_text()) < minimum:
                Path(path).write_text(str(minimum))
        except OSError:
            # Not root or not writable: kind may still work with fewer nodes.
            continue


def kubeconfig_path(name: str) -> Path:
    return state_dir() / f"{name}.kubeconfig"


def kind_clusters(kind_bin: Path) -> list[str]:
    return run([str(kind_bin), "get", "clusters"], timeout=timeouts.TOOL_QUERY).split()


def _export_kubeconfig(kind_bin: Path, name: str, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600, exist_ok=True)
    run(
        [str(kind_bin), "export", "kubeconfig", "--name", name, "--kubeconfig", str(path)],
        timeout=timeouts.TOOL_QUERY,
    )
    os.chmod(path, 0o600)
    return path


def delete(
    name: str, progress: Progress, *, kind_bin: Path | None = None, kubeconfig: Path | None = None
) -> None:
    kind_bin = kind_bin or ensure_kind()
    kubeconfig = kubeconfig or kubeconfig_path(name)
    if name in kind_clusters(kind_bin):
        progress(f"deleting cluster {name}")
        run(
            [str(kind_bin), "delete", "cluster", "--name", name, "--kubeconfig", str(kubeconfig)],
            timeout=timeouts.CLUSTER_DELETE,
        )
    kubeconfig.unlink(missing_ok=True)


def _reuse_problem(
    cluster_name: str, spec: ClusterSpec, image: str, statuses: list[NodeStatus]
) -> str:
    """Why an existing cluster must not be reused, or '' when it may."""
    wanted = config_hash_label(spec)
    for status in statuses:
        found = status.labels.get(CONFIG_HASH_LABEL, "(none)")
        if found != wanted:
            return (
                f"cluster {cluster_name} was created from a different config "
                f"(node {status.name} has {CONFIG_HASH_LABEL}={found}, {spec.path} gives {wanted})"
            )
    images = {node_image for _state, node_image in node_containers(cluster_name).values()}
    if images != {image}:
        return f"cluster {cluster_name} runs {', '.join(sorted(images))}, not {image}"
    return ""


def _reuse(
    spec: ClusterSpec, image: str, kind_bin: Path, kubeconfig: Path, progress: Progress
) -> bool:
    """Reuse a running cluster made from this config; recreate one that is not healthy.

    A cluster whose containers were restarted (a restarted docker engine, a
    rebooted machine) may have new addresses its certificates and its Node
    objects do not carry: it is deleted when it does not become Ready within
    REUSE_HEALTH, or when a node's address moved. An API server that refuses
    connections gets REUSE_HEALTH from its container's start, not from now.
    A healthy cluster made from another config is an error, never replaced
    silently.
    """
    name = spec.name
    _export_kubeconfig(kind_bin, name, kubeconfig)
    api = api_client(kubeconfig)
    refusal = api_refusal(api)
    uptime = control_plane_uptime(name) if refusal else None
    wait = reuse_health_wait(refusal, uptime)
    if wait <= 0:
        since = f"{uptime:.0f}s after" if uptime is not None else "at an unknown time since"
        progress(
            f"cluster {name} is not healthy (its API server does not answer, {since} its "
            f"control-plane container started: {refusal}); recreating"
        )
        delete(name, progress, kind_bin=kind_bin, kubeconfig=kubeconfig)
        return False
    try:
        statuses = wait_nodes_ready(api, 1 + len(spec.workers), timeout=wait)
    except HarnessError as error:
        progress(f"cluster {name} is not healthy ({error.problem.splitlines()[0]}); recreating")
        delete(name, progress, kind_bin=kind_bin, kubeconfig=kubeconfig)
        return False
    moved = moved_nodes(statuses, node_container_ips([status.name for status in statuses]))
    if moved:
        progress(
            f"cluster {name}'s nodes have new addresses since they joined ({'; '.join(moved)}); "
            "recreating"
        )
        delete(name, progress, kind_bin=kind_bin, kubeconfig=kubeconfig)
        return False
    problem = _reuse_problem(name, spec, image, statuses)
    if problem:
        raise HarnessError(problem, "run `crashloop up --recreate` to delete and recreate it")
    wait_system_pods_ready(api)
    progress(f"reusing cluster {name}")
    # A swapped kubelet stays until restored: never reuse such a node as a clean one silently.
    for status in statuses:
        kubelet = read_node_kubelet(status.name)
        if kubelet.swapped is not None:
            progress(
                f"node {status.name} runs a swapped kubelet ({kubelet.swapped}); "
                "`crashloop kubelet --restore` puts the image's back"
            )
    return True


def up(
    spec: ClusterSpec,
    progress: Progress,
    *,
    image: str | None = None,
    recreate: bool = False,
    reuse: bool = True,
    keep_on_failure: bool = False,
    kind_bin: Path | None = None,
    kubeconfig: Path | None = None,
) -> Cluster:
    """Create the cluster described by ``spec`` or reuse a matching one; wait until Ready."""
    progress("docker engine")
    ensure_engine()
    raise_inotify_limits()
    progress("kind binary")
    kind_bin = kind_bin or ensure_kind()
    progress("node image")
    node_image = choose_node_image(progress, image, spec.kubernetes)
    kubectl_bin = kubectl_for(node_image)
    name = spec.name
    expected_nodes = 1 + len(spec.workers)
    kubeconfig = kubeconfig or kubeconfig_path(name)

    if name in kind_clusters(kind_bin):
        states = {state for state, _image in node_containers(name).values()}
        if recreate or not reuse:
            delete(name, progress, kind_bin=kind_bin, kubeconfig=kubeconfig)
        elif states != {"running"}:
            progress(
                f"cluster {name} has stopped containers ({', '.join(sorted(states))}); recreating"
            )
            delete(name, progress, kind_bin=kind_bin, kubeconfig=kubeconfig)
        else:
            reused = _reuse(spec, node_image, kind_bin, kubeconfig, progress)
            if reused:
                return Cluster(
                    name, kubeconfig, kind_bin, kubectl_bin, node_image, spec, created=False
                )

    patches_root = state_dir() / "patches" / name
    write_worker_patches(spec, patches_root)
    config_file = state_dir() / f"{name}.kind.yaml"
    config_file.write_text(
        render_kind_config_yaml(spec, patches_root.resolve(), cgroup_v1=host_is_cgroup_v1())
    )
    cluster = Cluster(name, kubeconfig, kind_bin, kubectl_bin, node_image, spec, created=True)
    progress(f"creating cluster {name} ({expected_nodes} nodes) from {node_image}")
    create_log = state_dir() / f"{name}.create.log"
    try:
        create_cluster(
            kind_bin,
            name,
            kubeconfig=kubeconfig,
            image=node_image,
            config_file=config_file,
            log=create_log,
        )
        os.chmod(kubeconfig, 0o600)
        api = cluster.api()
        progress("waiting for every node to be Ready")
        wait_nodes_ready(api, expected_nodes)
        progress("waiting for kube-system to be Ready")
        wait_system_pods_ready(api)
    except BaseException as error:
        if keep_on_failure:
            progress(f"keeping the failed cluster {name}: KUBECONFIG={kubeconfig}")
        else:
            delete(name, progress, kind_bin=kind_bin, kubeconfig=kubeconfig)
        if isinstance(error, Exception) and not isinstance(error, HarnessError):
            raise HarnessError(f"creating cluster {name} failed: {error}") from error
        raise
    return cluster
