"""How a run's ending overrides its verdicts, and says each cause once."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from crashloop_harness.cluster.kubeletstate import KubeletChanges
from crashloop_harness.cluster.target import RunEnding
from crashloop_harness.recording.recorder import Recorder
from crashloop_harness.runs.ending import apply_ending, stop_reason
from crashloop_harness.runs.lifecycle import RunState

RESTARTED = (
    "the kubelet of node w1 restarted during the run (pid 1 -> 2): its back-off state was "
    "wiped, so later restarts follow a new curve"
)


def test_a_restart_seen_mid_run_is_not_repeated_when_the_end_sees_it_too() -> None:
    state = RunState(run_id="r", run_dir=Path("r"), status="error", reason=RESTARTED)
    apply_ending(state, RunEnding(errors=(RESTARTED,), stopped={}, engine_gone=None))
    assert state.status == "error"
    assert state.reason == RESTARTED


def test_an_error_at_the_end_overrides_a_pass_and_keeps_the_reason_before_it() -> None:
    state = RunState(run_id="r", run_dir=Path("r"), status="passed", reason="all good")
    apply_ending(state, RunEnding(errors=(RESTARTED,), stopped={}, engine_gone=None))
    assert state.status == "error"
    assert state.reason == f"all good; {RESTARTED}"


def test_a_stopped_kubelet_makes_the_run_an_error_unless_it_was_interrupted() -> None:
    said = "the kubelet of node w1 stopped during the run (pid 5 exited) and was not restarted"
    stopped = {"w1": said}
    state = RunState(run_id="r", run_dir=Path("r"), status="passed")
    apply_ending(state, RunEnding(errors=(), stopped=stopped, engine_gone=None))
    assert (state.status, state.reason) == ("error", said)
    assert state.stopped_kubelets == stopped
    failed = RunState(run_id="r", run_dir=Path("r"), status="failed", reason="default: overdue")
    apply_ending(failed, RunEnding(errors=(), stopped=stopped, engine_gone=None))
    assert (failed.status, failed.reason) == ("error", f"{said}; default: overdue")
    interrupted = RunState(run_id="r", run_dir=Path("r"), status="interrupted")
    apply_ending(interrupted, RunEnding(errors=(), stopped=stopped, engine_gone=None))
    assert interrupted.status == "interrupted"


@dataclass
class _Recorder:
    """What stop_reason asks of a recorder, as given."""

    silent: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)
    deleted: dict[str, str] = field(default_factory=dict)
    observer: str = "events"

    def silent_nodes(self, longer_than: float) -> list[str]:
        del longer_than
        return self.silent

    def broken_nodes(self) -> list[str]:
        return self.broken

    def kubelet_changes(self, made: object = None) -> KubeletChanges:
        return KubeletChanges()

    def deleted_pods(self) -> dict[str, str]:
        return self.deleted

    def not_running(self) -> dict[str, str]:
        return {}


def _stop_reason(recorder: _Recorder, measured: dict[str, str] | None = None) -> str | None:
    return stop_reason(cast(Recorder, recorder), measured)


BROKEN = "the container runtime of node w1 stopped answering: crictl ps failed: 'refused'"


def test_a_broken_runtime_is_named_with_what_to_look_at() -> None:
    reason = _stop_reason(_Recorder(broken=[BROKEN]))
    assert reason is not None
    assert reason.startswith(BROKEN)
    assert "systemctl status containerd" in reason


def test_a_silent_node_is_named_before_a_broken_one() -> None:
    reason = _stop_reason(_Recorder(silent=["node w2 has not answered for 61s"], broken=[BROKEN]))
    assert reason is not None
    assert reason.startswith("node w2 has not answered")
    assert "Docker engine" in reason


def test_a_measured_pod_deleted_is_named_with_its_worker() -> None:
    recorder = _Recorder(deleted={"crash-fast": "2026-01-01T10:00:00+00:00", "other": "x"})
    reason = _stop_reason(recorder, {"crash-fast": "fast", "runs-5s-fast": "fast/runs-5s"})
    assert reason is not None
    assert reason.startswith(
        "pod crash-fast (worker fast) was deleted during the run "
        "(by someone else: the kubelet did nothing wrong), seen at 2026-01-01T10:00:00+00:00"
    )
    assert "other" not in reason
    variant = _stop_reason(
        _Recorder(deleted={"runs-5s-fast": "t"}), {"runs-5s-fast": "fast/runs-5s"}
    )
    assert variant is not None
    assert variant.startswith("pod runs-5s-fast (worker fast) was deleted")


def test_a_run_that_names_no_measured_pods_deletes_its_own() -> None:
    # The scenarios delete and recreate pods on purpose.
    assert _stop_reason(_Recorder(deleted={"crash-fast": "t"})) is None
