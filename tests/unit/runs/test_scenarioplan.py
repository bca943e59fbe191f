"""Which scenarios a cluster runs, from what each scenario needs, and running them one by one."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import cast

import pytest

from crashloop_harness.cluster.target import API_ONLY, NODE_ACCESS, Capabilities, RunTarget
from crashloop_harness.core import pins
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.runs import scenarioplan
from crashloop_harness.runs.scenarioplan import plan_scenarios, run_one_at_a_time
from crashloop_harness.runs.scenarios import ScenarioRun, run_scenarios
from crashloop_harness.scenarios import (
    FAST_RESTART,
    KUBELET_RESTART_SIDECAR,
    LIVENESS_KILL,
    REGISTRY,
    RESTART_ALL,
    RESTART_RULES,
    SCENARIOS,
    STATEFULSET_ORDINAL,
    TASK_ISOLATION,
    ZOMBIE_REAPING,
    sized_registry,
)

V1_34 = pins.KUBERNETES["1.34"].version
V1_35 = pins.KUBERNETES["1.35"].version
# The zombie scenario needs the crashloop-pids cluster: never in a default run.
# The kubelet restart beside a sidecar restarts kubelets, the zombie scenario needs the
# crashloop-pids cluster: neither is ever in a default run, and each says why.
NAMED_ONLY = (
    f"{KUBELET_RESTART_SIDECAR} left out: it restarts the workers' kubelets; name it with "
    "--scenarios",
    f"{ZOMBIE_REAPING} left out: it runs only when named (--scenarios {ZOMBIE_REAPING})",
)
BY_DEFAULT = tuple(s for s in SCENARIOS if s not in (KUBELET_RESTART_SIDECAR, ZOMBIE_REAPING))


def test_each_scenario_says_the_release_and_the_reach_it_needs() -> None:
    assert {n: s.first_minor for n, s in REGISTRY.items() if s.first_minor} == {
        RESTART_RULES: 35,
        RESTART_ALL: 35,
    }
    assert [n for n, s in REGISTRY.items() if s.reads_node_files] == [
        RESTART_ALL,
        KUBELET_RESTART_SIDECAR,
        ZOMBIE_REAPING,
    ]
    assert [n for n, s in REGISTRY.items() if s.restarts_kubelets] == [KUBELET_RESTART_SIDECAR]
    assert [n for n, s in REGISTRY.items() if s.only_when_named] == [ZOMBIE_REAPING]
    sized = sized_registry(ordinal_failures=2)[STATEFULSET_ORDINAL]
    assert (sized.first_minor, sized.reads_node_files, sized.restarts_kubelets) == (0, False, False)


def test_the_harness_cluster_on_a_release_with_every_api_runs_all_but_the_disruptive() -> None:
    plan = plan_scenarios(None, capabilities=NODE_ACCESS, release=V1_35)
    assert plan.names == BY_DEFAULT
    assert plan.left_out == NAMED_ONLY


def test_a_scenario_that_restarts_kubelets_runs_when_named() -> None:
    plan = plan_scenarios([KUBELET_RESTART_SIDECAR], capabilities=NODE_ACCESS, release=V1_35)
    assert plan.names == (KUBELET_RESTART_SIDECAR,)
    assert plan.left_out == ()
    with pytest.raises(HarnessError, match="reads the workload's files on the node"):
        plan_scenarios([KUBELET_RESTART_SIDECAR], capabilities=API_ONLY, release=None)


def test_the_default_leaves_out_what_an_older_release_lacks_saying_why() -> None:
    plan = plan_scenarios(None, capabilities=NODE_ACCESS, release=V1_34)
    assert plan.names == tuple(s for s in BY_DEFAULT if s not in (RESTART_RULES, RESTART_ALL))
    assert plan.left_out == (
        *NAMED_ONLY,
        f"{RESTART_RULES} left out: Kubernetes {V1_34} lacks its API (1.35+)",
        f"{RESTART_ALL} left out: Kubernetes {V1_34} lacks its API (1.35+)",
    )


def test_a_named_scenario_an_older_release_lacks_is_refused() -> None:
    with pytest.raises(HarnessError, match=f"{RESTART_RULES} needs 1.35 or later") as raised:
        plan_scenarios([FAST_RESTART, RESTART_RULES], capabilities=NODE_ACCESS, release=V1_34)
    assert raised.value.problem.startswith(f"Kubernetes {V1_34} cannot run {RESTART_RULES}:")
    assert "--kubernetes" in raised.value.fix


def test_a_cluster_read_through_its_api_alone_runs_all_but_what_reads_the_node() -> None:
    plan = plan_scenarios(None, capabilities=API_ONLY, release=None)
    assert plan.names == tuple(s for s in BY_DEFAULT if s != RESTART_ALL)
    # No release is known before such a cluster is reached: none is checked.
    assert RESTART_RULES in plan.names
    assert plan.left_out == NAMED_ONLY


def test_a_named_scenario_that_reads_the_node_is_refused_where_the_api_alone_is_read() -> None:
    with pytest.raises(
        HarnessError, match=f"run {RESTART_ALL}, which reads the workload's files"
    ) as raised:
        plan_scenarios([LIVENESS_KILL, RESTART_ALL], capabilities=API_ONLY, release=None)
    assert "reached through its API alone" in str(raised.value)
    assert "without --kubeconfig" in raised.value.fix


def test_a_scenario_is_matched_against_each_capability_it_needs() -> None:
    # A cluster whose nodes run commands but whose kubelets may not be restarted (a shared
    # one) runs the node-reading scenarios and refuses the kubelet restart by name.
    shared = Capabilities(node_command=True, restart_kubelet=False)
    with pytest.raises(HarnessError, match="which restarts the kubelets"):
        plan_scenarios([KUBELET_RESTART_SIDECAR], capabilities=shared, release=V1_35)
    assert RESTART_ALL in plan_scenarios(None, capabilities=shared, release=V1_35).names


def test_named_scenarios_keep_their_order_and_an_empty_list_runs_none() -> None:
    asked = [LIVENESS_KILL, TASK_ISOLATION]
    assert plan_scenarios(asked, capabilities=NODE_ACCESS, release=V1_34).names == tuple(asked)
    assert plan_scenarios([], capabilities=NODE_ACCESS, release=V1_34).names == ()


def test_an_unknown_scenario_is_refused_naming_the_choices() -> None:
    with pytest.raises(HarnessError, match=r"unknown scenarios \['nope'\]") as raised:
        plan_scenarios(["nope"], capabilities=NODE_ACCESS, release=V1_35)
    assert FAST_RESTART in raised.value.fix


def test_the_catalogs_own_facts_decide_not_the_scenarios_names() -> None:
    later = dataclasses.replace(REGISTRY[FAST_RESTART], first_minor=36)  # type: ignore[type-var]
    catalog = {**REGISTRY, FAST_RESTART: later}
    plan = plan_scenarios(None, capabilities=NODE_ACCESS, release=V1_35, catalog=catalog)
    assert FAST_RESTART not in plan.names
    assert plan.left_out == (
        *NAMED_ONLY,
        f"{FAST_RESTART} left out: Kubernetes {V1_35} lacks its API (1.36+)",
    )


def _run(name: str, status: str) -> ScenarioRun:
    return ScenarioRun(
        run_id=name, run_dir=Path(name), scenarios=(name,), curves={}, nodes={}, status=status
    )


def test_scenarios_run_one_at_a_time_until_one_is_interrupted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    statuses = {TASK_ISOLATION: "passed", FAST_RESTART: "interrupted", LIVENESS_KILL: "passed"}
    asked: list[list[str]] = []

    def run_scenarios(
        _target: object, _progress: object, names: list[str], **_: object
    ) -> ScenarioRun:
        asked.append(list(names))
        return _run(names[0], statuses[names[0]])

    monkeypatch.setattr(scenarioplan, "run_scenarios", run_scenarios)
    seen: list[str] = []
    runs = run_one_at_a_time(
        cast(RunTarget, None),
        list(statuses),
        lambda _message: None,
        on_run=lambda run: seen.append(run.run_id),
    )
    # Ctrl-C in the second ends the sequence, not just its scenario.
    assert asked == [[TASK_ISOLATION], [FAST_RESTART]]
    assert [run.run_id for run in runs] == seen == [TASK_ISOLATION, FAST_RESTART]


def test_a_scenario_that_restarts_kubelets_is_refused_beside_another() -> None:
    with pytest.raises(HarnessError, match="wipes the back-off of every other scenario") as raised:
        run_scenarios(cast(RunTarget, None), print, [FAST_RESTART, KUBELET_RESTART_SIDECAR])
    assert "a run of its own" in raised.value.fix
