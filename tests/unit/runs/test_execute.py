"""The one run lifecycle: every step in its order, and the same ending whatever happened."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest

from crashloop_harness.cluster.target import RunEnding, RunTarget
from crashloop_harness.runs import execute as lifecycle_module
from crashloop_harness.runs.execute import execute
from crashloop_harness.runs.lifecycle import RunSetup, RunState

FINISHED = datetime(2026, 12, 5, 5, 0, tzinfo=UTC)


@dataclass
class _Trace:
    calls: list[str]

    def close(self) -> None:
        self.calls.append("trace closed")


@dataclass
class _Recorder:
    calls: list[str]
    trace: _Trace = field(init=False)

    def __post_init__(self) -> None:
        self.trace = _Trace(self.calls)

    def start(self) -> None:
        self.calls.append("recorder started")


@dataclass
class _Steps:
    calls: list[str]
    fail_in: str | None = None
    raise_what: BaseException = field(default_factory=lambda: RuntimeError("boom"))
    interrupted_reason: str = "interrupted before every worker was observed"

    def _step(self, name: str) -> None:
        self.calls.append(name)
        if name == self.fail_in:
            raise self.raise_what

    def deploy(self, setup: RunSetup, result: RunState) -> None:
        self._step("deploy")

    def observe(self, setup: RunSetup, result: RunState) -> None:
        self._step("observe")
        result.status = self.verdict

    verdict: str = "failed"

    def stop(self, setup: RunSetup, result: RunState) -> None:
        self._step("stop")

    def conclude(self, setup: RunSetup, result: RunState, ending: RunEnding) -> None:
        self.calls.append(f"conclude ({result.status})")
        if ending.errors:
            result.status = "error"

    def write(self, setup: RunSetup, result: RunState, cluster: RunTarget) -> None:
        self.calls.append("write")


@dataclass
class _Watch:
    calls: list[str]
    ending_is: RunEnding = field(default_factory=lambda: RunEnding((), {}, None))
    fail: bool = False

    def ending(self, confirm: object = (), made: object = None) -> RunEnding:
        self.calls.append("ending read")
        if self.fail:
            raise OSError("kubelets unreadable")
        return self.ending_is


@dataclass
class _Cluster:
    """The cluster-facing part of a run, each call recorded (RunTarget's run-time half)."""

    calls: list[str]
    watch: _Watch = field(init=False)
    fail_in: str | None = None

    def __post_init__(self) -> None:
        self.watch = _Watch(self.calls, fail=self.fail_in == "ending read")

    def kubelets_at_start(self, api: object, nodes: object) -> _Watch:
        self.calls.append("kubelets read")
        return self.watch

    def gather_evidence(self, api: object, namespace: str, into: Path, *, run: object) -> None:
        self.calls.append("evidence")
        if self.fail_in == "evidence":
            raise OSError("evidence unreadable")


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every step execute() takes, the ones beyond the cluster replaced by records of the call."""
    seen: list[str] = []

    def record(name: str, value: Any = None) -> Any:
        def step(*_args: object, **_kwargs: object) -> Any:
            seen.append(name)
            return value

        return step

    monkeypatch.setattr(lifecycle_module, "trace_outcome", record("outcome traced"))
    monkeypatch.setattr(lifecycle_module, "clean_up", record("cleaned up"))
    return seen


def _run(calls: list[str], steps: _Steps, cluster: _Cluster | None = None) -> RunState:
    return _run_into(calls, steps, RunState(run_id="r", run_dir=Path("runs/r")), cluster)


def _run_into(
    calls: list[str], steps: _Steps, result: RunState, cluster: _Cluster | None = None
) -> RunState:
    setup = cast(
        RunSetup,
        type(
            "Setup",
            (),
            {
                "api": None,
                "nodes": {"fast": "n1"},
                "namespace": "ns",
                "run_id": "r",
                "run_dir": Path("runs/r"),
                "owns_namespace": True,
                "recorder": _Recorder(calls),
            },
        )(),
    )
    target = cast(RunTarget, cluster or _Cluster(calls))
    return execute(target, setup, result, steps, now=lambda: FINISHED)


THE_ENDING = [
    "stop",
    "ending read",
    "conclude",
    "outcome traced",
    "trace closed",
    "write",
    "evidence",
    "cleaned up",
]


def _ending(calls: list[str]) -> list[str]:
    return [c.split(" (")[0] for c in calls[calls.index("stop") :]]


def test_the_steps_run_once_each_in_their_order(calls: list[str]) -> None:
    result = _run(calls, _Steps(calls))
    assert calls[:4] == ["kubelets read", "recorder started", "deploy", "observe"]
    assert _ending(calls) == THE_ENDING
    assert "conclude (failed)" in calls
    assert result.finished_at == FINISHED


def test_a_passed_run_gathers_no_evidence(calls: list[str]) -> None:
    _run(calls, _Steps(calls, verdict="passed"))
    assert _ending(calls) == [step for step in THE_ENDING if step != "evidence"]


def test_an_interruption_is_judged_written_and_cleaned_up_like_any_run(calls: list[str]) -> None:
    steps = _Steps(calls, fail_in="observe", raise_what=KeyboardInterrupt())
    result = _run(calls, steps)
    assert result.status == "interrupted"
    assert result.reason == steps.interrupted_reason
    # Nothing failed: an interrupted run keeps what it measured and needs no evidence.
    assert _ending(calls) == [step for step in THE_ENDING if step != "evidence"]


def test_an_unexpected_error_ends_the_run_in_error_then_goes_on(calls: list[str]) -> None:
    with pytest.raises(RuntimeError, match="boom"):
        _run(calls, _Steps(calls, fail_in="deploy"))
    assert "observe" not in calls
    assert "conclude (error)" in calls
    assert _ending(calls) == THE_ENDING


def test_the_ending_has_its_say_after_the_verdicts(calls: list[str]) -> None:
    cluster = _Cluster(calls)
    cluster.watch.ending_is = RunEnding(("the kubelet of node n1 restarted",), {}, None)
    assert _run(calls, _Steps(calls, verdict="passed"), cluster).status == "error"


@dataclass
class _FailingEndStep(_Steps):
    """Steps whose ending step ``fail_at_end`` raises."""

    fail_at_end: str = "write"

    def stop(self, setup: RunSetup, result: RunState) -> None:
        self.calls.append("stop")
        if self.fail_at_end == "stop":
            raise OSError("the recorder would not stop")

    def write(self, setup: RunSetup, result: RunState, cluster: RunTarget) -> None:
        self.calls.append("write")
        if self.fail_at_end == "write":
            raise OSError("disk full")


def test_outputs_that_fail_still_leave_evidence_and_a_clean_namespace(calls: list[str]) -> None:
    with pytest.raises(OSError, match="disk full"):
        _run(calls, _FailingEndStep(calls, fail_at_end="write"))
    assert _ending(calls) == THE_ENDING


def test_a_stop_that_fails_ends_the_run_in_error_whatever_the_verdicts(
    calls: list[str],
) -> None:
    steps = _FailingEndStep(calls, fail_at_end="stop")
    result = RunState(run_id="r", run_dir=Path("runs/r"))
    with pytest.raises(OSError, match="would not stop") as raised:
        _run_into(calls, steps, result)
    assert _ending(calls) == THE_ENDING
    # The verdict saw the failure as the ending's error: no pass may be claimed.
    assert "conclude (error)" in calls
    assert result.status == "error"
    assert "the run's stop failed" in result.reason
    assert not getattr(raised.value, "__notes__", [])


def test_every_later_failure_is_a_note_on_the_first(
    calls: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_cleanup(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("namespace stuck")

    monkeypatch.setattr(lifecycle_module, "clean_up", no_cleanup)
    with pytest.raises(OSError, match="disk full") as raised:
        _run(calls, _FailingEndStep(calls, fail_at_end="write"))
    assert raised.value.__notes__ == [
        "then the run's clean-up failed too: RuntimeError: namespace stuck"
    ]


@dataclass
class _FailingAt(_Steps):
    """Steps that raise in their own ending step ``at``, if it is one of theirs."""

    at: str = "write"

    def stop(self, setup: RunSetup, result: RunState) -> None:
        self._at("stop")

    def conclude(self, setup: RunSetup, result: RunState, ending: RunEnding) -> None:
        super().conclude(setup, result, ending)
        if self.at == "conclude":
            raise ValueError("a verdict bug")

    def write(self, setup: RunSetup, result: RunState, cluster: RunTarget) -> None:
        self._at("write")

    def _at(self, name: str) -> None:
        self.calls.append(name)
        if self.at == name:
            raise OSError(f"{name} broke")


@pytest.mark.parametrize("broken", [s for s in THE_ENDING if s != "cleaned up"])
def test_evidence_and_clean_up_run_whatever_ending_step_raised(
    calls: list[str], monkeypatch: pytest.MonkeyPatch, broken: str
) -> None:
    def raising(*_args: object, **_kwargs: object) -> None:
        calls.append(broken)
        raise OSError(f"{broken} broke")

    if broken == "outcome traced":
        monkeypatch.setattr(lifecycle_module, "trace_outcome", raising)
    if broken == "trace closed":
        monkeypatch.setattr(_Trace, "close", lambda _self: raising())
    cluster = _Cluster(calls, fail_in=broken)
    result = RunState(run_id="r", run_dir=Path("runs/r"))
    # Evidence is gathered only for a failure: that case starts from one.
    verdict = "failed" if broken == "evidence" else "passed"
    with pytest.raises((OSError, ValueError)):
        _run_into(calls, _FailingAt(calls, verdict=verdict, at=broken), result, cluster)
    # A raising step makes the run an error, and an error's evidence is gathered.
    assert result.status == "error"
    assert _ending(calls) == THE_ENDING, broken
