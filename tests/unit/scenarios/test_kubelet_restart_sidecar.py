"""A kubelet restarted under an app beside a sidecar: when the run restarts it, and the verdict."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

import pytest

from crashloop_harness.cluster.kubeletstate import KubeletProcess, KubeletRestart
from crashloop_harness.core import timeouts
from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.scenarios import kubelet_restart_sidecar as kr
from crashloop_harness.scenarios.common import Subject, WorkerResult
from tests.unit.factories import DEFAULT, FAST, NS, REDUCED, T0, attempts

RUN_S = kr.RUN_FOR.total_seconds()
# The kubelet is asked to restart 2s into the app's attempt 2, and answers 5s later.
ASK_AFTER_S = 2.0
BACK_AFTER_S = 5.0


def _app(delays_s: Sequence[float], *, last_running: bool = False) -> list[AttemptRecord]:
    """Attempt 0 plus one per delay, each working RUN_FOR before it exits."""
    return attempts(delays_s, runs_s=[RUN_S] * (len(delays_s) + 1), last_running=last_running)


def _sidecar(started_ns: int = T0 - 5 * NS, attempt_count: int = 1) -> list[AttemptRecord]:
    one = _app([])[0]
    return [
        dataclasses.replace(
            one,
            container=kr.SIDECAR_CONTAINER,
            attempt=n,
            started_at_ns=started_ns + n * NS,
            finished_at_ns=None if n == attempt_count - 1 else started_ns + n * NS + NS // 2,
            exit_code=None,
        )
        for n in range(attempt_count)
    ]


def _restart(app: Sequence[AttemptRecord], *, back: bool = True) -> KubeletRestart:
    """The run's restart of the kubelet, ASK_AFTER_S into the app's attempt BEFORE."""
    asked = next(r for r in app if r.attempt == kr.BEFORE).started_at_ns + int(ASK_AFTER_S * NS)
    return KubeletRestart(
        node="crashloop-worker",
        before=KubeletProcess(100, 1),
        after=KubeletProcess(200, 2),
        asked_ns=asked,
        active_ns=asked + NS // 10,
        back_ns=asked + int(BACK_AFTER_S * NS) if back else None,
    )


def _judge(
    app: Sequence[AttemptRecord],
    curve: BackoffCurve = DEFAULT,
    *,
    sidecar: Sequence[AttemptRecord] | None = None,
    restart: KubeletRestart | None = None,
) -> WorkerResult:
    return kr.kubelet_restart_sidecar(
        Subject("default", "crashloop-worker", curve),
        app=app,
        sidecar=_sidecar() if sidecar is None else sidecar,
        restart=restart or _restart(app),
        app_restart_count=max(r.attempt for r in app),
    )


# On the default curve: restarts 1 and 2 before (0s, 10s), the kubelet restarted in attempt 2;
# then a fresh curve: attempt 2's exit restarted at once, the next after 10s.
BEFORE_S = [0.0, 10.0]
FRESH_S = [0.0, 10.0]


def test_the_app_restarting_on_a_fresh_curve_after_the_kubelet_s_restart_passes() -> None:
    app = _app(BEFORE_S + FRESH_S)
    result = _judge(app)
    assert result.passed, result.failures
    assert result.metric(kr.HEADLINE.metric).measured == kr.AFTER
    assert result.metric("app_restarts_before_kubelet_restart").measured == kr.BEFORE
    first = result.metric("after_return_restart_1_s")
    assert (first.expected, first.measured) == (0.0, 0.0)
    assert result.metric("after_return_restart_2_s").expected == DEFAULT.initial.total_seconds()
    assert result.metric("kubelet_restarted").measured == 1
    assert result.metric("sidecar_age_at_kubelet_restart_s").measured == pytest.approx(
        5 + RUN_S * 2 + 10 + ASK_AFTER_S
    )


@pytest.mark.parametrize("curve", [FAST, REDUCED, DEFAULT], ids=["fast", "reduced", "default"])
def test_every_curve_starts_afresh_after_the_kubelet_s_restart(curve: BackoffCurve) -> None:
    before = [curve.delay_before_restart(n).total_seconds() for n in (1, 2)]
    fresh = [curve.delay_before_restart(n).total_seconds() for n in (1, 2)]
    assert _judge(_app(before + fresh), curve).passed


def test_an_app_never_restarted_after_the_kubelet_s_restart_fails() -> None:
    # #136969: attempt 2 exits after the kubelet is back, and nothing starts again.
    result = _judge(_app(BEFORE_S))
    assert not result.passed
    headline = result.metric(kr.HEADLINE.metric)
    assert (headline.measured, headline.passed) == (0, False)
    for n in (1, 2):
        missing = result.metric(f"after_return_restart_{n}_s")
        assert missing.measured is None
        assert not missing.passed
        assert "was not restarted" in missing.detail
    # What came before is still seen as it was: the failure is the app's stop alone.
    assert result.metric("kubelet_restarted").passed
    assert result.metric("app_restarts_before_kubelet_restart").passed
    assert result.metric("sidecar_restarts").passed


def test_one_restart_after_the_return_then_none_fails_the_count() -> None:
    result = _judge(_app(BEFORE_S + FRESH_S[:1]))
    assert result.metric("after_return_restart_1_s").passed
    assert not result.metric("after_return_restart_2_s").passed
    assert not result.metric(kr.HEADLINE.metric).passed


def test_a_back_off_kept_across_the_kubelet_s_restart_fails_against_the_source() -> None:
    # Had the back-off outlived the kubelet, attempt 2's exit would wait restart 3's 20s.
    result = _judge(_app([*BEFORE_S, DEFAULT.delay_before_restart(3).total_seconds(), 40.0]))
    first = result.metric("after_return_restart_1_s")
    assert first.expected == 0.0
    assert not first.passed
    assert not result.passed


def test_an_exit_before_the_kubelet_was_back_counts_from_its_return() -> None:
    app = _app(BEFORE_S + FRESH_S)
    # The kubelet came back 1s after attempt 2 had exited; attempt 3 started at its return.
    exit_2 = next(r for r in app if r.attempt == 2).finished_at_ns
    assert exit_2 is not None
    late = dataclasses.replace(_restart(app), back_ns=exit_2 + NS)
    app = [
        dataclasses.replace(r, started_at_ns=r.started_at_ns + NS, finished_at_ns=None)
        if r.attempt == 3
        else r
        for r in app
        if r.attempt <= 3
    ]
    result = _judge(app, restart=late)
    assert result.metric("after_return_restart_1_s").measured == pytest.approx(0.0)
    assert any("before the kubelet was back" in note for note in result.notes)


def test_a_kubelet_that_did_not_come_back_is_no_restart_made() -> None:
    app = _app(BEFORE_S)
    result = _judge(app, restart=_restart(app, back=False))
    restarted = result.metric("kubelet_restarted")
    assert (restarted.measured, restarted.passed) == (0, False)
    assert "not answering /healthz" in restarted.detail


def test_a_sidecar_that_restarted_or_started_too_late_fails_its_part() -> None:
    app = _app(BEFORE_S + FRESH_S)
    restarted = _judge(app, sidecar=_sidecar(attempt_count=2))
    assert not restarted.metric("sidecar_restarts").passed
    asked = _restart(app).asked_ns
    young = _judge(app, sidecar=_sidecar(started_ns=asked - 3 * NS))
    age = young.metric("sidecar_age_at_kubelet_restart_s")
    assert age.lower == kr.RESTART_GRACE.total_seconds()
    assert not age.passed


def test_a_worker_whose_kubelet_was_never_restarted_measured_nothing() -> None:
    result = kr.kubelet_restart_sidecar(
        Subject("fast", "crashloop-worker", FAST),
        app=_app([0.0]),
        sidecar=_sidecar(),
        restart=None,
        app_restart_count=1,
    )
    assert not result.passed
    assert "never restarted" in result.metric(kr.HEADLINE.metric).detail


# --- when the run restarts the kubelet, and when it stops waiting --------------------------


def test_the_restart_is_due_in_a_fresh_attempt_from_restart_before_on() -> None:
    now = time.time_ns()
    running = _app([0.0, 0.0], last_running=True)
    shifted = [
        dataclasses.replace(r, started_at_ns=now - NS) if r.attempt == 2 else r for r in running
    ]
    assert kr.restart_due(shifted, now)
    # Too early in the loop, too late in the attempt, or between attempts: not yet.
    assert not kr.restart_due(shifted[:2], now)
    old = now - 2 * int(kr.RESTART_WINDOW.total_seconds() * NS)
    assert not kr.restart_due(
        [dataclasses.replace(r, started_at_ns=old) if r.attempt == 2 else r for r in running], now
    )
    assert not kr.restart_due(_app([0.0, 0.0]), now)


def test_the_wait_ends_with_the_restarts_after_or_with_an_app_left_unrestarted() -> None:
    app = _app(BEFORE_S + FRESH_S)
    restart = _restart(app)
    assert kr.settled(app, restart, restart.asked_ns)
    stopped = _app(BEFORE_S)
    exit_2 = stopped[-1].finished_at_ns
    assert exit_2 is not None
    assert not kr.settled(stopped, restart, exit_2 + NS)
    stuck_ns = int(timeouts.KUBELET_RESTART_STUCK * NS)
    assert kr.settled(stopped, restart, exit_2 + stuck_ns + NS)
    assert kr.settled(stopped, dataclasses.replace(restart, back_ns=None), exit_2)
