"""The check's observation loop on a fake clock: when it ends, and how.

The loop waits on the recorder; here the recorder's wait advances a fake
monotonic clock instead, so a 240s window takes microseconds and every ending
(observed, window over, fixed window, a silent node, a stop, a pod that never
ran) is reached exactly where the run would reach it.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import pytest

from crashloop_harness.cluster.kubeletstate import KubeletChanges
from crashloop_harness.core import timeouts
from crashloop_harness.recording.hostcpu import SaturatedSpan
from crashloop_harness.recording.nodepods import PodStartup
from crashloop_harness.recording.pace import PaceSample
from crashloop_harness.recording.recorder import Recorder
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.runs.check import CheckResult, judge, observe, take_sample
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES, CheckProfile, Need
from tests.unit.factories import FAST, attempts

NODE = "crashloop-worker"
ON_CURVE_TEN = [1.0] + [2.0] * 9  # ten restarts, every one on the fast curve
QUICK = CHECK_PROFILES["quick"]


@dataclass
class FakeClock:
    now: float = 1000.0

    def monotonic(self) -> float:
        return self.now


@dataclass
class FakeRecorder:
    """Attempts that appear at given fake times; every wait moves the clock on."""

    clock: FakeClock
    # (fake time, attempts known from then on)
    timeline: list[tuple[float, list[AttemptRecord]]] = field(default_factory=list)
    silent: list[str] = field(default_factory=list)
    # (fake time, message): a node whose runtime stopped answering from then on.
    broken: list[tuple[float, str]] = field(default_factory=list)
    # (fake time, pod name): a pod the watch saw deleted from then on.
    deleted: list[tuple[float, str]] = field(default_factory=list)
    # pod name -> why it cannot run, as its status says.
    blocked: dict[str, str] = field(default_factory=dict)
    waits: int = 0
    observer: str = "events"

    def attempts(self) -> list[AttemptRecord]:
        known: list[AttemptRecord] = []
        for at, records in self.timeline:
            if at <= self.clock.now:
                known = records
        return known

    def created_unstarted(self) -> dict[tuple[str, str], tuple[int, int]]:
        return {}

    def pending_backoffs(self) -> dict[tuple[str, str], tuple[int, float]]:
        return {}

    def listed_at_ns(self, _node: str) -> int | None:
        return None

    def levels_until_ns(self, _node: str) -> int | None:
        return None

    def unobserved(self, _node: str) -> list[tuple[int, int]]:
        return []

    def saturated(self) -> tuple[SaturatedSpan, ...]:
        return ()

    def pace_samples(self) -> dict[str, list[PaceSample]]:
        return {}

    def pod_startups(self) -> dict[str, list[PodStartup]]:
        return {}

    def silent_nodes(self, longer_than: float) -> list[str]:
        assert longer_than == timeouts.NODE_SILENT
        return list(self.silent)

    def broken_nodes(self) -> list[str]:
        return [message for at, message in self.broken if at <= self.clock.now]

    def deleted_pods(self) -> dict[str, str]:
        return {name: f"t={at:.0f}" for at, name in self.deleted if at <= self.clock.now}

    def not_running(self) -> dict[str, str]:
        return dict(self.blocked)

    def kubelet_changes(self, made: object = None) -> KubeletChanges:
        return KubeletChanges()

    def wait_for_change(self, timeout: float) -> None:
        self.waits += 1
        self.clock.now += timeout


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr("crashloop_harness.runs.check.time.monotonic", fake.monotonic)
    return fake


def _result(tmp_path: Path, profile: CheckProfile = QUICK) -> CheckResult:
    result = CheckResult(
        run_id="run",
        run_dir=tmp_path,
        profile=profile,
        rows=[],
        curves={"fast": FAST},
        nodes={"fast": NODE},
        needs={"fast": Need(min_restarts=10)},
        pods={"crashloop-fast": "fast"},
    )
    return result


def _watch(
    result: CheckResult, recorder: FakeRecorder, stop: threading.Event | None = None
) -> None:
    observe(result, cast(Recorder, recorder), None, stop)


def test_ends_observed_as_soon_as_every_worker_showed_its_need(
    clock: FakeClock, tmp_path: Path
) -> None:
    recorder = FakeRecorder(clock, [(1030.0, attempts(ON_CURVE_TEN))])
    result = _result(tmp_path)
    _watch(result, recorder)
    assert result.status == "observed"
    assert clock.now == pytest.approx(1030.0, abs=1.0)


def test_the_window_ends_in_a_timeout_that_names_the_worker(
    clock: FakeClock, tmp_path: Path
) -> None:
    recorder = FakeRecorder(clock, [(1000.0, attempts(ON_CURVE_TEN[:4]))])
    result = _result(tmp_path)
    _watch(result, recorder)
    assert result.status == "timeout"
    assert "fast showed what the profile needs" in result.reason
    assert clock.now - 1000.0 == pytest.approx(QUICK.timeout_s, abs=2.0)


def test_a_fixed_window_is_watched_to_its_end_whatever_was_seen(
    clock: FakeClock, tmp_path: Path
) -> None:
    fixed = CheckProfile("fixed", 60.0, QUICK.rule, fixed_window=True)
    recorder = FakeRecorder(clock, [(1000.0, attempts(ON_CURVE_TEN))])
    result = _result(tmp_path, fixed)
    _watch(result, recorder)
    assert result.status == "observed"
    assert result.reason == ""
    assert clock.now - 1000.0 == pytest.approx(60.0, abs=2.0)


def test_a_silent_node_ends_the_run_as_an_error_at_once(clock: FakeClock, tmp_path: Path) -> None:
    recorder = FakeRecorder(
        clock, [(1000.0, attempts(ON_CURVE_TEN[:4]))], silent=[f"{NODE}: not heard for 20s"]
    )
    result = _result(tmp_path)
    _watch(result, recorder)
    assert result.status == "error"
    assert NODE in result.reason
    assert recorder.waits == 0


def test_a_stop_from_another_thread_ends_it_interrupted(clock: FakeClock, tmp_path: Path) -> None:
    stop = threading.Event()
    stop.set()
    recorder = FakeRecorder(clock, [(1000.0, attempts(ON_CURVE_TEN[:4]))])
    result = _result(tmp_path)
    _watch(result, recorder, stop)
    assert result.status == "interrupted"
    assert recorder.waits == 0


def test_a_pod_that_never_runs_is_decided_at_its_deadline_not_at_the_windows(
    clock: FakeClock, tmp_path: Path
) -> None:
    recorder = FakeRecorder(clock, [])
    result = _result(tmp_path)
    _watch(result, recorder)
    assert result.status == "observed", "every worker decided: nothing left to wait for"
    (elapsed, why) = result.decided["fast"]
    assert "never ran" in why
    assert timeouts.POD_RUNNING < elapsed < QUICK.timeout_s
    assert clock.now - 1000.0 < QUICK.timeout_s


TAINTED = (
    "not scheduled: Unschedulable: 0/4 nodes are available: 1 node(s) had untolerated taint "
    "{drain: now}"
)


def test_a_pod_refused_by_its_node_is_an_error_naming_the_cause_never_a_failure(
    clock: FakeClock, tmp_path: Path
) -> None:
    recorder = FakeRecorder(clock, [], blocked={"crashloop-fast": TAINTED})
    result = _result(tmp_path)
    _watch(result, recorder)
    assert TAINTED in result.decided["fast"][1]
    judge(result, {"fast": 10})
    assert result.status == "error", result.reason
    verdict = result.verdicts["fast"]
    assert verdict.in_error
    assert verdict.errors[0].code == "pod-not-run"
    assert "untolerated taint" in result.reason
    # With no cause on its status, a pod that never ran stays the kubelet's failure.
    bare = _result(tmp_path)
    _watch(bare, FakeRecorder(clock, []))
    judge(bare, {"fast": 10})
    assert bare.status == "failed"


REFUSED_BY_TAINT = (
    "the node refused the pod: TaintToleration: Pod was rejected: Predicate TaintToleration "
    "failed: node(s) had taints that the pod didn't tolerate"
)


def test_a_pod_its_node_refused_is_decided_at_once_and_its_eviction_ends_nothing(
    clock: FakeClock, tmp_path: Path
) -> None:
    """A NoExecute taint: the kubelet refuses the pod, the taint's eviction deletes it next.
    The refusal is final, so it is decided at once, and the deletion that follows is its
    consequence, not someone else's doing: the run observes its other nodes on."""
    result = _result(tmp_path)
    result.curves["other"] = FAST
    result.nodes["other"] = "crashloop-worker2"
    result.needs["other"] = Need(min_restarts=3)
    result.pods["crash-other"] = "other"
    other = [dataclasses.replace(r, pod="crash-other") for r in attempts([1.0, 2.5, 2.5, 2.5])]
    recorder = FakeRecorder(
        clock,
        [(1010.0, other)],
        deleted=[(1001.0, "crashloop-fast")],
        blocked={"crashloop-fast": REFUSED_BY_TAINT},
    )
    _watch(result, recorder)
    assert result.status == "observed", result.reason
    elapsed, words = result.decided["fast"]
    assert elapsed < 5.0
    assert "the pod never ran: the node refused the pod: TaintToleration" in words
    judge(result, {"fast": 10, "other": 3})
    assert result.verdicts["fast"].in_error
    assert result.verdicts["other"].passed, result.verdicts["other"].failures


def test_a_restart_off_the_curve_decides_the_worker_early(clock: FakeClock, tmp_path: Path) -> None:
    late = [1.0, 2.0, 30.0]  # the third restart 30s after a 2s back-off: far over its bound
    recorder = FakeRecorder(clock, [(1010.0, attempts(late))])
    result = _result(tmp_path)
    _watch(result, recorder)
    assert result.status == "observed"
    assert "restart 3" in result.decided["fast"][1]
    assert clock.now - 1000.0 < QUICK.timeout_s


LATE_THIRD = [1.0, 2.0, 30.0]  # the third restart 30s after a 2s back-off: far over its bound


def test_a_broken_runtime_ends_the_run_as_an_error_whatever_was_decided(
    clock: FakeClock, tmp_path: Path
) -> None:
    broken = f"the container runtime of node {NODE} stopped answering: crictl ps failed"
    recorder = FakeRecorder(clock, [(1000.0, attempts(LATE_THIRD))], broken=[(1020.0, broken)])
    result = CheckResult(
        run_id="run",
        run_dir=tmp_path,
        profile=CheckProfile("fixed", 60.0, QUICK.rule, fixed_window=True),
        rows=[],
        curves={"fast": FAST},
        nodes={"fast": NODE},
        needs={"fast": Need(min_restarts=10)},
        pods={"crashloop-fast": "fast"},
    )
    _watch(result, recorder)
    assert "restart 3" in result.decided["fast"][1], "decided before the runtime broke"
    assert result.status == "error"
    assert broken in result.reason
    assert "is containerd running" in result.reason
    assert clock.now == pytest.approx(1020.0, abs=1.0), "at once, not at the window's end"
    judge(result, {"fast": 10})
    assert result.status == "error"


def test_a_measured_pod_deleted_mid_run_is_an_error_never_a_failure(
    clock: FakeClock, tmp_path: Path
) -> None:
    # Its restarts stop with it: left alone, the window would end it incomplete.
    recorder = FakeRecorder(
        clock, [(1000.0, attempts(ON_CURVE_TEN[:4]))], deleted=[(1010.0, "crashloop-fast")]
    )
    result = _result(tmp_path)
    _watch(result, recorder)
    assert result.status == "error"
    assert clock.now == pytest.approx(1010.0, abs=1.0)
    assert (
        "pod crashloop-fast (worker fast) was deleted during the run (by someone else: the "
        "kubelet did nothing wrong)"
    ) in result.reason
    judge(result, {"fast": 10})
    assert result.status == "error"


def test_a_pod_the_check_does_not_measure_may_come_and_go(clock: FakeClock, tmp_path: Path) -> None:
    recorder = FakeRecorder(
        clock, [(1030.0, attempts(ON_CURVE_TEN))], deleted=[(1000.0, "someone-elses")]
    )
    result = _result(tmp_path)
    _watch(result, recorder)
    assert result.status == "observed"


def test_an_early_decision_the_end_does_not_uphold_waives_no_restart(
    clock: FakeClock, tmp_path: Path
) -> None:
    # The pod is flagged "never ran" at its deadline, then runs after all, 184 s in: one of
    # its ten restarts is seen when the run ends. That is no pass: the decision no longer
    # holds, so the worker owes its whole need (it passed with an empty reason before).
    late_start = 1000.0 + timeouts.POD_RUNNING + 4.0
    recorder = FakeRecorder(clock, [(late_start, attempts(ON_CURVE_TEN[:1]))])
    result = _result(tmp_path)
    _watch(result, recorder)
    assert "never ran" in result.decided["fast"][1]
    clock.now = late_start + 1.0
    take_sample(result, cast(Recorder, recorder))
    result.status = "observed"
    judge(result, {"fast": 10})
    assert result.status == "failed", result.reason
    assert "incomplete" in result.reason
    assert "restarts up to 10" in result.reason
