"""A node given another kubelet (or its own back), and proved to run it.

After the swap the node must be Ready again, its /configz must still match its
profile (a code change must not pass as a config change) and the binary read
back in the node must be the one put there.
"""

from __future__ import annotations

from crashloop_harness.cluster.kube import node_statuses
from crashloop_harness.cluster.kubeletswap import NodeKubelet, read_node_kubelet, restore, swap
from crashloop_harness.cluster.lifecycle import Cluster
from crashloop_harness.cluster.liveconfig import live_config_rows
from crashloop_harness.core import timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.polling import poll_true
from crashloop_harness.core.progress import Progress
from crashloop_harness.substrate.kubeletbuild import Kubelet


def put_kubelet(cluster: Cluster, node: str, kubelet: Kubelet, progress: Progress) -> NodeKubelet:
    """``kubelet`` in ``node``, running, on its profile's config; what the node reports."""
    progress(f"{node}: kubelet {kubelet.made_from} (sha256 {kubelet.sha256[:12]})")
    swap(node, kubelet.binary, kubelet.made_from)
    wait_kubelet_back(cluster, node)
    running = read_node_kubelet(node)
    if running.sha256 != kubelet.sha256:
        raise HarnessError(
            f"{node} runs a kubelet of sha256 {running.sha256[:12]}, not the "
            f"{kubelet.sha256[:12]} put there",
            "run `crashloop kubelet --restore` and try again; check the node's disk",
        )
    return running


def put_image_kubelet_back(cluster: Cluster, node: str, progress: Progress) -> NodeKubelet:
    """The node image's own kubelet in ``node`` again (nothing done when it has it)."""
    if restore(node):
        progress(f"{node}: the image's own kubelet restored")
        wait_kubelet_back(cluster, node)
    return read_node_kubelet(node)


def wait_kubelet_back(cluster: Cluster, node: str) -> None:
    """Until ``node`` is Ready and its live config matches its profile again."""
    api = cluster.api()
    problem: list[str] = []

    def settled() -> bool:
        try:
            ready = any(s.name == node and s.ready for s in node_statuses(api))
            row = next(r for r in live_config_rows(api, cluster.spec) if r.node == node)
        except Exception as error:  # restarting: its /configz is away for a moment
            problem[:] = [f"{type(error).__name__}: {error}"]
            return False
        problem[:] = list(row.mismatches) or ([] if ready else ["not Ready"])
        return ready and not row.mismatches

    if not poll_true(settled, within=timeouts.NODES_READY):
        raise HarnessError(
            f"{node}: the kubelet did not come back Ready on its profile within "
            f"{timeouts.NODES_READY:.0f}s ({'; '.join(problem) or 'no answer'})",
            f"read `docker exec {node} journalctl -u kubelet`; `crashloop kubelet --restore` "
            "puts the image's kubelet back",
        )
