"""How a measured run ended: its kubelets and engine compared with the start, evidence kept.

A kubelet that restarted wiped its back-off state, one that stopped restarts
nothing more (the verdicts still say which restart went overdue), an engine
that went away leaves nothing to ask: each makes the run an error, never a
pass and never a plain failure, as JUnit's ``<error>`` says of the same node. On the harness's
own cluster each kubelet's process is read on its node; on an existing
cluster its start time comes from its metrics.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from kubernetes import client

from crashloop_harness.cluster import kubeletstate
from crashloop_harness.cluster.lifecycle import Cluster
from crashloop_harness.cluster.remote import RemoteCluster, kubelet_start_times, restarted_kubelets
from crashloop_harness.core import timeouts
from crashloop_harness.core.polling import poll
from crashloop_harness.outputs.evidence import collect_failure_evidence, export_kind_logs
from crashloop_harness.recording.leases import RENEW_GAP_NS, last_renewals, stopped_renewing
from crashloop_harness.recording.recorder import AttemptRecorder
from crashloop_harness.recording.trace import Tap
from crashloop_harness.runs.lifecycle import RunState, Target
from crashloop_harness.substrate.engine import engine_answers


@dataclass(frozen=True)
class RunEnding:
    """What stands between a run's verdicts and its status, read once the observation ended.

    ``errors``: a kubelet restarted (its back-off state wiped) or the engine
    went away; no pass or fail may be claimed. ``stopped``: a kubelet exited
    and stayed down; the node's later restarts cannot be judged either.
    ``engine_gone``: nothing more can be asked of the cluster (no evidence, no
    clean-up).
    """

    errors: tuple[str, ...]
    stopped: tuple[str, ...]
    engine_gone: str | None


# The ending of a run whose ending could not be read (its reading raised): no pass or fail
# may be claimed, and the cluster is still asked for its evidence and its clean-up.
NO_ENDING_READ: Final = RunEnding(("the run's ending could not be read",), (), None)


def run_ending(kubelets_before: Mapping[str, kubeletstate.KubeletProcess | None]) -> RunEnding:
    """Compare every kubelet with the start of the run; check that the engine still answers."""
    engine_gone = engine_gone_reason()
    if engine_gone is not None:
        return RunEnding((engine_gone,), (), engine_gone)
    changes = kubeletstate.changes_between(
        kubelets_before, kubeletstate.snapshot(list(kubelets_before))
    )
    return RunEnding(changes.restarted, changes.stopped, None)


def apply_ending(state: RunState, ending: RunEnding) -> None:
    """An error or a stopped kubelet overrides what the verdicts said; an interruption stays."""
    if ending.errors:
        # A verdict against a curve the kubelet no longer follows would be wrong.
        state.status = "error"
        state.reason = _joined(state.reason, ending.errors)
    if ending.stopped and state.status != "interrupted":
        # A stopped kubelet restarts nothing: the verdicts say which restart
        # went overdue, but the node, not its back-off, is what failed, so
        # the run is an error (JUnit's <error> for that worker); the run says
        # why first (a reader at 9am wants the node, not the epoch of an exit).
        state.status = "error"
        state.reason = _joined("; ".join(ending.stopped), [state.reason] if state.reason else [])


def trace_outcome(trace: Tap, result: RunState, ending: RunEnding) -> None:
    """How the run ended and what it concluded, for a replay to compare with."""
    trace.write(
        "ending",
        errors=list(ending.errors),
        stopped=list(ending.stopped),
        engine_gone=ending.engine_gone,
    )
    decided = getattr(result, "decided", {})
    trace.write(
        "outcome",
        status=result.status,
        reason=result.reason,
        decided={worker: list(found) for worker, found in decided.items()},
    )


def _joined(reason: str, more: Sequence[str]) -> str:
    """``reason`` and whatever of ``more`` it does not say already (a restart seen mid-run)."""
    return "; ".join([*filter(None, [reason]), *(m for m in more if m not in reason)])


def gather_evidence(
    api: client.ApiClient, cluster: Target, namespace: str, state: RunState, ending: RunEnding
) -> None:
    """On a failed or errored run, before its namespace goes: what pods, kubelets, nodes said."""
    if state.status not in ("failed", "error") or ending.engine_gone is not None:
        return
    evidence = state.run_dir / "evidence"
    collect_failure_evidence(api, [namespace], evidence)
    if isinstance(cluster, Cluster):
        export_kind_logs(cluster.kind_bin, cluster.name, evidence / "kind-logs")


def stop_reason(
    recorder: AttemptRecorder, measured_pods: Mapping[str, str] | None = None
) -> str | None:
    """Why a run must end now as an error, else None.

    A node that stopped answering, or whose container runtime did, records
    nothing more; a kubelet that restarted wiped its back-off state, so no
    later restart can be judged against the old curve. Both are seen by the
    nodes' readers as they happen, not at the end of the window.

    ``measured_pods`` (pod name -> subject, "<worker>" or "<worker>/<variant>")
    are pods the run judges and never deletes before its observation ends:
    one deleted, evicted or replaced meanwhile was ended by someone else, and
    the restarts it no longer shows are nobody's failure. Runs that delete
    their own pods on purpose (the scenarios) leave it out.
    """
    silent = recorder.silent_nodes(longer_than=timeouts.NODE_SILENT)
    if silent and getattr(recorder, "observer", None) == "selfreport":
        # A node of a cluster reached through the API alone: its Lease went still.
        return "; ".join(silent) + ": is the node running? (`kubectl get nodes`)"
    if silent:
        return "; ".join(silent) + ": is the Docker engine running? (`crashloop status`)"
    broken = recorder.broken_nodes()
    if broken:
        return (
            "; ".join(broken)
            + ": is containerd running in the node? (`docker exec <node> systemctl status "
            "containerd`; `crashloop up` repairs or recreates the cluster)"
        )
    restarted = recorder.kubelet_changes().restarted
    if restarted:
        return "; ".join(restarted)
    deleted = deleted_during_run(recorder.deleted_pods(), measured_pods or {})
    if deleted:
        return "; ".join(deleted) + ": run it again, and leave its pods alone until it ends"
    return None


def deleted_during_run(deleted: Mapping[str, str], measured_pods: Mapping[str, str]) -> list[str]:
    """One message per measured pod the run saw deleted, evicted or replaced, by name."""
    return [
        f"pod {name} (worker {measured_pods[name].split('/')[0]}) was deleted during the run "
        f"(by someone else: the kubelet did nothing wrong), seen at {deleted[name]}"
        for name in sorted(deleted.keys() & measured_pods.keys())
    ]


def engine_gone_reason() -> str | None:
    """Why nothing more can be asked of the cluster after a run; None while the engine answers."""
    if engine_answers():
        return None
    return (
        "the Docker engine stopped answering during the run: no evidence collected, the "
        "namespace left behind; `crashloop up` starts the engine and repairs or recreates "
        "the cluster"
    )


def remote_ending(api: client.ApiClient, kubelets_before: Mapping[str, float | None]) -> RunEnding:
    """An existing cluster's run ending: a kubelet that restarted (seen in its metrics)."""
    after = kubelet_start_times(api, list(kubelets_before))
    return RunEnding(tuple(restarted_kubelets(kubelets_before, after)), (), None)


@dataclass(frozen=True)
class KubeletsAtStart:
    """The judged nodes' kubelets as a run starts, to tell one restarted or stopped by its end.

    On the harness's own cluster each kubelet process is read on its node; on
    an existing cluster each kubelet's start time, from its metrics.
    """

    api: client.ApiClient
    processes: Mapping[str, kubeletstate.KubeletProcess | None] | None
    start_times: Mapping[str, float | None] | None


def kubelets_at_start(cluster: Target, api: client.ApiClient, nodes: list[str]) -> KubeletsAtStart:
    if isinstance(cluster, RemoteCluster):
        return KubeletsAtStart(api, None, kubelet_start_times(api, nodes))
    return KubeletsAtStart(api, kubeletstate.snapshot(nodes), None)


def ending_of(kubelets: KubeletsAtStart, confirm: Collection[str] = ()) -> RunEnding:
    """The run's ending, compared with how its kubelets were at the start.

    On the harness's own cluster, a kubelet whose process is still there but
    whose Lease stopped moving (frozen) is stopped as much as one that exited:
    the run says so of both, the same way. (An existing cluster's frozen nodes
    are read from their Leases throughout the run.) ``confirm`` are nodes
    about to be blamed (a worker decided early): one whose Lease was renewed
    lately is watched for up to a renewal period, so a kubelet frozen a few
    seconds before the end is told from a live one.
    """
    if kubelets.start_times is not None:
        return remote_ending(kubelets.api, kubelets.start_times)
    processes = kubelets.processes or {}
    ending = run_ending(processes)
    if ending.engine_gone is not None:
        return ending
    stopped_nodes = [node for node in processes if any(node in s for s in ending.stopped)]
    # A kind node's clock is the host's.
    read_at = time.time_ns()
    renewals = last_renewals(kubelets.api, list(processes))
    young = {
        node: renewed
        for node in confirm
        if (renewed := renewals.get(node)) is not None and read_at - renewed <= RENEW_GAP_NS
    }
    settled = {node: renewed for node, renewed in renewals.items() if node not in young}
    frozen = stopped_renewing(settled, read_at, stopped_nodes)
    if young:
        watched = poll(
            lambda: last_renewals(kubelets.api, list(young)),
            until=lambda now: all(now.get(n) != renewed for n, renewed in young.items()),
            within=timeouts.LEASE_CONFIRM,
        )
        frozen += stopped_renewing(watched.last, time.time_ns(), stopped_nodes)
    return RunEnding(ending.errors, (*ending.stopped, *frozen), None)
