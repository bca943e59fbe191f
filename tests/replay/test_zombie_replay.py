"""The zombie scenario replayed: the real scenario code on its recorded run (fast tier)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from crashloop_harness.scenarios import zombie_reaping as zr
from crashloop_harness.scenarios import zombiefill as zf
from tests.replay.driver import Trace
from tests.replay.scenario_driver import replay_scenarios

# tests/e2e/test_zombies.py on the crashloop-pids cluster, run 20261206T163013Z-scenarios-e1bc.
ZOMBIES_135 = "v1.35.8-zombie-reaping"


@pytest.fixture(scope="module")
def zombies() -> Trace:
    return Trace.load(ZOMBIES_135)


def test_the_zombie_run_replays_to_its_live_metrics(zombies: Trace, tmp_path: Path) -> None:
    result = replay_scenarios(zombies, tmp_path / "run").result
    assert result.status == "passed", result.failures or result.reason
    live = {
        (m["worker"], m["name"]): m["measured"]
        for m in zombies.summary["metrics"]
        if m["measured"] is not None
    }
    replayed = {
        (worker, metric.name): metric.measured
        for worker, by_worker in result.results[zr.NAME].items()
        for metric in by_worker.metrics
        if metric.measured is not None
    }
    assert set(replayed) == set(live)
    for key, value in replayed.items():
        assert value == pytest.approx(live[key], abs=0.0005), key
    for worker in ("fast", "reduced", "default"):
        assert replayed[(worker, "init_restarts")] == 0
        assert replayed[(worker, "probe_kills")] == zr.KILLS


def _server_logs(trace: Trace) -> dict[str, str]:
    """Each pod's zombies.log as the live run read it."""
    with gzip.open(trace.path, "rt") as lines:
        views = [json.loads(line) for line in lines]
    return {
        v["pod"]: v["text"]
        for v in views
        if v.get("op") == "file" and v.get("file") == zf.ZOMBIES_LOG and v.get("text")
    }


def test_the_recorded_fills_grow_two_zombies_a_probe_and_the_init_holds_none(
    zombies: Trace,
) -> None:
    logs = _server_logs(zombies)
    for worker in ("fast", "reduced", "default"):
        bare = zf.parse_samples(logs[zr.pod_name(worker)])
        init = zf.parse_samples(logs[zr.init_pod_name(worker)])
        # The non-reaping server's zombies climb to the limit, attempt after attempt.
        assert max(s.zombies for s in bare) >= zf.POD_PIDS_LIMIT // 2
        assert max(s.tasks for s in bare) + zf.PAUSE_TASKS <= zf.POD_PIDS_LIMIT
        # Under the init, never more than a probe's children and the check's child.
        assert max(s.zombies for s in init) <= zf.ZOMBIES_PER_PROBE + 1
        assert all(s.fork == zf.FORK_OK for s in init)
