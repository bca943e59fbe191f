"""An OCI image index as a registry would serve it to a kind node, and one pod run from it.

The workload's and the harness's indexes are each imported whole into one worker's
runtime (every platform's image beside the others), and a pod there runs the image of the
node's own architecture to its end.
"""

from __future__ import annotations

import json
import subprocess
import tarfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from kubernetes import client

from crashloop_harness.cluster import lifecycle
from crashloop_harness.cluster.kube import worker_nodes
from crashloop_harness.cluster.nodecommand import node_argv
from crashloop_harness.core import timeouts
from crashloop_harness.core.polling import poll_true

# ELF e_machine (the two bytes at offset 18, little-endian) of each architecture.
ELF_MACHINE: Final = {"amd64": 62, "arm64": 183}


def blob(layout: tarfile.TarFile, digest: str) -> bytes:
    """One blob of an OCI layout read from its archive."""
    member = layout.extractfile(f"blobs/sha256/{digest.removeprefix('sha256:')}")
    assert member is not None, digest
    return member.read()


def blob_json(layout: tarfile.TarFile, digest: str) -> Any:
    return json.loads(blob(layout, digest))


@contextmanager
def imported(archive: Path, cluster: lifecycle.Cluster, name: str) -> Iterator[str]:
    """The index at ``archive`` imported as ``name`` into the first worker; its node."""
    node = worker_nodes(cluster.api())[cluster.spec.workers[0].name]
    argv = ["ctr", "-n", "k8s.io", "images", "import", "--index-name", name, "-"]
    subprocess.run(
        node_argv(node, argv, stdin=True),
        input=archive.read_bytes(),
        check=True,
        capture_output=True,
        timeout=timeouts.IMAGE_LOAD,
    )
    try:
        yield node
    finally:
        subprocess.run(
            node_argv(node, ["ctr", "-n", "k8s.io", "images", "rm", name]),
            check=True,
            capture_output=True,
            timeout=timeouts.NODE_EXEC,
        )


@dataclass(frozen=True)
class Ran:
    """A pod that ran to its end: its status and its log."""

    status: client.V1PodStatus
    log: str


def run_to_end(
    cluster: lifecycle.Cluster, node: str, image: str, args: list[str], name: str
) -> Ran:
    """One pod of ``image`` on ``node`` (never pulled, non-root), waited to its end."""
    core = client.CoreV1Api(cluster.api())
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, namespace="default"),
        spec=client.V1PodSpec(
            node_name=node,
            restart_policy="Never",
            security_context=client.V1PodSecurityContext(run_as_non_root=True),
            containers=[
                client.V1Container(name="app", image=image, image_pull_policy="Never", args=args)
            ],
        ),
    )
    core.create_namespaced_pod("default", pod)
    try:
        ended = poll_true(
            lambda: (
                core.read_namespaced_pod(name, "default").status.phase in ("Succeeded", "Failed")
            ),
            within=timeouts.FRESH_POD,
        )
        assert ended, f"the pod {name} from the index did not end"
        status = core.read_namespaced_pod(name, "default").status
        return Ran(status, core.read_namespaced_pod_log(name, "default"))
    finally:
        core.delete_namespaced_pod(name, "default", grace_period_seconds=0)
