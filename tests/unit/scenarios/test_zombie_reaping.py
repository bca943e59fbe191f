"""The zombie scenario's judgement: fills of a PID limit, kills after a failed fork, and
the reaping init's calm beside them (pure, on synthetic samples)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from crashloop_harness.cluster.target import NODE_ACCESS
from crashloop_harness.core.resources import CLUSTERS_DIR
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.runs.scenarioplan import plan_scenarios
from crashloop_harness.scenarios import zombie_reaping as zr
from crashloop_harness.scenarios import zombiefill as zf
from crashloop_harness.scenarios.common import Subject
from tests.unit.scenario_factories import DEFAULT, FAST, REDUCED, T0, S, record

CURVES = {"fast": FAST, "reduced": REDUCED, "default": DEFAULT}
BASE_LIVE = 10  # the server's threads: with pause, a baseline of 11 tasks
IN_FLIGHT = 5  # a probe's threads while it hangs


def _fill_samples(start_s: float, *, reaped: bool = False) -> tuple[list[zf.Sample], float]:
    """One attempt's samples, a second apart: two zombies per 2 s probe until the limit
    (with what is in flight) is reached, then a failed fork. Returns them and the failure's
    time (s after T0)."""
    samples, t, zombies = [], start_s, 0
    while True:
        in_flight = IN_FLIGHT if int(t - start_s) % 2 == 0 else 0
        tasks = BASE_LIVE + in_flight + zombies
        full = tasks + zf.PAUSE_TASKS >= zf.POD_PIDS_LIMIT - 2
        fork = "child-failed" if full and not reaped else "ok"
        samples.append(zf.Sample(T0 + int(t * S), zombies, tasks, fork))
        if fork != "ok":
            return samples, t
        if not reaped and int(t - start_s) % 2 == 1:
            zombies += zf.ZOMBIES_PER_PROBE
        t += 1.0


def _bare(curve_delays: list[float], *, kill_after_s: float = 1.5) -> zf.PodTrace:
    """The non-reaping pod: attempts 0..KILLS, each killed after its fork failed."""
    attempts, samples, start = [], [], 0.0
    probes: list[int] = []
    for n in range(zr.KILLS + 1):
        if n:
            start += curve_delays[n - 1]
        mine, failed_s = _fill_samples(start)
        samples.extend(mine)
        # A probe stamped between the samples before and after its children show.
        probes.extend(T0 + int((start + k + 0.5) * S) for k in range(1, int(failed_s - start), 2))
        last = n == zr.KILLS
        end = None if last else failed_s + kill_after_s
        attempts.append(record(n, start, end, pod="zombie-w", exit_code=143, reason="Error"))
        if end is not None:
            start = end
    return zf.PodTrace(attempts=attempts, samples=samples, probes_ns=probes)


def _init(window_s: float) -> zf.PodTrace:
    samples = [
        zf.Sample(T0 + int(t * S), t % 2, BASE_LIVE + 7 + t % 2, "ok")
        for t in range(int(window_s) + 1)
    ]
    probes = [T0 + int(t * S) for t in range(0, int(window_s), zf.PROBE_PERIOD_S)]
    return zf.PodTrace(
        attempts=[record(0, 0.0, None, pod="zombie-init-w")], samples=samples, probes_ns=probes
    )


WINDOW_S = zr.INIT_WINDOW.total_seconds() + 5


@pytest.mark.parametrize("worker", sorted(CURVES))
def test_a_pod_that_fills_and_is_killed_beside_a_calm_init_passes(worker: str) -> None:
    bare = _bare([0.1] * zr.KILLS)
    result = zr.zombie_reaping(
        Subject(worker, "n", CURVES[worker]), bare=bare, init=_init(WINDOW_S)
    )
    assert result.passed, result.failures
    assert result.metric("zombies_per_probe").measured == zf.ZOMBIES_PER_PROBE
    growth = result.metric("zombies_per_min")
    assert growth.measured == pytest.approx(60, rel=0.1)
    fork = result.metric("fork_failure_s")
    # 64 - 11 - 5 in flight leaves 48: two zombies per 2 s probe
    assert fork.measured == pytest.approx(47, abs=2)
    headline = result.metric(zr.HEADLINE.metric)
    assert headline.unit == "min"
    assert headline.expected == pytest.approx(64 * 2 / 2 / 60)
    assert headline.measured is not None
    assert headline.expected is not None
    assert headline.measured < headline.expected  # the baseline's share of the limit
    assert result.metric("probe_kills").measured == zr.KILLS
    assert result.metric("kills_after_fork_failure").measured == zr.KILLS
    assert result.metric("init_max_zombies").measured == 1
    assert result.metric("init_restarts").measured == 0


def test_the_fill_model_counts_the_baseline_and_what_is_in_flight() -> None:
    samples, _ = _fill_samples(0.0)
    fill = zf.fill_of(record(0, 0.0, None), samples)
    assert fill is not None
    assert fill.baseline == BASE_LIVE + zf.PAUSE_TASKS
    assert fill.in_flight == IN_FLIGHT
    assert fill.model_s(0) == (64 - 11) * 2 / 2
    assert fill.model_s(1) == (64 - 11 - 5) * 2 / 2
    assert fill.model_s(zf.MOST_IN_FLIGHT) == (64 - 11 - 4 * 5) * 2 / 2


def test_a_fork_failure_far_earlier_than_the_fill_fails() -> None:
    # A limit much lower than the scenario's (a node with another podPidsLimit).
    bare = _bare([0.1] * zr.KILLS)
    early = [dataclasses.replace(s, fork="failed") if s.zombies >= 20 else s for s in bare.samples]
    result = zr.zombie_reaping(
        Subject("w", "n", FAST), bare=dataclasses.replace(bare, samples=early), init=_init(WINDOW_S)
    )
    assert not result.metric("fork_failure_s").passed
    assert not result.passed


def test_zombies_growing_at_half_a_probe_s_children_fail() -> None:
    bare = _bare([0.1] * zr.KILLS)
    halved = [dataclasses.replace(s, zombies=s.zombies // 2) for s in bare.samples]
    result = zr.zombie_reaping(
        Subject("w", "n", FAST),
        bare=dataclasses.replace(bare, samples=halved),
        init=_init(WINDOW_S),
    )
    assert not result.metric("zombies_per_probe").passed
    # The rate per minute is the ticker's, reported beside it.
    assert result.metric("zombies_per_min").passed


def test_a_kill_without_a_failed_fork_before_it_fails() -> None:
    bare = _bare([0.1] * zr.KILLS)
    calm = [dataclasses.replace(s, fork="ok") for s in bare.samples]
    result = zr.zombie_reaping(
        Subject("w", "n", FAST), bare=dataclasses.replace(bare, samples=calm), init=_init(WINDOW_S)
    )
    assert result.metric("kills_after_fork_failure").measured == 0
    assert result.metric(zr.HEADLINE.metric).measured is None
    assert not result.passed


def test_a_missing_restart_is_a_failure_not_a_pass() -> None:
    bare = _bare([0.1] * zr.KILLS)
    cut = [a for a in bare.attempts if a.attempt < zr.KILLS]
    result = zr.zombie_reaping(
        Subject("w", "n", FAST), bare=dataclasses.replace(bare, attempts=cut), init=_init(WINDOW_S)
    )
    assert not result.passed
    assert any("restarts_seen" in failure for failure in result.failures), result.failures


def test_an_init_that_let_zombies_pile_up_or_restarted_fails() -> None:
    init = _init(WINDOW_S)
    piled = [dataclasses.replace(s, zombies=i) for i, s in enumerate(init.samples)]
    restarted: list[AttemptRecord] = [*init.attempts, record(1, 50.0, None, pod="zombie-init-w")]
    result = zr.zombie_reaping(
        Subject("w", "n", FAST),
        bare=_bare([0.1] * zr.KILLS),
        init=dataclasses.replace(init, samples=piled, attempts=restarted),
    )
    assert not result.metric("init_max_zombies").passed
    assert not result.metric("init_restarts").passed


def test_an_init_watched_too_briefly_fails() -> None:
    result = zr.zombie_reaping(
        Subject("w", "n", FAST), bare=_bare([0.1] * zr.KILLS), init=_init(30)
    )
    assert not result.metric("init_observed_s").passed


def test_samples_parse_and_a_torn_last_line_is_dropped() -> None:
    line = {"event": "sample", "unix_ns": 5, "zombies": 3, "tasks": 14, "fork": "ok", "pid": 1}
    text = json.dumps(line) + "\n" + '{"event": "sam'
    assert zf.parse_samples(text) == [zf.Sample(5, 3, 14, "ok")]
    with pytest.raises(ValueError, match="line 1"):
        zf.parse_samples('{"bad": 1}\n' + json.dumps(line) + "\n")


def test_the_pods_fork_in_their_probe_and_reap_only_under_init() -> None:
    bare, init = zr._pods("fast", "run", "image")
    bare_args = bare["spec"]["containers"][0]["args"]
    init_args = init["spec"]["containers"][0]["args"]
    assert bare_args[:2] == ["--mode", "server"]
    assert "--no-reap" in bare_args
    assert init_args[:2] == ["--mode", "init"]
    assert init_args[init_args.index("--") + 1 :] == [*bare_args, "--as-child"]
    for pod in (bare, init):
        (container,) = pod["spec"]["containers"]
        probe = container["readinessProbe"]
        assert "probe-fork" in probe["exec"]["command"]
        assert probe["timeoutSeconds"] < probe["periodSeconds"]
        assert container["livenessProbe"]["httpGet"]["port"] == zr.PORT


def test_the_pids_cluster_sets_the_limit_the_scenario_is_sized_for() -> None:
    spec = yaml.safe_load((CLUSTERS_DIR / "crashloop-pids.yaml").read_text())
    profiles = Path(CLUSTERS_DIR) / spec["profilesDir"]
    for worker in spec["workers"]:
        patch = yaml.safe_load((profiles / f"{worker['profile']}.yaml").read_text())
        assert patch["podPidsLimit"] == zf.POD_PIDS_LIMIT, worker
        # The back-off is the crashloop cluster's worker of the same name.
        plain = yaml.safe_load((profiles / f"{worker['name']}.yaml").read_text())
        assert {k: v for k, v in patch.items() if k != "podPidsLimit"} == plain


def test_it_runs_only_when_named() -> None:
    default = plan_scenarios(None, capabilities=NODE_ACCESS, release=None)
    assert zr.NAME not in default.names
    assert any(zr.NAME in line for line in default.left_out)
    assert plan_scenarios([zr.NAME], capabilities=NODE_ACCESS, release=None).names == (zr.NAME,)


def test_skipped_probe_ticks_slow_the_rate_but_not_the_zombies_per_probe() -> None:
    # Every third probe outlasts its period: the ticker skips, fewer probes, fewer zombies.
    bare = _bare([0.1] * zr.KILLS)
    kept = [t for i, t in enumerate(bare.probes_ns) if i % 3 != 2]
    gone = set(bare.probes_ns) - set(kept)
    fewer = []
    for sample in bare.samples:
        lost = sum(t < sample.unix_ns and t >= sample.unix_ns - 60 * S for t in gone)
        fewer.append(dataclasses.replace(sample, zombies=max(0, sample.zombies - 2 * lost)))
    result = zr.zombie_reaping(
        Subject("w", "n", FAST),
        bare=dataclasses.replace(bare, samples=fewer, probes_ns=kept),
        init=_init(WINDOW_S),
    )
    assert result.metric("zombies_per_probe").passed, result.metric("zombies_per_probe").detail
    rate = result.metric("zombies_per_min")
    assert rate.measured is not None
    assert rate.measured < 50
