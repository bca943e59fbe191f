"""Evidence collection on a real cluster: a crash-looping pod leaves everything a reader needs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from tenacity import Retrying, retry_if_result, stop_after_delay, wait_fixed

from crashloop_harness.cluster.evidence import (
    ERRORS_FILE,
    collect_namespace_evidence,
    collect_node_configs,
)
from crashloop_harness.cluster.lifecycle import Cluster
from crashloop_harness.core import timeouts
from crashloop_harness.pods.skeleton import MAIN_CONTAINER, crashing_pod
from crashloop_harness.substrate.workloadimage import ensure_image, load_into

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def restart_count(core: client.CoreV1Api, namespace: str, name: str) -> int:
    pod = core.read_namespaced_pod(name, namespace, _request_timeout=timeouts.API_REQUEST)
    statuses = pod.status.container_statuses or []
    return max((int(status.restart_count) for status in statuses), default=0)


def test_a_crashing_pod_leaves_full_evidence(
    crashloop_cluster: Cluster, crashloop_namespace: str, tmp_path: Path
) -> None:
    namespace = crashloop_namespace
    api = crashloop_cluster.api()
    core = client.CoreV1Api(api)
    image = ensure_image()
    load_into(crashloop_cluster.name, crashloop_cluster.kind_bin, image)
    # The worker with the longest initial back-off: restart 1 is immediate on
    # every curve, and the long wait before restart 2 leaves the container
    # dead (its log complete) while evidence is read. An exit code the
    # workload refuses makes it print why before it exits (2), so both the
    # current and the previous log have a line to check; a plain
    # `--mode exit` crash prints nothing.
    worker = max(crashloop_cluster.spec.workers, key=lambda w: w.curve.initial).name
    manifest = crashing_pod(worker, "evidence-e2e", image, exit_code=256)
    name = manifest["metadata"]["name"]
    core.create_namespaced_pod(namespace, manifest)

    # restartCount 1 means attempt 0 is dead and kept: a previous log exists.
    Retrying(
        stop=stop_after_delay(timeouts.POD_RUNNING),
        wait=wait_fixed(1),
        retry=retry_if_result(lambda count: count < 1),
        reraise=True,
    )(restart_count, core, namespace, name)

    ns_dir = collect_namespace_evidence(api, namespace, tmp_path)
    nodes_dir = collect_node_configs(api, tmp_path)

    errors = tmp_path / ERRORS_FILE
    assert not errors.exists(), errors.read_text()

    pod_yaml = yaml.safe_load((ns_dir / "pods" / f"{name}.yaml").read_text())
    assert pod_yaml["metadata"]["name"] == name
    assert pod_yaml["status"]["containerStatuses"][0]["restartCount"] >= 1

    logs = ns_dir / "logs" / name
    current = (logs / f"{MAIN_CONTAINER}.log").read_text()
    assert "--exit-code" in current, current
    # The previous log is served only while the next attempt runs: in the
    # back-off wait the v1.35 kubelet has already removed the attempt that
    # lastState names (it keeps one dead container), and says so with HTTP
    # 200. Either way the evidence must hold the log or why it is missing.
    previous = logs / f"{MAIN_CONTAINER}.previous.log"
    if previous.exists():
        assert "--exit-code" in previous.read_text()
    else:
        why = (logs / f"{MAIN_CONTAINER}.previous.unavailable.txt").read_text()
        last = pod_yaml["status"]["containerStatuses"][0]["lastState"]["terminated"]
        assert last["containerID"] in why, why

    events = (ns_dir / "events.txt").read_text()
    assert f"Pod/{name}" in events
    assert yaml.safe_load((ns_dir / "events.yaml").read_text())

    configz = sorted(nodes_dir.glob("*.configz.json"))
    assert len(configz) == 1 + len(crashloop_cluster.spec.workers)
    for path in configz:
        assert "kubeletconfig" in json.loads(path.read_text()), path.name
