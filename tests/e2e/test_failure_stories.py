"""The scenarios beyond the talk's three, measured on every worker side by side.

A StatefulSet held back by ordinal 1's crash loop (at its smallest useful
size, three failures), a liveness-probe kill loop, KEP-5307's restart rules
and KEP-5532's RestartAllContainers. Each runs on its own, like the talk's
(see test_scenarios.py). The cluster is v1.35 unless the session says
otherwise; the release-specific findings below hold for v1.35.
"""

from __future__ import annotations

import pytest

from crashloop_harness.model.releases import release_of
from crashloop_harness.recording.records import read_attempts
from crashloop_harness.runs.scenarios import ScenarioRun
from crashloop_harness.scenarios import (
    LIVENESS_KILL,
    RESTART_ALL,
    RESTART_RULES,
    STATEFULSET_ORDINAL,
)
from crashloop_harness.scenarios import liveness_kill as lk
from crashloop_harness.scenarios import restart_all as ra
from crashloop_harness.scenarios import restart_rules as rr
from crashloop_harness.scenarios import statefulset_ordinal as so
from crashloop_harness.scenarios.common import WorkerResult

pytestmark = [pytest.mark.e2e, pytest.mark.scenarios, pytest.mark.slow]

WORKERS = ("fast", "reduced", "default")
Results = dict[str, WorkerResult]


def _results(runs: dict[str, ScenarioRun], scenario: str) -> Results:
    run = runs[scenario]
    assert sorted(run.results[scenario]) == sorted(WORKERS), run.reason
    return run.results[scenario]


def _measured(result: WorkerResult, name: str) -> float:
    value = result.metric(name).measured
    assert value is not None, f"{result.scenario} {result.worker}: {name} was not measured"
    return value


# --- StatefulSet ordinal ------------------------------------------------------------------


@pytest.mark.parametrize("worker", WORKERS)
def test_the_set_waits_out_ordinal_1_s_curve(
    scenario_runs: dict[str, ScenarioRun], worker: str
) -> None:
    result = _results(scenario_runs, STATEFULSET_ORDINAL)[worker]
    _measured(result, so.HEADLINE.metric)
    assert result.metric("failures").measured == so.SHORT_FAIL_TIMES
    assert result.passed, "\n".join(result.failures)


@pytest.mark.parametrize("worker", WORKERS)
def test_later_ordinals_were_held_back_until_their_predecessor_was_ready(
    scenario_runs: dict[str, ScenarioRun], worker: str
) -> None:
    result = _results(scenario_runs, STATEFULSET_ORDINAL)[worker]
    two = _measured(result, "held_back_ordinal_2_s")
    three = _measured(result, "held_back_ordinal_3_s")
    assert result.metric("held_back_ordinal_2_s").passed
    assert result.metric("held_back_ordinal_3_s").passed
    assert two < three


def test_the_default_curve_holds_the_set_back_longest(
    scenario_runs: dict[str, ScenarioRun],
) -> None:
    by_worker = _results(scenario_runs, STATEFULSET_ORDINAL)
    ready = {w: _measured(by_worker[w], so.HEADLINE.metric) for w in WORKERS}
    assert ready["fast"] < ready["default"], ready
    assert ready["reduced"] < ready["default"], ready


# --- liveness kill ------------------------------------------------------------------------


@pytest.mark.parametrize("worker", WORKERS)
def test_every_probe_kill_and_its_restart_was_measured(
    scenario_runs: dict[str, ScenarioRun], worker: str
) -> None:
    result = _results(scenario_runs, LIVENESS_KILL)[worker]
    _measured(result, lk.HEADLINE.metric)
    _measured(result, "restarts_on_crash_curve")
    assert result.passed, "\n".join(result.failures)


def test_probe_kills_are_not_held_to_the_crash_curve(
    scenario_runs: dict[str, ScenarioRun],
) -> None:
    # The finding (see the module's source reading): the kill and the restart
    # happen in one sync, judged against the exit before, so on the default
    # curve (0, 10, 20, 40s) most restarts after a kill come sooner.
    default = _results(scenario_runs, LIVENESS_KILL)["default"]
    assert _measured(default, "restarts_on_crash_curve") < lk.KILLS
    assert _measured(default, "after_kill_2_s") < 10.0


def test_every_kill_came_from_the_probe_not_a_crash(
    scenario_runs: dict[str, ScenarioRun],
) -> None:
    run = scenario_runs[LIVENESS_KILL]
    ended = [
        r
        for r in read_attempts(run.run_dir / "attempts.jsonl")
        if r.container == "app" and r.finished_at_ns is not None and r.attempt < lk.KILLS
    ]
    assert len(ended) >= len(WORKERS) * lk.KILLS
    assert {r.exit_code for r in ended} <= lk.KILL_EXIT_CODES, {r.exit_code for r in ended}
    # The workload never ends by itself: every attempt lived at least until a probe ran.
    assert min(r.finished_at_ns - r.started_at_ns for r in ended if r.finished_at_ns) > 0


# --- restart rules ------------------------------------------------------------------------


@pytest.mark.parametrize("worker", WORKERS)
def test_the_rule_retries_on_the_curve_and_the_final_exit_ends_the_pod(
    scenario_runs: dict[str, ScenarioRun], worker: str
) -> None:
    result = _results(scenario_runs, RESTART_RULES)[worker]
    _measured(result, rr.HEADLINE.metric)
    assert result.metric("pod_ended").passed, result.metric("pod_ended").detail
    assert result.metric("final_exit_code").measured == rr.FINAL_EXIT_CODE
    assert result.passed, "\n".join(result.failures)


# --- RestartAllContainers (v1.35: alpha, its gates on in the harness's cluster) ----------


@pytest.mark.parametrize("worker", WORKERS)
def test_a_reset_re_runs_the_pod_and_keeps_the_back_off_level(
    scenario_runs: dict[str, ScenarioRun], worker: str
) -> None:
    result = _results(scenario_runs, RESTART_ALL)[worker]
    for name in (
        "single_reset_s",
        "pair_reset_s",
        "single_level_after_reset_s",
        "pair_level_after_reset_s",
    ):
        _measured(result, name)
    assert result.metric("app_restarts_by_reset").measured == 1
    assert result.passed, "\n".join(result.failures)


def test_a_reset_pod_re_runs_at_once_from_1_36_and_at_the_resync_before(
    scenario_runs: dict[str, ScenarioRun],
) -> None:
    # From 1.36 the kubelet syncs a reset pod at once, so every re-run is
    # inside the slack. A 1.35 kubelet re-runs it at the pod's next sync:
    # mostly the pod worker's resync, a minute or more later, but a relist
    # that lists the 0.5s trigger running and reads its status exited syncs
    # the pod twice, a second apart (measured: 1.7s once, in a CI run; 61-106s
    # otherwise; the source reading in docs/results.md). So on 1.35 most re-runs, not all, come
    # after the slack: a 1.35 kubelet that re-ran at once would fail this, as
    # would one 1.36 re-run that waited.
    run = scenario_runs[RESTART_ALL]
    (version,) = {row.kubelet_version for row in run.rows if row.worker}
    at_once = release_of(version).minor >= ra.FIRST_IMMEDIATE_MINOR
    by_worker = _results(scenario_runs, RESTART_ALL)
    waits = {
        f"{worker}/{name}": _measured(by_worker[worker], name)
        for worker in WORKERS
        for name in ("single_reset_s", "pair_reset_s")
    }
    slack = ra.RESET_SLACK.total_seconds()
    late = [key for key, wait in waits.items() if wait > slack]
    if at_once:
        assert not late, (version, waits)
    else:
        assert len(late) > len(waits) / 2, (version, waits)
