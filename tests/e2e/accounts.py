"""The check's ServiceAccount on a cluster, and the CLI run with its kubeconfig alone.

An operator's cluster is reached as the shipped role allows
(`crashloop rbac`: harness/crashloop_harness/resources/rbac/, applied by an
admin) through a token-based kubeconfig; the CLI then runs with no docker on
its PATH and DOCKER_HOST pointing nowhere.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, utils

from crashloop_harness.cluster.kube import delete_namespace
from crashloop_harness.cluster.rbac import rbac_yaml
from crashloop_harness.core import timeouts
from crashloop_harness.core.conventions import PROFILE_LABEL

NAMESPACE = "crashloop-check"
ACCOUNT = "crashloop-check"


def delete_rbac(api: client.ApiClient) -> None:
    rbac = client.RbacAuthorizationV1Api(api)
    for delete in (rbac.delete_cluster_role_binding, rbac.delete_cluster_role):
        for cluster_wide in ("crashloop-check-nodes", "crashloop-check-node-proxy"):
            try:
                delete(cluster_wide)
            except client.ApiException as error:
                if error.status != 404:
                    raise
    for name, namespace in (
        ("crashloop-check-leases", "kube-node-lease"),
        ("crashloop-check-node-events", "default"),
    ):
        for delete_namespaced in (rbac.delete_namespaced_role_binding, rbac.delete_namespaced_role):
            try:
                delete_namespaced(name, namespace)
            except client.ApiException as error:
                if error.status != 404:
                    raise
    delete_namespace(api, NAMESPACE)


def grant_check_role(api: client.ApiClient, *, node_proxy: bool = True) -> None:
    """The shipped roles applied afresh, as an admin would: from outside the cluster the
    check reads its kubelets through the node proxy."""
    delete_rbac(api)
    objects = [d for d in yaml.safe_load_all(rbac_yaml(node_proxy=node_proxy)) if d]
    utils.create_from_yaml(api, yaml_objects=objects)


def account_token(api: client.ApiClient, account: str = ACCOUNT) -> str:
    token = client.CoreV1Api(api).create_namespaced_service_account_token(
        account,
        NAMESPACE,
        client.AuthenticationV1TokenRequest(
            spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=3600)
        ),
    )
    return str(token.status.token)


@dataclass(frozen=True)
class Access:
    """One context of a kubeconfig: a cluster's entry (from its admin kubeconfig) and a token."""

    context: str
    admin_kubeconfig: Path
    token: str


def write_kubeconfig(path: Path, accesses: Sequence[Access]) -> Path:
    """A kubeconfig with a context per access, each its cluster and its token alone; the first
    is the current context."""
    clusters: list[dict[str, Any]] = []
    for access in accesses:
        admin: dict[str, Any] = yaml.safe_load(access.admin_kubeconfig.read_text())
        entry = dict(admin["clusters"][0])
        entry["name"] = access.context
        clusters.append(entry)
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": clusters,
                "users": [{"name": a.context, "user": {"token": a.token}} for a in accesses],
                "contexts": [
                    {"name": a.context, "context": {"cluster": a.context, "user": a.context}}
                    for a in accesses
                ],
                "current-context": accesses[0].context,
            }
        )
    )
    path.chmod(0o600)
    return path


def write_unreachable_kubeconfig(path: Path) -> Path:
    """A kubeconfig whose one context, ``gone``, names a server that refuses every connection."""
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "gone", "cluster": {"server": "https://127.0.0.1:1"}}],
                "users": [{"name": "gone", "user": {"token": "t"}}],
                "contexts": [{"name": "gone", "context": {"cluster": "gone", "user": "gone"}}],
            }
        )
    )
    return path


def cli_env(runs: Path, extra_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The CLI's environment with its own tools only: docker is not on its PATH."""
    bin_dir = Path(sys.executable).parent
    assert shutil.which("docker", path=str(bin_dir)) is None
    return {
        "PATH": str(bin_dir),
        "HOME": os.environ.get("HOME", "/root"),
        "DOCKER_HOST": "unix:///nonexistent/docker.sock",
        "CRASHLOOP_RUNS_DIR": str(runs),
        **(extra_env or {}),
    }


def crashloop_argv(argv: Sequence[str]) -> list[str]:
    return [str(Path(sys.executable).parent / "crashloop"), *argv]


def existing_args(workload_image: str, kubeconfig: Path | None = None) -> list[str]:
    """The options that point a verb at the workers as an operator's existing cluster: the
    kubeconfig (None: --kubeconfig alone, kubectl's), the profiled nodes, the prepared
    namespace, the image, JSON out."""
    return [
        "--kubeconfig",
        *([] if kubeconfig is None else [str(kubeconfig)]),
        "--node-selector",
        PROFILE_LABEL,
        "--namespace",
        NAMESPACE,
        "--workload-image",
        workload_image,
        "--output",
        "json",
    ]


def existing_check_argv(workload_image: str) -> list[str]:
    """The existing-cluster quick check of the workers, through kubectl's kubeconfig, its
    results kept in the cluster as the in-cluster nightly keeps them."""
    return ["check", "--profile", "quick", *existing_args(workload_image), "--keep-in-cluster"]


def start_without_docker(
    argv: list[str], runs: Path, extra_env: Mapping[str, str] | None = None
) -> subprocess.Popen[str]:
    """The CLI with its own environment's tools only, started and left to run."""
    return subprocess.Popen(
        crashloop_argv(argv),
        env=cli_env(runs, extra_env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> subprocess.CompletedProcess[str]:
    """A started CLI run to its end (or killed at CHECK_SUBPROCESS), as run_without_docker's."""
    try:
        out, err = process.communicate(timeout=timeouts.CHECK_SUBPROCESS)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def run_without_docker(
    argv: list[str], runs: Path, extra_env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The CLI with its own environment's tools only, to its end."""
    return subprocess.run(
        crashloop_argv(argv),
        env=cli_env(runs, extra_env),
        capture_output=True,
        text=True,
        timeout=timeouts.CHECK_SUBPROCESS,
        check=False,
    )
