"""`crashloop fleet` on two kind clusters, through ServiceAccount kubeconfigs alone.

Cluster one: five workers in three pools, two at a 2 s max (one of them running
a kept kubelet mutant that ignores its max), two on the reduced curve (one
cordoned), one at the default. Cluster two: two workers at a 5 s max, a value
no shipped profile uses. One kubeconfig holds a context for each, each with the
check's ServiceAccount token only, and a third context whose cluster does not
answer. The plan must find four groups in two clusters; the fleet must name the
mutant's node the outlier of a sound pool and pass every other group, in about
the time of its slowest group; Ctrl-C's twin SIGTERM must leave no pod in any
cluster; one cluster's API server stopped mid-run must make that cluster an
error while the other is still judged; and a user without the role is refused
before anything is created.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from crashloop_harness.cluster.kube import worker_nodes
from crashloop_harness.cluster.kubeletput import put_image_kubelet_back, put_kubelet
from crashloop_harness.cluster.lifecycle import Cluster
from crashloop_harness.core import timeouts
from crashloop_harness.core.conventions import RUN_LABEL
from crashloop_harness.core.polling import poll_true
from crashloop_harness.core.proc import run as run_command
from crashloop_harness.core.resources import CLUSTERS_DIR
from crashloop_harness.fleet.plan import POOL_LABELS, ZONE_LABEL
from crashloop_harness.fleet.summary import FleetSummary, read_fleet_summary
from crashloop_harness.plugin import read_cluster_options, session_cluster
from crashloop_harness.substrate.kubeletbuild import kubelet_from_patch
from crashloop_harness.substrate.mutantset import mutant_set
from tests.e2e.accounts import (
    NAMESPACE,
    Access,
    account_token,
    cli_env,
    crashloop_argv,
    grant_check_role,
    run_without_docker,
    write_kubeconfig,
    write_unreachable_kubeconfig,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

POOL = POOL_LABELS[-1]  # node.kubernetes.io/pool: no cloud's, so set by the test
ONE, TWO = "fleet-one", "fleet-two"
# worker -> (profile, pool, zone) in cluster one; cluster two's workers share one pool.
ONE_WORKERS = {
    "fast-a": ("fast", "fast", "z1"),
    "fast-b": ("fast", "fast", "z2"),
    "reduced-a": ("reduced", "reduced", "z1"),
    "reduced-b": ("reduced", "reduced", "z2"),
    "default-a": ("default", "default", "z1"),
}
TWO_WORKERS = {"five-a": ("five", "five", "z1"), "five-b": ("five", "five", "z2")}
FIVE_S_PROFILE = """\
# A 5 s cap: a value no shipped profile uses (KEP-5593's field, its gate on).
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
featureGates:
  KubeletCrashLoopBackOffMax: true
crashLoopBackOff:
  maxContainerRestartPeriod: 5s
"""


def _say(message: str) -> None:
    print(f"[fleet] {message}")


def _spec(where: Path, name: str, workers: dict[str, tuple[str, str, str]]) -> Path:
    profiles = where / "profiles"
    if not profiles.exists():
        shutil.copytree(CLUSTERS_DIR / "profiles", profiles)
        (profiles / "five.yaml").write_text(FIVE_S_PROFILE)
    spec = where / f"{name}.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": f"crashloop-e2e-{name}",
                "profilesDir": "profiles",
                "workers": [{"name": w, "profile": p} for w, (p, _, _) in workers.items()],
            },
            sort_keys=False,
        )
    )
    return spec


def _label(cluster: Cluster, workers: dict[str, tuple[str, str, str]]) -> dict[str, str]:
    """Pool and zone labels on every worker, as a cloud would set them; worker -> node."""
    api = cluster.api()
    nodes = worker_nodes(api)
    for worker, (_, pool, zone) in workers.items():
        labels = {"metadata": {"labels": {POOL: pool, ZONE_LABEL: zone}}}
        client.CoreV1Api(api).patch_node(nodes[worker], labels)
    cluster.ready_image(_say)
    return nodes


def _cluster(
    request: pytest.FixtureRequest, where: Path, name: str, workers: dict[str, tuple[str, str, str]]
) -> Iterator[Cluster]:
    options = read_cluster_options(request.config, str(_spec(where, name, workers)))
    yield from session_cluster(request, options)


@pytest.fixture(scope="module")
def fleet_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fleet")


@pytest.fixture(scope="module")
def cluster_one(request: pytest.FixtureRequest, fleet_dir: Path) -> Iterator[Cluster]:
    yield from _cluster(request, fleet_dir, ONE, ONE_WORKERS)


@pytest.fixture(scope="module")
def cluster_two(request: pytest.FixtureRequest, fleet_dir: Path) -> Iterator[Cluster]:
    yield from _cluster(request, fleet_dir, TWO, TWO_WORKERS)


@dataclass(frozen=True)
class Fleet:
    kubeconfig: Path
    one: Cluster
    two: Cluster
    one_nodes: dict[str, str]  # worker -> node
    two_nodes: dict[str, str]
    mutant_node: str


def _docker_stats(cluster: Cluster) -> str:
    """CPU and memory of every node container of ``cluster`` (kind names each container after
    its node), as docker reports them now."""
    nodes = client.CoreV1Api(cluster.api()).list_node().items
    return run_command(
        [
            "docker",
            "stats",
            "--no-stream",
            "--format",
            "{{.Name}} {{.CPUPerc}} {{.MemUsage}}",
            *sorted(node.metadata.name for node in nodes),
        ],
        timeout=timeouts.DOCKER_RUN,
    ).strip()


@pytest.fixture(scope="module")
def fleet(cluster_one: Cluster, cluster_two: Cluster, fleet_dir: Path) -> Iterator[Fleet]:
    """Both clusters labelled and granted the check's role; the mutant in the first 2 s node
    a one-node-per-group plan chooses (so a re-run is what clears its pool); one reduced
    node cordoned; the fleet's kubeconfig with an unreachable third context."""
    one_nodes, two_nodes = _label(cluster_one, ONE_WORKERS), _label(cluster_two, TWO_WORKERS)
    core_one = client.CoreV1Api(cluster_one.api())
    core_one.patch_node(one_nodes["reduced-b"], {"spec": {"unschedulable": True}})
    accesses = []
    for context, cluster in ((ONE, cluster_one), (TWO, cluster_two)):
        grant_check_role(cluster.api())
        accesses.append(Access(context, cluster.kubeconfig, account_token(cluster.api())))
    kubeconfig = write_kubeconfig(fleet_dir / "fleet.kubeconfig", accesses)
    gone = write_unreachable_kubeconfig(fleet_dir / "gone.kubeconfig")
    # The first of the 2 s pool by name: the node a plan of one node per group chooses.
    mutant_node = min(one_nodes["fast-a"], one_nodes["fast-b"])
    (mutant,) = [m for m in mutant_set(cluster_one.spec.kubernetes) if m.name == "max-ignored"]
    kubelet = kubelet_from_patch(mutant.patch, cluster_one.spec.kubernetes)
    for cluster in (cluster_one, cluster_two):
        _say(f"{cluster.name} idle, cpu and memory per node:\n{_docker_stats(cluster)}")
    put_kubelet(cluster_one, mutant_node, kubelet, _say)
    try:
        yield Fleet(
            Path(f"{kubeconfig}:{gone}"),
            cluster_one,
            cluster_two,
            one_nodes,
            two_nodes,
            mutant_node,
        )
    finally:
        put_image_kubelet_back(cluster_one, mutant_node, _say)


def _fleet_argv(fleet: Fleet, *more: str) -> list[str]:
    return ["fleet", "--kubeconfig", str(fleet.kubeconfig), "--namespace", NAMESPACE, *more]


def test_the_plan_finds_four_groups_in_two_clusters(fleet: Fleet, tmp_path: Path) -> None:
    done = run_without_docker([*_fleet_argv(fleet), "--plan", "-o", "json"], tmp_path)
    assert done.returncode == 1, done.stderr  # the third context does not answer
    plan = json.loads(done.stdout)
    groups = {(g["cluster"], g["max_s"]): g for g in plan["groups"]}
    assert sorted(groups) == [(ONE, 2.0), (ONE, 60.0), (ONE, 300.0), (TWO, 5.0)], groups
    assert sorted(groups[(ONE, 2.0)]["nodes"]) == sorted(
        [fleet.one_nodes["fast-a"], fleet.one_nodes["fast-b"]]
    )
    assert groups[(ONE, 2.0)]["pools"] == ["fast"]
    # The mutant ignores its max, but its /configz says 2 s: it is in the 2 s group.
    assert fleet.mutant_node in groups[(ONE, 2.0)]["chosen"]
    assert groups[(ONE, 60.0)]["nodes"] == [fleet.one_nodes["reduced-a"]]
    skipped = {(s["cluster"], s["node"]): s["why"] for s in plan["skipped"]}
    assert skipped[(ONE, fleet.one_nodes["reduced-b"])].startswith("cordoned")
    assert plan["unreachable"].keys() == {"gone"}
    assert "4 groups in 3 clusters" in done.stderr


def _pods_of_runs(cluster: Cluster) -> list[str]:
    listed = client.CoreV1Api(cluster.api()).list_namespaced_pod(
        NAMESPACE, label_selector=RUN_LABEL, _request_timeout=timeouts.API_REQUEST
    )
    return [pod.metadata.name for pod in listed.items]


def _latest_fleet(runs: Path) -> FleetSummary:
    return read_fleet_summary(runs / "latest")


def test_the_fleet_names_the_mutant_node_an_outlier_and_passes_every_other_group(
    fleet: Fleet, tmp_path: Path
) -> None:
    done = run_without_docker([*_fleet_argv(fleet), "-o", "json"], tmp_path)
    print(done.stderr)
    assert done.returncode == 1, done.stderr
    summary = _latest_fleet(tmp_path)
    verdicts = {(g.cluster, g.max_s): g for g in summary.groups}
    two_s = verdicts[(ONE, 2.0)]
    assert two_s.verdict == "outlier", two_s.words
    assert two_s.outliers == (fleet.mutant_node,)
    assert f"node {fleet.mutant_node}: failed (others in its group sound" in two_s.words
    others = [g for key, g in verdicts.items() if key != (ONE, 2.0)]
    assert [g.verdict for g in others] == ["passed"] * 3, [g.words for g in others]
    clusters = {c.cluster: c.verdict for c in summary.clusters}
    assert clusters == {ONE: "failed", TWO: "passed", "gone": "error"}
    # Every group's check keeps its own run directory, beside the fleet's.
    for group in summary.groups:
        for checked in group.rounds:
            assert (Path(checked.run_dir) / "summary.json").is_file(), checked
    ratio = summary.wall_s / summary.slowest_group_s
    _say(
        f"wall {summary.wall_s:.0f}s, slowest group {summary.slowest_group_s:.0f}s "
        f"(ratio {ratio:.2f}), one after the other {summary.groups_sum_s:.0f}s"
    )
    # At once, not one after the other: four groups cost well under their sum.
    assert summary.wall_s < summary.groups_sum_s / 2, summary
    assert _pods_of_runs(fleet.one) == []
    assert _pods_of_runs(fleet.two) == []


def _wait_for_pods(cluster: Cluster, process: subprocess.Popen[str]) -> None:
    started = poll_true(
        lambda: process.poll() is not None or bool(_pods_of_runs(cluster)),
        within=timeouts.POD_RUNNING,
    )
    assert started, f"no check pod on {cluster.name} within {timeouts.POD_RUNNING:.0f}s"
    assert process.poll() is None, f"the fleet ended before {cluster.name} had a check pod"


def _popen_fleet(fleet: Fleet, runs: Path, *more: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        crashloop_argv(_fleet_argv(fleet, *more)),
        env=cli_env(runs),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_sigterm_deletes_every_pod_the_fleet_made_in_every_cluster(
    fleet: Fleet, tmp_path: Path
) -> None:
    process = _popen_fleet(fleet, tmp_path)
    try:
        _wait_for_pods(fleet.one, process)
        _wait_for_pods(fleet.two, process)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=timeouts.CHECK_SUBPROCESS)
    finally:
        if process.poll() is None:
            process.kill()
    print(err)
    assert process.returncode == 130, err
    assert _pods_of_runs(fleet.one) == []
    assert _pods_of_runs(fleet.two) == []
    assert _latest_fleet(tmp_path).verdict == "interrupted"


HALF = "crashloop-half"


# The cluster-wide roles of `crashloop rbac`: the nodes, and their kubelets through the proxy.
READ_ROLES = ("crashloop-check-nodes", "crashloop-check-node-proxy")


def _grant_reads_only(api: client.ApiClient) -> None:
    """A ServiceAccount that may read the nodes and their kubelets, not run the check's pods:
    the ClusterRoles of the rbac files, not the Role in the namespace."""
    client.CoreV1Api(api).create_namespaced_service_account(
        NAMESPACE, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name=HALF))
    )
    subject = client.RbacV1Subject(kind="ServiceAccount", name=HALF, namespace=NAMESPACE)
    rbac = client.RbacAuthorizationV1Api(api)
    for role in READ_ROLES:
        rbac.create_cluster_role_binding(
            client.V1ClusterRoleBinding(
                metadata=client.V1ObjectMeta(name=f"{HALF}-{role}"),
                role_ref=client.V1RoleRef(
                    api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=role
                ),
                subjects=[subject],
            )
        )


def _revoke_reads_only(api: client.ApiClient) -> None:
    for role in READ_ROLES:
        client.RbacAuthorizationV1Api(api).delete_cluster_role_binding(f"{HALF}-{role}")
    client.CoreV1Api(api).delete_namespaced_service_account(HALF, NAMESPACE)


def test_a_user_without_the_role_is_refused_before_anything_is_created(
    fleet: Fleet, tmp_path: Path
) -> None:
    """Cluster two's user reads nodes but may not run pods: the whole fleet is refused, the
    role named, and neither cluster gets a pod or a namespace."""
    _grant_reads_only(fleet.two.api())
    try:
        kubeconfig = write_kubeconfig(
            tmp_path / "half.kubeconfig",
            [
                Access(ONE, fleet.one.kubeconfig, account_token(fleet.one.api())),
                Access(TWO, fleet.two.kubeconfig, account_token(fleet.two.api(), HALF)),
            ],
        )
        before = {c.name: _namespaces(c) for c in (fleet.one, fleet.two)}
        argv = ["fleet", "--kubeconfig", str(kubeconfig), "--namespace", NAMESPACE]
        done = run_without_docker(argv, tmp_path)
        print(done.stderr)
        assert done.returncode == 2, done.stderr
        assert f"context {TWO} may not create pods in namespace {NAMESPACE}" in done.stderr
        named = r"\(roles? [^)]*\bcrashloop-check\b(?!-)[^)]* of `crashloop rbac`\)"
        assert re.search(named, done.stderr), done.stderr
        for cluster in (fleet.one, fleet.two):
            assert _pods_of_runs(cluster) == []
            assert _namespaces(cluster) == before[cluster.name]
    finally:
        _revoke_reads_only(fleet.two.api())


def _namespaces(cluster: Cluster) -> set[str]:
    return {ns.metadata.name for ns in client.CoreV1Api(cluster.api()).list_namespace().items}


def test_a_cluster_whose_api_server_stops_is_its_error_and_the_other_is_judged(
    fleet: Fleet, tmp_path: Path
) -> None:
    process = _popen_fleet(fleet, tmp_path, "--per-group", "1", "-o", "json")
    control_plane = f"{fleet.two.name}-control-plane"
    try:
        _wait_for_pods(fleet.two, process)
        run_command(["docker", "stop", control_plane], timeout=timeouts.DOCKER_RUN)
        _, err = process.communicate(timeout=timeouts.FLEET_SUBPROCESS)
    finally:
        if process.poll() is None:
            process.kill()
        run_command(["docker", "start", control_plane], timeout=timeouts.DOCKER_RUN)
    print(err)
    assert process.returncode == 1, err
    summary = _latest_fleet(tmp_path)
    clusters = {c.cluster: c for c in summary.clusters}
    assert clusters[TWO].verdict == "error", clusters[TWO]
    assert clusters[ONE].verdict == "failed", clusters[ONE]
    two_s = next(g for g in summary.groups if (g.cluster, g.max_s) == (ONE, 2.0))
    # One node per group: the mutant's node alone failed, so it was re-run on the other.
    assert [r.nodes for r in two_s.rounds] == [
        (fleet.mutant_node,),
        tuple(n for n in two_s.checked if n != fleet.mutant_node),
    ]
    assert two_s.verdict == "outlier", two_s.words
    passed = [g.verdict for g in summary.groups if g.cluster == ONE and g.max_s != 2.0]
    assert passed == ["passed", "passed"]
