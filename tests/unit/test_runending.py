"""How a run's ending overrides its verdicts, and says each cause once."""

from __future__ import annotations

from pathlib import Path

from harness.runs.ending import RunEnding, apply_ending
from harness.runs.lifecycle import RunState

RESTARTED = (
    "the kubelet of node w1 restarted during the run (pid 1 -> 2): its back-off state was "
    "wiped, so later restarts follow a new curve"
)


def test_a_restart_seen_mid_run_is_not_repeated_when_the_end_sees_it_too() -> None:
    state = RunState(run_id="r", run_dir=Path("r"), status="error", reason=RESTARTED)
    apply_ending(state, RunEnding(errors=(RESTARTED,), stopped=(), engine_gone=None))
    assert state.status == "error"
    assert state.reason == RESTARTED


def test_an_error_at_the_end_overrides_a_pass_and_keeps_the_reason_before_it() -> None:
    state = RunState(run_id="r", run_dir=Path("r"), status="passed", reason="all good")
    apply_ending(state, RunEnding(errors=(RESTARTED,), stopped=(), engine_gone=None))
    assert state.status == "error"
    assert state.reason == f"all good; {RESTARTED}"


def test_a_stopped_kubelet_fails_the_run_unless_it_was_interrupted() -> None:
    stopped = (
        "the kubelet of node w1 stopped during the run (pid 5 exited) and was not restarted",
    )
    state = RunState(run_id="r", run_dir=Path("r"), status="passed")
    apply_ending(state, RunEnding(errors=(), stopped=stopped, engine_gone=None))
    assert (state.status, state.reason) == ("failed", stopped[0])
    interrupted = RunState(run_id="r", run_dir=Path("r"), status="interrupted")
    apply_ending(interrupted, RunEnding(errors=(), stopped=stopped, engine_gone=None))
    assert interrupted.status == "interrupted"
