"""One group's check on its cluster: the existing-cluster check of a few nodes, as a round.

Every fault a cluster can have (its API server gone, a refused request, a
kubeconfig it cannot use) ends that round as an error naming it: the fleet's
other clusters go on. A bug of the harness is not a cluster's fault and goes on
as itself.
"""

from __future__ import annotations

import threading
from pathlib import Path

import urllib3
from kubernetes import client
from kubernetes.config.config_exception import ConfigException

from crashloop_harness.cluster.remote import RemoteCluster
from crashloop_harness.core.errors import HarnessError, first_line
from crashloop_harness.core.progress import Progress
from crashloop_harness.fleet.engine import CheckNodes
from crashloop_harness.fleet.judge import Round, round_of, unstarted_round
from crashloop_harness.runs.check import run_check
from crashloop_harness.runs.checkprofiles import CheckProfile

# What a cluster can do to a check: refuse it, vanish, or be unusable.
CLUSTER_FAULTS: tuple[type[BaseException], ...] = (
    client.ApiException,
    urllib3.exceptions.HTTPError,
    ConfigException,
    HarnessError,
    OSError,
)


def remote_check(
    kubeconfig: Path,
    *,
    namespace: str | None,
    workload_image: str,
    profile: CheckProfile,
    progress: Progress,
) -> CheckNodes:
    """The check of a group's nodes through ``kubeconfig``'s context for that cluster."""

    def check(context: str, nodes: tuple[str, ...], stop: threading.Event) -> Round:
        target = RemoteCluster(
            kubeconfig=kubeconfig,
            context=context,
            nodes=nodes,
            workload_image=workload_image,
            name=context,
            namespace=namespace,
            namespace_shared=namespace is not None,
        )

        def said(message: str) -> None:
            progress(f"{context} {','.join(nodes)}: {message}")

        try:
            result = run_check(target, profile, said, stop=stop)
        except CLUSTER_FAULTS as error:
            said(f"error: {first_line(error)}")
            return unstarted_round(nodes, f"{type(error).__name__}: {first_line(error)}")
        summary = result.written_summary()
        return round_of(nodes, summary, str(result.run_dir))

    return check
