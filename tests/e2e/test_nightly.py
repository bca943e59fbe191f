"""The nightly inside the cluster: the harness's image, run as the CronJob's Job would run it.

The image is built offline and loaded into the kind cluster as a user's registry would serve
it; the chart installs the role and the CronJob (the objects `crashloop cronjob` prints).
A Job is made from the CronJob's template (as `kubectl create job --from=cronjob/...`), and
its pod checks the three workers' kubelets with no kubeconfig: its ServiceAccount alone, in a
namespace that enforces the restricted Pod Security level. The Job's outcome is the verdict.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kubernetes import client

from crashloop_harness.cluster import lifecycle
from crashloop_harness.cluster.kube import worker_nodes
from crashloop_harness.cluster.kubeconfig import context_names, remote_api
from crashloop_harness.cluster.kubeletput import put_image_kubelet_back, put_kubelet
from crashloop_harness.core import timeouts
from crashloop_harness.core.conventions import PROFILE_LABEL
from crashloop_harness.core.polling import poll_true
from crashloop_harness.fleet.collect import collect
from crashloop_harness.outputs.clusterresults import RESULT_LABEL, keep_results
from crashloop_harness.outputs.summaryfile import read_summary
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
    write_kubeconfig,
)

# Slow tier: the image built (29 s when the code moved) and loaded into every node (10 s a
# node), then a check; the fast tier keeps the in-cluster results through
# test_existing_cluster.py (its check runs with --keep-in-cluster).
pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.crashloop_disruptive]

JOB = "crashloop-nightly-e2e"
RELEASE = "crashloop-nightly"
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


@pytest.fixture(scope="module")
def ended(crashloop_cluster: lifecycle.Cluster, crashloop_api: client.ApiClient) -> Iterator[Ended]:
    # Both images in every node, as a registry would serve them to a cluster of one's own.
    image = harnessimage.ensure_image()
    workload = workloadimage.ensure_image()
    for tag in (image, workload):
        workloadimage.load_into(crashloop_cluster.name, crashloop_cluster.kind_bin, tag)
    helm = [str(ensure_helm()), "--kubeconfig", str(crashloop_cluster.kubeconfig)]
    delete_rbac(crashloop_api)  # a cluster that never had it, as an admin's first install
    # The chart installs it (test_chart.py holds its objects equal to `crashloop cronjob`'s).
    subprocess.run(
        [
            *helm,
            "install",
            RELEASE,
            str(CHART),
            "--wait",
            "--set-string",
            f"image={image},workloadImage={workload},nodeSelector={PROFILE_LABEL}",
        ],
        check=True,
        capture_output=True,
        timeout=timeouts.TOOL_QUERY,
    )
    try:
        yield run_job(crashloop_api, JOB)
    finally:
        subprocess.run([*helm, "uninstall", RELEASE], check=False, timeout=timeouts.TOOL_QUERY)
        delete_rbac(crashloop_api)


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
    # No kubeconfig was handed to it (no argument names one, no volume but its scratch):
    # its ServiceAccount was its only way in, and the check ran in the role's namespace.
    assert not any("kubeconfig" in arg for arg in container_args(ended.pod))
    assert [v.name for v in ended.pod.spec.volumes if v.projected is None] == ["scratch"]
    assert f"namespace {NAMESPACE}, records in" in ended.log
    # The log's last line is the verdict's.
    last = ended.log.strip().splitlines()[-1]
    assert last.startswith("PASSED: "), last


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
