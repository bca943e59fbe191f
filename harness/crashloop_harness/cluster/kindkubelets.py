"""How a run on the harness's own kind cluster ended: each kubelet's process and Lease.

Each kubelet process is read in its node container at the start and at the
end: one that restarted wiped its back-off state, one that exited restarts
nothing more. A kubelet whose process is still there but whose Lease stopped
moving (frozen, a paused node) is stopped as much as one that exited. An engine
that went away leaves nothing to ask at all.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from kubernetes import client

from crashloop_harness.cluster import kubeletstate
from crashloop_harness.cluster.leases import RENEW_GAP_NS, last_renewals, stopped_renewing
from crashloop_harness.cluster.target import RunEnding
from crashloop_harness.core import timeouts
from crashloop_harness.core.polling import poll
from crashloop_harness.substrate.engine import engine_answers


def engine_gone_reason() -> str | None:
    """Why nothing more can be asked of the cluster after a run; None while the engine answers."""
    if engine_answers():
        return None
    return (
        "the Docker engine stopped answering during the run: no evidence collected, the "
        "namespace left behind; `crashloop up` starts the engine and repairs or recreates "
        "the cluster"
    )


def process_ending(
    kubelets_before: Mapping[str, kubeletstate.KubeletProcess | None],
    made: Mapping[str, kubeletstate.KubeletProcess] | None = None,
) -> RunEnding:
    """Compare every kubelet process with the start of the run (or with the one a restart
    the run made started); check the engine still answers."""
    engine_gone = engine_gone_reason()
    if engine_gone is not None:
        return RunEnding((engine_gone,), {}, engine_gone)
    changes = kubeletstate.changes_between(
        kubelets_before, kubeletstate.snapshot(list(kubelets_before)), made
    )
    return RunEnding(changes.restarted, changes.stopped, None)


@dataclass(frozen=True)
class KindKubelets:
    """The judged nodes' kubelet processes as a run on a kind cluster starts."""

    api: client.ApiClient
    processes: Mapping[str, kubeletstate.KubeletProcess | None]

    @classmethod
    def read(cls, api: client.ApiClient, nodes: Sequence[str]) -> KindKubelets:
        return cls(api, kubeletstate.snapshot(list(nodes)))

    def ending(
        self,
        confirm: Collection[str] = (),
        made: Mapping[str, kubeletstate.KubeletProcess] | None = None,
    ) -> RunEnding:
        """The run's ending, its stopped kubelets including the frozen ones.

        ``confirm`` are nodes about to be blamed (a worker decided early): one
        whose Lease was renewed lately is watched for up to a renewal period, so
        a kubelet frozen a few seconds before the end is told from a live one.
        """
        ending = process_ending(self.processes, made)
        if ending.engine_gone is not None:
            return ending
        nodes = list(self.processes)
        stopped_nodes = list(ending.stopped)
        # A kind node's clock is the host's.
        read_at = time.time_ns()
        renewals = last_renewals(self.api, nodes)
        young = {
            node: renewed
            for node in confirm
            if (renewed := renewals.get(node)) is not None and read_at - renewed <= RENEW_GAP_NS
        }
        settled = {node: renewed for node, renewed in renewals.items() if node not in young}
        frozen = stopped_renewing(settled, read_at, stopped_nodes)
        if young:
            watched = poll(
                lambda: last_renewals(self.api, list(young)),
                until=lambda now: all(now.get(n) != renewed for n, renewed in young.items()),
                within=timeouts.LEASE_CONFIRM,
            )
            frozen |= stopped_renewing(watched.last, time.time_ns(), stopped_nodes)
        return RunEnding(ending.errors, {**ending.stopped, **frozen}, None)
