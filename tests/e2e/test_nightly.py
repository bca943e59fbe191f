"""The nightly inside the cluster: the harness's image, run as the CronJob's Job would run it.

The image is built offline and loaded into the kind cluster as a user's registry would serve
it; the chart installs the role and the CronJob (the objects `crashloop cronjob` prints).
A Job is made from the CronJob's template (as `kubectl create job --from=cronjob/...`), and
its pod checks the three workers' kubelets with no kubeconfig: its ServiceAccount alone, in a
namespace that enforces the restricted Pod Security level. The Job's outcome is the verdict.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from crashloop_harness.cluster import lifecycle
from crashloop_harness.cluster.kube import worker_nodes
from crashloop_harness.cluster.kubeconfig import context_names, remote_api
from crashloop_harness.cluster.kubeletapi import DIRECT
from crashloop_harness.cluster.kubeletput import put_image_kubelet_back, put_kubelet
from crashloop_harness.cluster.nodecommand import node_argv, run_in_node
from crashloop_harness.core import timeouts
from crashloop_harness.core.conventions import PROFILE_LABEL, RUN_LABEL
from crashloop_harness.core.polling import poll_true
from crashloop_harness.core.resources import CLUSTERS_DIR
from crashloop_harness.fleet.collect import collect
from crashloop_harness.outputs.clusterresults import RESULT_LABEL, configmap_name, keep_results
from crashloop_harness.outputs.summary import RunSummary
from crashloop_harness.outputs.summaryfile import read_summary, summary_from
from crashloop_harness.plugin import read_cluster_options, session_cluster
from crashloop_harness.pods.nightly import NAME
from crashloop_harness.substrate import harnessimage, workloadimage
from crashloop_harness.substrate.helmbin import ensure_helm
from crashloop_harness.substrate.kubeletbuild import kubelet_from_patch
from crashloop_harness.substrate.mutantset import mutant_set
from tests.e2e.accounts import (
    NAMESPACE,
    Access,
    account_token,
    delete_rbac,
    run_without_docker,
    write_kubeconfig,
)

# Slow tier: the image built (29 s when the code moved) and loaded into every node (10 s a
# node), then a check; the fast tier keeps the in-cluster results through
# test_existing_cluster.py (its check runs with --keep-in-cluster).
pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.crashloop_disruptive]

JOB = "crashloop-nightly-e2e"
RELEASE = "crashloop-nightly"
# kind's kubelets sign their own serving certificates: their CAs, as an admin gathers them.
KUBELET_CAS = "crashloop-kubelet-cas"
SERVICE_ACCOUNT = f"system:serviceaccount:{NAMESPACE}:crashloop-check"
CHART = Path(__file__).resolve().parents[2] / "charts" / "crashloop-nightly"


@dataclass(frozen=True)
class Ended:
    """A nightly Job that ended: its status, its pod, and the pod's log."""

    job: client.V1Job
    pod: client.V1Pod
    log: str


def run_id_of(log: str) -> str:
    found = re.search(r"run (\S+): namespace", log)
    assert found is not None, log[:2000]
    return found.group(1)


def container_args(pod: client.V1Pod) -> list[str]:
    (container,) = pod.spec.containers
    return list(container.args or [])


def _job_from_cronjob(api: client.ApiClient, name: str) -> client.V1Job:
    """A Job from the applied CronJob's own template, as kubectl makes one by hand."""
    applied = client.BatchV1Api(api).read_namespaced_cron_job(NAME, NAMESPACE)
    template = applied.spec.job_template
    return client.V1Job(
        metadata=client.V1ObjectMeta(name=name, namespace=NAMESPACE),
        spec=template.spec,
    )


def install_nightly(cluster: lifecycle.Cluster, api: client.ApiClient) -> list[str]:
    """The chart installed as an admin installs it, on a cluster that never had the role,
    both images in every node as a registry would serve them; helm's argv for the rest."""
    image = harnessimage.ensure_image()
    workload = workloadimage.ensure_image()
    for tag in (image, workload):
        workloadimage.load_into(cluster.name, cluster.kind_bin, tag)
    helm = [str(ensure_helm()), "--kubeconfig", str(cluster.kubeconfig)]
    delete_rbac(api)
    # The chart installs it (test_chart.py holds its objects equal to `crashloop cronjob`'s).
    subprocess.run(
        [
            *helm,
            "install",
            RELEASE,
            str(CHART),
            "--wait",
            "--set-string",
            f"image={image},workloadImage={workload},nodeSelector={PROFILE_LABEL},"
            f"kubeletCAConfigMap={KUBELET_CAS}",
        ],
        check=True,
        capture_output=True,
        timeout=timeouts.TOOL_QUERY,
    )
    _gather_kubelet_cas(api)
    return helm


def uninstall_nightly(helm: list[str], api: client.ApiClient) -> None:
    subprocess.run([*helm, "uninstall", RELEASE], check=False, timeout=timeouts.TOOL_QUERY)
    delete_rbac(api)


@pytest.fixture(scope="module")
def ended(crashloop_cluster: lifecycle.Cluster, crashloop_api: client.ApiClient) -> Iterator[Ended]:
    helm = install_nightly(crashloop_cluster, crashloop_api)
    try:
        yield run_job(crashloop_api, JOB)
    finally:
        uninstall_nightly(helm, crashloop_api)


@pytest.fixture(scope="module")
def second_cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[lifecycle.Cluster]:
    """A second cluster of one worker at the 2 s max, for a fleet of two nightlies."""
    where = tmp_path_factory.mktemp("second")
    shutil.copytree(CLUSTERS_DIR / "profiles", where / "profiles")
    spec = where / "second.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": "crashloop-e2e-second",
                "profilesDir": "profiles",
                "workers": [{"name": "fast", "profile": "fast"}],
            },
            sort_keys=False,
        )
    )
    yield from session_cluster(request, read_cluster_options(request.config, str(spec)))


def _gather_kubelet_cas(api: client.ApiClient) -> None:
    """Each node's self-signed kubelet certificate (and the CA that signed it), read in its
    node container, in one ConfigMap the nightly's pod trusts beside the cluster's CA."""
    core = client.CoreV1Api(api)
    bundle = "".join(
        run_in_node(node.metadata.name, ["cat", "/var/lib/kubelet/pki/kubelet.crt"])
        for node in core.list_node().items
    )
    core.create_namespaced_config_map(
        NAMESPACE,
        client.V1ConfigMap(metadata=client.V1ObjectMeta(name=KUBELET_CAS), data={"ca.crt": bundle}),
    )


def can_i(cluster: lifecycle.Cluster, *argv: str) -> bool:
    """`kubectl auth can-i` as the nightly's ServiceAccount, asked in the control plane."""
    answer = subprocess.run(
        node_argv(
            f"{cluster.name}-control-plane",
            [
                "kubectl",
                "--kubeconfig",
                "/etc/kubernetes/admin.conf",
                "auth",
                "can-i",
                *argv,
                "--as",
                SERVICE_ACCOUNT,
            ],
        ),
        capture_output=True,
        text=True,
        check=False,
        timeout=timeouts.NODE_EXEC,
    )
    assert answer.stdout.strip() in ("yes", "no"), answer.stdout + answer.stderr
    return answer.stdout.strip() == "yes"


def run_job(api: client.ApiClient, name: str) -> Ended:
    """One nightly, as `kubectl create job --from=cronjob/...` starts it, waited to its end."""
    batch = client.BatchV1Api(api)
    core = client.CoreV1Api(api)
    batch.create_namespaced_job(NAMESPACE, _job_from_cronjob(api, name))

    def finished() -> bool:
        status = batch.read_namespaced_job(name, NAMESPACE).status
        return bool(status.succeeded or status.failed)

    assert poll_true(finished, within=timeouts.NIGHTLY_JOB, every=2.0), (
        f"the nightly Job {name} did not end within {timeouts.NIGHTLY_JOB:.0f}s"
    )
    (pod,) = core.list_namespaced_pod(NAMESPACE, label_selector=f"job-name={name}").items
    log = core.read_namespaced_pod_log(pod.metadata.name, NAMESPACE)
    print(log)
    job = batch.read_namespaced_job(name, NAMESPACE)
    end = job.status.completion_time or job.status.conditions[-1].last_transition_time
    print(f"the nightly Job {name} took {(end - job.status.start_time).total_seconds():.0f}s")
    return Ended(job, pod, log)


def test_the_nightly_job_passes_a_sound_kubelet_through_its_service_account(
    ended: Ended,
) -> None:
    assert ended.job.status.succeeded == 1, ended.log[-2000:]
    (container,) = ended.pod.status.container_statuses
    assert container.state.terminated.exit_code == 0
    # The pod was admitted by a namespace that enforces the restricted level, as itself.
    assert ended.pod.spec.security_context.run_as_user == workloadimage.RUN_AS_USER
    # No kubeconfig was handed to it (no argument names one, no volume but its scratch and
    # the kubelets' CAs):
    # its ServiceAccount was its only way in, and the check ran in the role's namespace.
    assert not any("kubeconfig" in arg for arg in container_args(ended.pod))
    mounted = [v.name for v in ended.pod.spec.volumes if v.projected is None]
    assert mounted == ["scratch", "kubelet-ca"]  # its run directory, the kubelets' CAs
    assert f"namespace {NAMESPACE}, records in" in ended.log
    # The log's last line is the verdict's.
    last = ended.log.strip().splitlines()[-1]
    assert last.startswith("PASSED: "), last


def test_the_service_account_reads_kubelets_without_the_node_proxy_or_exec(
    ended: Ended, crashloop_cluster: lifecycle.Cluster, crashloop_api: client.ApiClient
) -> None:
    """What the nightly was granted, as `kubectl auth can-i` answers for its ServiceAccount,
    and the route its passing run took to every judged kubelet: direct, each read its own
    subresource, never the node proxy (the whole kubelet API) nor exec."""
    assert not can_i(crashloop_cluster, "get", "nodes", "--subresource=proxy")
    assert not can_i(crashloop_cluster, "create", "pods", "--subresource=exec", "-A")
    assert not can_i(crashloop_cluster, "create", "pods", "--subresource=exec", "-n", NAMESPACE)
    for subresource in ("configz", "metrics", "pods"):
        assert can_i(crashloop_cluster, "get", "nodes", f"--subresource={subresource}")
    summary = _kept_summary(crashloop_api, run_id_of(ended.log))
    judged = set(worker_nodes(crashloop_api).values())
    assert summary.cluster.kubelet_access == dict.fromkeys(judged, DIRECT)
    assert f"kubelets read: {len(judged)} direct" in ended.log


def _kept_summary(api: client.ApiClient, run_id: str) -> RunSummary:
    kept = client.CoreV1Api(api).read_namespaced_config_map(configmap_name(run_id), NAMESPACE)
    return summary_from(json.loads(kept.data["summary.json"]))


def test_the_nightly_s_pod_ran_on_a_node_it_did_not_measure(
    ended: Ended, crashloop_api: client.ApiClient
) -> None:
    node = client.CoreV1Api(crashloop_api).read_node(ended.pod.spec.node_name)
    assert PROFILE_LABEL not in node.metadata.labels, ended.pod.spec.node_name


def test_the_fleet_collects_the_run_the_cluster_kept(
    ended: Ended, crashloop_cluster: lifecycle.Cluster
) -> None:
    (context,) = context_names(crashloop_cluster.kubeconfig)
    (kept,) = collect(crashloop_cluster.kubeconfig, [context], NAMESPACE)
    assert kept.missing is None, kept.missing
    assert kept.status == "passed"
    assert kept.run_id is not None
    assert kept.run_id in ended.log


def test_the_fleet_collects_two_clusters_nightlies_into_one_report(
    ended: Ended,
    crashloop_cluster: lifecycle.Cluster,
    crashloop_api: client.ApiClient,
    second_cluster: lifecycle.Cluster,
    tmp_path: Path,
) -> None:
    """A second cluster runs its own nightly; `crashloop fleet --collect`, through each
    cluster's ServiceAccount token, reads both clusters' newest kept runs into one report
    and runs nothing itself."""
    api_two = second_cluster.api()
    helm = install_nightly(second_cluster, api_two)
    try:
        two = run_job(api_two, JOB)
        assert two.job.status.succeeded == 1, two.log[-2000:]
        kubeconfig = write_kubeconfig(
            tmp_path / "fleet.kubeconfig",
            [
                Access("one", crashloop_cluster.kubeconfig, account_token(crashloop_api)),
                Access("two", second_cluster.kubeconfig, account_token(api_two)),
            ],
        )
        before = _check_pods(crashloop_api) | _check_pods(api_two)
        argv = ["fleet", "--collect", "--kubeconfig", str(kubeconfig), "-o", "json"]
        done = run_without_docker(argv, tmp_path)
        print(done.stderr)
        assert done.returncode == 0, done.stderr
        clusters = {c["context"]: c for c in json.loads(done.stdout)["clusters"]}
        assert set(clusters) == {"one", "two"}
        assert clusters["one"]["run_id"] == run_id_of(ended.log)
        assert clusters["two"]["run_id"] == run_id_of(two.log)
        assert [clusters[c]["status"] for c in ("one", "two")] == ["passed", "passed"]
        # Collecting ran no check: no check's pod appeared in either cluster.
        assert (_check_pods(crashloop_api) | _check_pods(api_two)) - before == set()
    finally:
        uninstall_nightly(helm, api_two)


def _check_pods(api: client.ApiClient) -> set[str]:
    """The pods of any check's run in the cluster, by server and name."""
    pods = client.CoreV1Api(api).list_pod_for_all_namespaces(label_selector=RUN_LABEL).items
    return {f"{api.configuration.host}/{pod.metadata.name}" for pod in pods}


def test_a_node_that_did_not_pass_gets_an_event_as_the_role_allows(
    ended: Ended,
    crashloop_cluster: lifecycle.Cluster,
    crashloop_api: client.ApiClient,
    tmp_path: Path,
) -> None:
    """The kept run written again as the nightly's ServiceAccount, one node's check turned
    not passed: the API server takes its Event (a Node's, in the namespace it keeps them)
    from the role, and `kubectl describe node` finds it by the node's name and kind."""
    core = client.CoreV1Api(crashloop_api)
    (kept,) = core.list_namespaced_config_map(
        NAMESPACE, label_selector=f"{RESULT_LABEL}=true"
    ).items
    (tmp_path / "summary.json").write_text(kept.data["summary.json"])
    summary = read_summary(tmp_path / "summary.json")
    failed = dataclasses.replace(
        summary.workers[0], passed=False, failures=("restart 3: too late (written by the test)",)
    )
    summary = dataclasses.replace(summary, run_id=f"{summary.run_id}-again", workers=(failed,))
    account = write_kubeconfig(
        tmp_path / "kubeconfig",
        [Access("nightly", crashloop_cluster.kubeconfig, account_token(crashloop_api))],
    )
    keep_results(remote_api(account, "nightly"), NAMESPACE, tmp_path, summary)
    events = core.list_namespaced_event(
        "default",
        field_selector=f"involvedObject.kind=Node,involvedObject.name={failed.node}",
    ).items
    ours = [e for e in events if e.source.component == "crashloop-harness"]
    assert [e.reason for e in ours] == ["CrashLoopBackOffCheckFailed"]
    assert "written by the test" in ours[0].message


def test_a_kubelet_off_its_curve_fails_the_nightly_naming_its_node_with_an_event(
    ended: Ended, crashloop_cluster: lifecycle.Cluster, crashloop_api: client.ApiClient
) -> None:
    """The fast worker's kubelet swapped for one that ignores its configured max (/configz
    unchanged): the next nightly's Job fails, its last line names the node, and the node
    carries the Event `kubectl describe node` shows."""
    node = worker_nodes(crashloop_api)["fast"]
    (mutant,) = [
        m for m in mutant_set(crashloop_cluster.spec.kubernetes) if m.name == "max-ignored"
    ]
    kubelet = kubelet_from_patch(mutant.patch, crashloop_cluster.spec.kubernetes)
    put_kubelet(crashloop_cluster, node, kubelet, print)
    try:
        failed = run_job(crashloop_api, f"{JOB}-mutant")
    finally:
        put_image_kubelet_back(crashloop_cluster, node, print)
    assert failed.job.status.failed == 1, failed.log[-2000:]
    (container,) = failed.pod.status.container_statuses
    assert container.state.terminated.exit_code == 1
    last = failed.log.strip().splitlines()[-1]
    assert last.startswith("FAILED: "), last
    assert node in last, last
    events = (
        client.CoreV1Api(crashloop_api)
        .list_namespaced_event(
            "default", field_selector=f"involvedObject.kind=Node,involvedObject.name={node}"
        )
        .items
    )
    run_id = run_id_of(failed.log)
    ours = [e for e in events if e.reporting_instance == run_id]
    assert [e.reason for e in ours] == ["CrashLoopBackOffCheckFailed"], [e.message for e in events]
    assert ours[0].message.startswith(f"{node}: restart"), ours[0].message


def test_over_the_fleet_s_plan_the_nightly_checks_each_pool_and_keeps_the_fleet(
    ended: Ended, crashloop_cluster: lifecycle.Cluster, crashloop_api: client.ApiClient
) -> None:
    """The chart's fleet mode: each night the fleet's plan over this cluster (its three
    workers, three curves, one node of each group), an expectation per pool judged, the
    fleet's result kept where `crashloop fleet --collect` reads it. Last: it changes the
    CronJob, which the tests above run as installed."""
    del ended  # the chart installed by the module's fixture
    helm = [str(ensure_helm()), "--kubeconfig", str(crashloop_cluster.kubeconfig)]
    expect = [f"{PROFILE_LABEL}=fast:max=2s", f"{PROFILE_LABEL}=reduced:max=60s"]
    subprocess.run(
        [
            *helm,
            "upgrade",
            RELEASE,
            str(CHART),
            "--reuse-values",
            "--set",
            "perGroup=1",
            "--set-json",
            f"expect={json.dumps(expect)}",
        ],
        check=True,
        capture_output=True,
        timeout=timeouts.TOOL_QUERY,
    )
    fleet = run_job(crashloop_api, f"{JOB}-fleet")
    assert fleet.job.status.succeeded == 1, fleet.log[-3000:]
    assert container_args(fleet.pod)[:1] == ["fleet"]
    last = fleet.log.strip().splitlines()[-1]
    assert last.startswith("PASSED: every group of 1 clusters passed"), last
    kept = (
        client.CoreV1Api(crashloop_api)
        .list_namespaced_config_map(NAMESPACE, label_selector=f"{RESULT_LABEL}=true")
        .items
    )
    (mine,) = [m for m in kept if "fleet.json" in (m.data or {})]
    document = json.loads(mine.data["fleet.json"])
    assert document["verdict"] == "passed", document["reason"]
    assert len(document["groups"]) == 3
    assert [e["met"] for e in document["expectations"]] == [True, True]
    (context,) = context_names(crashloop_cluster.kubeconfig)
    (collected,) = collect(crashloop_cluster.kubeconfig, [context], NAMESPACE)
    assert (collected.run_id, collected.status) == (document["fleet_id"], "passed")
