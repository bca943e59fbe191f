"""Checks recorded with each node's pace probed beside the kubelet, replayed on the real code.

Two real runs of sound v1.35.8 kubelets (docs/results.md, 2026-12-07): a host kept busy
(four CPU-bound processes on its two cores), and the fast worker's node held to a fifth
of a core. The pace comes from the probes the trace kept, never from the kubelet's own
restarts.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.verdict.firstrestart import first_restarts_judged
from crashloop_harness.verdict.worker import owed_restarts
from tests.replay.driver import Changes, Trace, replay_check
from tests.unit.factories import neighbour_curve

BUSY = "v1.35.8-paced-busy-host"
FIFTH = "v1.35.8-paced-fifth-core"


def test_a_busy_host_s_check_passes_on_the_pace_its_probes_read(tmp_path: Path) -> None:
    trace = Trace.load(BUSY)
    result = replay_check(trace, tmp_path / "run")
    assert result.status == trace.outcome["status"] == "passed", result.reason
    for node, cost in result.costs.items():
        assert cost.paced, node
        assert len(cost.pace_s) >= 10, node
        # The slowdown is the probes' pace, whatever the restarts with no back-off show.
        assert cost.slowdown == cost.pace
        assert 1.0 <= cost.pace < 4.0, cost.describe()


@pytest.mark.parametrize(
    ("worker", "told"),
    [("fast", neighbour_curve(3)), ("reduced", neighbour_curve(30, reduced=True))],
)
def test_on_the_busy_host_a_neighbour_curve_is_still_caught(
    tmp_path: Path, worker: str, told: BackoffCurve
) -> None:
    result = replay_check(Trace.load(BUSY), tmp_path / "run", Changes(curves={worker: told}))
    assert result.status == "failed", result.reason
    assert not result.verdicts[worker].in_error, result.verdicts[worker].failures


def test_a_node_at_a_fifth_of_a_core_is_judged_at_its_widest_window_never_failed(
    tmp_path: Path,
) -> None:
    """Live, its probes read 11.9x at their upper bound early on and the fast worker ended an
    error, too slow to judge. Judged now, a node is too slow only when its probes are in
    median (10.2x live; the replay's last sample comes before the live run's last), and its
    windows are never wider than the widest the verdict judges at: passed or an error that
    names the node, never failed."""
    trace = Trace.load(FIFTH)
    assert trace.outcome["status"] == "error"
    result = replay_check(trace, tmp_path / "run")
    assert result.status in ("passed", "error"), result.reason
    node = trace.context["nodes"]["fast"]
    cost = result.costs[node]
    assert cost.paced
    assert cost.pace > 10, cost.describe()
    assert cost.allowance.slowdown == 10.0
    for subject in ("fast", "fast/runs-5s"):
        verdict = result.verdicts[subject]
        assert verdict.passed or verdict.in_error, verdict.failures
        if verdict.in_error:
            assert any("pace probe beside the kubelet took" in e.words for e in verdict.errors)
    # The workers on unthrottled nodes were judged and passed in the same run.
    for subject in ("reduced", "default"):
        assert result.verdicts[subject].passed, result.verdicts[subject].failures
    # The same restarts measured by the kubelet's own restarts (the probes dropped) read the
    # node barely slow: judged so, this sound kubelet's bounds came from its own restarts.
    unpaced = replay_check(
        trace, tmp_path / "unpaced", Changes(drop=lambda entry: entry.kind == "pace")
    )
    assert not unpaced.costs[node].paced
    assert unpaced.costs[node].slowdown < cost.slowdown


def test_a_node_at_a_tenth_of_a_core_is_an_error_naming_it_never_failed(tmp_path: Path) -> None:
    trace = Trace.load("v1.35.8-paced-tenth-core")
    result = replay_check(trace, tmp_path / "run")
    assert result.status == trace.outcome["status"] == "error", result.reason
    node = trace.context["nodes"]["fast"]
    assert result.costs[node].too_slow, result.costs[node].describe()
    assert f"node {node} too slow to judge" in result.reason
    for subject in ("fast", "fast/runs-5s"):
        assert result.verdicts[subject].in_error, result.verdicts[subject].failures
    for subject in ("reduced", "default"):
        assert result.verdicts[subject].passed, result.verdicts[subject].failures


FIRST_SET_ASIDE = "v1.35.8-first-restart-set-aside"


def test_a_restart_1_set_aside_owes_nothing_where_its_node_s_restart_1s_were_judged(
    tmp_path: Path,
) -> None:
    """make test beside a node image built from nothing: the default worker's restart 1 came
    late while the host's CPUs were all busy and was set aside. Live, the run owed one more
    restart for it (the default worker's 160 s level) and ended error before it came. Its
    node's ten restart 1s (subjects and probes) were judged together by first-late, which shows
    what restart 1 would have: nothing is owed, and the sound kubelets pass."""
    trace = Trace.load(FIRST_SET_ASIDE)
    assert trace.outcome["status"] == "error"
    assert "owed in their place" in trace.outcome["reason"]
    result = replay_check(trace, tmp_path / "run")
    assert result.status == "passed", result.reason
    default = result.verdicts["default"]
    assert [check.n for check in default.set_aside] == [1]
    cost = result.costs[trace.context["nodes"]["default"]]
    assert first_restarts_judged(cost)
    assert owed_restarts(default.checks, cost) == 0
    # A later restart set aside is still owed: nothing else shows its level.
    later = [dataclasses.replace(c, set_aside="late") if c.n == 3 else c for c in default.checks]
    assert owed_restarts(later, cost) == 1
