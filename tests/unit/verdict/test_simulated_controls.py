"""A sound kubelet, simulated with this machine's costs and the kubelet's own jitter, passes
on every worker in both profiles, under every timing model; a kubelet one level out does not.

The full profile on a real sound kubelet once failed the reduced worker on a rule measured on
the fast worker alone (run 20261205T075104Z-check-full-a3c5); these controls fail that way.
"""

from __future__ import annotations

import random

import pytest

from tests.unit.scripts import load_script

SIMULATION = load_script("simulate-verdict")
RUNS = 20


def _case(name: str) -> object:
    return next(case for case in SIMULATION.CASES if case.name == name)


@pytest.mark.parametrize("model", SIMULATION.MODELS)
@pytest.mark.parametrize("profile", ["quick", "full"])
@pytest.mark.parametrize("worker", ["fast", "reduced", "default"])
def test_a_sound_kubelet_passes_every_simulated_run(worker: str, profile: str, model: str) -> None:
    tallies = SIMULATION._judge(
        _case(f"control: {worker} as told"), profile, RUNS, random.Random(7), SIMULATION.Host(model)
    )
    for judging, tally in tallies.items():
        assert tally.caught == 0, (
            f"a sound {worker} kubelet failed {tally.caught} of {RUNS} {profile} runs "
            f"({model}, judged {judging}): {tally.by()}"
        )


def test_a_sound_kubelet_on_a_host_twice_as_slow_is_never_failed_when_only_its_work_slows() -> None:
    """The paced bounds keep the timers as they are: sound where the timers do not slow."""
    tallies = SIMULATION._judge(
        _case("control: a check, every worker as told"),
        "quick",
        RUNS,
        random.Random(7),
        SIMULATION.Host("timers-unscaled", 2.0),
    )
    assert tallies["paced"].failed == 0, tallies["paced"].by()


def test_a_fast_kubelet_at_3s_fails_every_simulated_run() -> None:
    tallies = SIMULATION._judge(
        _case("fast at 3s, messages hidden"), "quick", RUNS, random.Random(7)
    )
    assert tallies["paced"].failed == RUNS, tallies["paced"].by()
    assert tallies["restart-measured"].failed == RUNS


def test_a_fast_kubelet_at_3s_on_a_host_twice_as_slow_never_passes() -> None:
    tallies = SIMULATION._judge(
        _case("fast at 3s, messages hidden"),
        "quick",
        RUNS,
        random.Random(7),
        SIMULATION.Host("timers-unscaled", 2.0),
    )
    assert tallies["paced"].caught == RUNS, tallies["paced"].by()


def test_a_start_a_second_after_its_creation_is_caught_only_by_the_pace() -> None:
    tallies = SIMULATION._judge(
        _case("every start 1s after its creation"), "quick", RUNS, random.Random(7)
    )
    assert tallies["paced"].failed == RUNS, tallies["paced"].by()
    assert all("start-late" in rule for rule in tallies["paced"].rules)
    assert tallies["restart-measured"].caught == 0


def test_each_node_has_a_pace_probe_every_five_seconds_it_is_observed() -> None:
    verdicts = SIMULATION.judge_run(
        _case("control: fast as told"), "quick", random.Random(7), SIMULATION.Host()
    )
    cost = verdicts["paced"]["fast"].cost
    assert cost is not None
    # The quick profile observes 150 s: a probe at its start and 30 more (31 a node; the run
    # the reference distribution comes from probed 35, observing a little longer).
    assert len(cost.pace_s) == 31
    assert verdicts["restart-measured"]["fast"].cost.pace_s == ()


def test_the_work_of_a_restart_a_tick_late_is_that_of_one_on_time() -> None:
    assert SIMULATION.work_of(1.18) == pytest.approx(0.18)
    assert SIMULATION.work_of(0.18) == pytest.approx(0.18)
    assert SIMULATION.work_of(1.0) == SIMULATION.WORK_FLOOR_S


def test_timers_do_not_slow_outside_the_project_model() -> None:
    rng = random.Random(7)
    slow = SIMULATION.Host("timers-unscaled", 3.0)
    most_work = max(work for _, work in SIMULATION.SPLIT_COSTS["fast"])
    # Restart 1: the PLEG's wait (at most 1 s) and a restart's work x 3.
    assert max(slow.first_restart(rng) for _ in range(2000)) <= 1.0 + 3 * most_work
    # A waited 2 s level: the jitter and the tick (at most 1 s each), the work x 3.
    assert max(slow.overshoot("fast", 2.0, rng) for _ in range(2000)) <= 2.0 + 3 * most_work
    assert max(SIMULATION.Host("project", 3.0).pleg_wait(rng) for _ in range(2000)) > 1.0
