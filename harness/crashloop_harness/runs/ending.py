"""What a measured run's ending does to its status, and why a run must end early.

A kubelet that restarted wiped its back-off state, one that stopped restarts
nothing more (the verdicts still say which restart went overdue), an engine
that went away leaves nothing to ask: each makes the run an error, never a
pass and never a plain failure, as JUnit's ``<error>`` says of the same node.
How each is read depends on the kind of cluster
(:meth:`~crashloop_harness.cluster.target.RunTarget.kubelets_at_start`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from crashloop_harness.cluster.kubeletstate import KubeletProcess
from crashloop_harness.cluster.target import RunEnding
from crashloop_harness.core import timeouts
from crashloop_harness.model.subject import worker_of
from crashloop_harness.recording.recorder import AttemptRecorder
from crashloop_harness.recording.trace import Tap
from crashloop_harness.runs.lifecycle import RunState

# The ending of a run whose ending could not be read (its reading raised): no pass or fail
# may be claimed, and the cluster is still asked for its evidence and its clean-up.
NO_ENDING_READ: Final = RunEnding(("the run's ending could not be read",), {}, None)


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
        said = "; ".join(ending.stopped.values())
        state.reason = _joined(said, [state.reason] if state.reason else [])
    # Kept by node, so that JUnit names each stopped node's worker an error without
    # reading the reason back.
    state.stopped_kubelets = dict(ending.stopped)


def trace_outcome(trace: Tap, result: RunState, ending: RunEnding) -> None:
    """How the run ended and what it concluded, for a replay to compare with."""
    trace.write(
        "ending",
        errors=list(ending.errors),
        stopped=list(ending.stopped.values()),
        stopped_nodes=list(ending.stopped),
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


def stop_reason(
    recorder: AttemptRecorder,
    measured_pods: Mapping[str, str] | None = None,
    made: Mapping[str, KubeletProcess] | None = None,
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

    ``made``: the kubelet processes the run's own restarts started, by node
    (a scenario that restarts kubelets on purpose): not a reason to end.
    """
    silent = recorder.silent_nodes(longer_than=timeouts.NODE_SILENT)
    if silent and recorder.observer == "selfreport":
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
    restarted = recorder.kubelet_changes(made).restarted
    if restarted:
        return "; ".join(restarted)
    deleted = deleted_during_run(recorder.deleted_pods(), measured_pods or {})
    if deleted:
        return "; ".join(deleted) + ": run it again, and leave its pods alone until it ends"
    return None


def deleted_during_run(deleted: Mapping[str, str], measured_pods: Mapping[str, str]) -> list[str]:
    """One message per measured pod the run saw deleted, evicted or replaced, by name."""
    return [
        f"pod {name} (worker {worker_of(measured_pods[name])}) was deleted during the run "
        f"(by someone else: the kubelet did nothing wrong), seen at {deleted[name]}"
        for name in sorted(deleted.keys() & measured_pods.keys())
    ]
