"""The talk's scenarios replayed: the real scenario code on a recorded run, its metrics as live."""

from __future__ import annotations

from pathlib import Path

import pytest

from crashloop_harness.scenarios.common import WorkerResult
from tests.replay.driver import Changes, Trace
from tests.replay.scenario_driver import made_live, replay_scenarios
from tests.unit.factories import neighbour_curve

TALK_135 = "v1.35.8-talk-scenarios"


@pytest.fixture(scope="module")
def talk() -> Trace:
    return Trace.load(TALK_135)


def _measured(results: dict[str, dict[str, WorkerResult]]) -> dict[tuple[str, str, str], float]:
    return {
        (scenario, worker, metric.name): round(metric.measured, 3)
        for scenario, by_worker in results.items()
        for worker, result in by_worker.items()
        for metric in result.metrics
        if metric.measured is not None
    }


def test_the_talk_s_scenarios_replay_to_their_live_metrics(talk: Trace, tmp_path: Path) -> None:
    replayed = replay_scenarios(talk, tmp_path / "run")
    result = replayed.result
    assert result.status == "passed", result.failures or result.reason
    live = {
        (m["scenario"], m["worker"], m["name"]): m["measured"]
        for m in talk.summary["metrics"]
        if m["measured"] is not None
    }
    measured = _measured(result.results)
    assert set(measured) == set(live)
    # The fresh pods' latencies run from the live delete request's own stamp.
    for key, value in measured.items():
        tolerance = 0.002 if "fresh" in key[2] else 0.0005
        assert value == pytest.approx(live[key], abs=tolerance), key
    # The same objects created and deleted, each worker's in the same order
    # (the workers' fresh pods are made by threads of their own).
    live_made = made_live(talk)
    assert sorted(replayed.made) == sorted(live_made)
    for worker in talk.context["nodes"]:
        mine = [m for m in replayed.made if m.endswith(f"-{worker}") or f"-{worker}-" in m]
        assert mine == [m for m in live_made if m.endswith(f"-{worker}") or f"-{worker}-" in m]


def test_the_same_restarts_judged_against_a_neighbour_curve_fail_their_metrics(
    talk: Trace, tmp_path: Path
) -> None:
    # Told the fast worker runs a 1s curve, its 2s levels are the wrong ones by
    # the scenarios' own verdict; the other workers are untouched.
    told = {"fast": neighbour_curve(1)}
    result = replay_scenarios(talk, tmp_path / "run", Changes(curves=told)).result
    assert result.status == "failed"
    fast = result.results["fast-restart"]["fast"]
    assert not fast.passed
    assert all("the model expects 1s" in failure for failure in fast.failures), fast.failures
    assert result.results["fast-restart"]["reduced"].passed
    assert result.results["fast-restart"]["default"].passed
