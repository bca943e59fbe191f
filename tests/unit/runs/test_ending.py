"""How a run's ending overrides its verdicts, and says each cause once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest

from crashloop_harness.cluster.kubeletstate import KubeletChanges, KubeletProcess
from crashloop_harness.core.polling import Polled
from crashloop_harness.recording.recorder import Recorder
from crashloop_harness.runs.ending import (
    KubeletsAtStart,
    RunEnding,
    apply_ending,
    ending_of,
    stop_reason,
)
from crashloop_harness.runs.lifecycle import RunState

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


def test_a_stopped_kubelet_makes_the_run_an_error_unless_it_was_interrupted() -> None:
    stopped = (
        "the kubelet of node w1 stopped during the run (pid 5 exited) and was not restarted",
    )
    state = RunState(run_id="r", run_dir=Path("r"), status="passed")
    apply_ending(state, RunEnding(errors=(), stopped=stopped, engine_gone=None))
    assert (state.status, state.reason) == ("error", stopped[0])
    failed = RunState(run_id="r", run_dir=Path("r"), status="failed", reason="default: overdue")
    apply_ending(failed, RunEnding(errors=(), stopped=stopped, engine_gone=None))
    assert (failed.status, failed.reason) == ("error", f"{stopped[0]}; default: overdue")
    interrupted = RunState(run_id="r", run_dir=Path("r"), status="interrupted")
    apply_ending(interrupted, RunEnding(errors=(), stopped=stopped, engine_gone=None))
    assert interrupted.status == "interrupted"


@dataclass
class _Recorder:
    """What stop_reason asks of a recorder, as given."""

    silent: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)
    deleted: dict[str, str] = field(default_factory=dict)

    def silent_nodes(self, longer_than: float) -> list[str]:
        del longer_than
        return self.silent

    def broken_nodes(self) -> list[str]:
        return self.broken

    def kubelet_changes(self) -> KubeletChanges:
        return KubeletChanges()

    def deleted_pods(self) -> dict[str, str]:
        return self.deleted


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


NS = 1_000_000_000


def _ending_with_leases(
    monkeypatch: pytest.MonkeyPatch,
    readings: Sequence[Mapping[str, int | None]],
    confirm: set[str],
) -> RunEnding:
    """ending_of on a kind cluster whose kubelet processes are unchanged, reading the Leases
    from ``readings`` in turn (the first at the end, the next while confirming)."""
    clock = [2_000 * NS]
    monkeypatch.setattr("crashloop_harness.runs.ending.time.time_ns", lambda: clock[0])
    monkeypatch.setattr("crashloop_harness.runs.ending.engine_gone_reason", lambda: None)
    process = KubeletProcess(pid=7, active_since_us=1)
    monkeypatch.setattr(
        "crashloop_harness.runs.ending.kubeletstate.snapshot",
        lambda nodes: dict.fromkeys(nodes, process),
    )
    answers = iter(readings)
    monkeypatch.setattr(
        "crashloop_harness.runs.ending.last_renewals", lambda _api, nodes: next(answers)
    )

    def poll_once(read: Any, until: Any, **_: Any) -> Polled[Any]:
        clock[0] += 15 * NS  # the watch lasts its LEASE_CONFIRM when nothing is renewed
        last = read()
        return Polled(until(last), last)

    monkeypatch.setattr("crashloop_harness.runs.ending.poll", poll_once)
    kubelets = KubeletsAtStart(cast(Any, None), {"w1": process, "w2": process}, None)
    return ending_of(kubelets, confirm)


def test_a_kubelet_frozen_just_before_the_end_is_said_stopped_once_its_lease_lapses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its Lease renewed 5 s before the end: too early to tell, so the ending watches it for a
    renewal period; no renewal comes, and it is said stopped like an exited kubelet."""
    at_end = {"w1": 1_995 * NS, "w2": 1_996 * NS}
    lapsed = {"w1": 1_995 * NS}
    (said,) = _ending_with_leases(monkeypatch, [at_end, lapsed], confirm={"w1"}).stopped
    assert said.startswith("the kubelet of node w1 stopped answering")
    renewed = {"w1": 2_004 * NS}
    alive = _ending_with_leases(monkeypatch, [at_end, renewed], confirm={"w1"})
    assert alive.stopped == ()


def test_a_kubelet_whose_lease_lapsed_is_said_stopped_without_waiting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at_end = {"w1": 1_930 * NS, "w2": 1_996 * NS}
    ending = _ending_with_leases(monkeypatch, [at_end], confirm={"w1"})
    (said,) = ending.stopped
    assert said.startswith("the kubelet of node w1 stopped answering: its Lease was last renewed")
