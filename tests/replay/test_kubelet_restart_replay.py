"""A kubelet restarted beside a sidecar, replayed: the real scenario on recorded runs.

Two runs of ``kubelet-restart-sidecar`` on v1.35.8: every worker's kubelet
restarted by the run itself (its new process, which the nodes' pulses show,
no reason to end the run), and
the same with the fix of kubernetes/kubernetes#137146 reverted in the fast
worker's kubelet, whose app was never restarted after it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from crashloop_harness.cluster.target import RunEnding
from crashloop_harness.core import timeouts
from crashloop_harness.scenarios import KUBELET_RESTART_SIDECAR
from crashloop_harness.scenarios import kubelet_restart_sidecar as kr
from tests.replay.driver import Trace
from tests.replay.scenario_driver import ScenarioReplay, made_live, replay_scenarios

PASSED = "v1.35.8-kubelet-restart-sidecar"
REVERTED = "v1.35.8-kubelet-restart-sidecar-fix-reverted"
WORKERS = ("fast", "reduced", "default")
LIVE_SCALE = 2.0
STUCK_UNSCALED = timeouts.KUBELET_RESTART_STUCK / timeouts.SCALE


def _replayed_like_live(trace: Trace, tmp_path: Path) -> ScenarioReplay:
    replayed = replay_scenarios(trace, tmp_path / "run")
    live = {
        (m["worker"], m["name"]): (m["measured"], m["passed"])
        for m in trace.summary["metrics"]
        if m["scenario"] == KUBELET_RESTART_SIDECAR
    }
    measured = {
        (worker, metric.name): (metric.measured, metric.passed)
        for worker, result in replayed.result.results[KUBELET_RESTART_SIDECAR].items()
        for metric in result.metrics
    }
    assert set(measured) == set(live)
    for key, (value, passed) in measured.items():
        assert passed == live[key][1], key
        if value is None:
            assert live[key][0] is None, key
        else:
            assert value == pytest.approx(live[key][0], abs=0.0005), key
    # The same restarts asked of the same workers, in the same order, and nothing else made.
    asked_live = [
        f"restart kubelet {e.fields['worker']}"
        for e in trace.entries
        if e.kind == "view" and e.fields["op"] == "restart_kubelet"
    ]
    assert replayed.made == asked_live
    assert made_live(trace) == []
    return replayed


def test_every_worker_s_app_restarts_on_a_fresh_curve_after_its_kubelet_restart(
    tmp_path: Path,
) -> None:
    replayed = _replayed_like_live(Trace.load(PASSED), tmp_path)
    result = replayed.result
    assert result.status == "passed", result.failures or result.reason
    assert sorted(replayed.made) == sorted(f"restart kubelet {w}" for w in WORKERS)
    for worker in WORKERS:
        one = result.results[KUBELET_RESTART_SIDECAR][worker]
        assert one.metric(kr.HEADLINE.metric).measured == kr.AFTER
        assert one.metric("after_return_restart_1_s").expected == 0.0


def test_with_the_fix_reverted_the_fast_app_is_never_restarted_after_its_kubelet_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The live run waited on its timeouts scaled by 2 (CRASHLOOP_TIMEOUT_SCALE=2, its README):
    # the stuck app's wait decided how long the other workers went on restarting.
    monkeypatch.setattr(timeouts, "KUBELET_RESTART_STUCK", LIVE_SCALE * STUCK_UNSCALED)
    replayed = _replayed_like_live(Trace.load(REVERTED), tmp_path)
    result = replayed.result
    assert result.status == "failed"
    fast = result.results[KUBELET_RESTART_SIDECAR]["fast"]
    assert fast.metric(kr.HEADLINE.metric).measured == 0
    assert fast.metric("kubelet_restarted").passed
    assert result.results[KUBELET_RESTART_SIDECAR]["reduced"].passed
    assert result.results[KUBELET_RESTART_SIDECAR]["default"].passed


def test_the_recorded_ending_says_no_kubelet_restarted_behind_the_run_s_back() -> None:
    for name in (PASSED, REVERTED):
        ending: RunEnding = Trace.load(name).ending
        assert ending.errors == (), name
