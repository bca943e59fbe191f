"""Which scenarios a cluster runs, and running them one at a time.

One rule for `crashloop scenarios`, `crashloop conformance`, the demo and the
end-to-end suite. Each scenario says what it needs
(:class:`~crashloop_harness.scenarios.common.Scenario`): the first kubelet
minor whose API has what it deploys, whether it reads the workload's files
on the node, and whether it runs only when named (the zombie scenario needs a
cluster whose kubelets limit every pod's PIDs). Named scenarios a cluster
cannot run are refused before anything is created; of the default (every
scenario), those it cannot run are left out, each said with why when it is its
release's doing or its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from crashloop_harness.cluster.target import Capabilities, RunTarget
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.progress import Progress
from crashloop_harness.model.releases import release_of
from crashloop_harness.runs.scenarios import ScenarioRun, run_scenarios
from crashloop_harness.scenarios import REGISTRY
from crashloop_harness.scenarios.common import Scenario


@dataclass(frozen=True)
class ScenarioPlan:
    """The scenarios to run, in order, and a line for each one left out for its release."""

    names: tuple[str, ...]
    left_out: tuple[str, ...] = ()


def plan_scenarios(
    asked: Sequence[str] | None,
    *,
    capabilities: Capabilities,
    release: str | None,
    catalog: Mapping[str, Scenario] = REGISTRY,
) -> ScenarioPlan:
    """The scenarios of ``asked`` (None: all of ``catalog``) that a cluster can run.

    ``capabilities`` are the cluster's
    (:attr:`~crashloop_harness.cluster.target.RunTarget.capabilities`), matched against
    what each scenario needs, given before the cluster is reached so that a refusal
    comes first. ``release``:
    the Kubernetes version its kubelets run, when known before the run (the
    harness's own cluster); None checks no release (an existing cluster's
    kubelets are known only once reached, and judged each on its own).
    HarnessError for a scenario named in ``asked`` that the cluster cannot run.
    """
    unknown = sorted(set(asked or ()) - set(catalog))
    if unknown:
        raise HarnessError(f"unknown scenarios {unknown}", f"choose from {', '.join(catalog)}")
    names = list(catalog) if asked is None else list(asked)
    # Like Kubernetes' [Disruptive]: a scenario that restarts kubelets (it wipes every
    # back-off) or needs a cluster of its own runs only when named.
    named_only = [name for name in names if asked is None and _only_when_named(catalog[name])]
    names = [name for name in names if name not in named_only]
    said = tuple(f"{name} left out: {_why_named_only(name, catalog[name])}" for name in named_only)
    lacking_here = {name: lacks(catalog[name], capabilities) for name in names}
    cannot = [name for name, lacked in lacking_here.items() if lacked]
    if asked is not None and cannot:
        raise capabilities.refusal(
            "; ".join(f"run {name}, which {' and '.join(lacking_here[name])}" for name in cannot),
            "leave it out, or run it on the harness's own cluster (without --kubeconfig)",
        )
    # Left out of the default without a word: the --scenarios help says so.
    names = [name for name in names if name not in cannot]
    if release is None:
        return ScenarioPlan(tuple(names), said)
    minor = release_of(release).minor
    lacking = [name for name in names if catalog[name].first_minor > minor]
    if asked is not None and lacking:
        raise HarnessError(
            f"Kubernetes {release} cannot run {', '.join(lacking)}: "
            + "; ".join(f"{n} needs 1.{catalog[n].first_minor} or later" for n in lacking),
            "leave it out, or choose a later release with --kubernetes",
        )
    return ScenarioPlan(
        tuple(name for name in names if name not in lacking),
        said
        + tuple(
            f"{n} left out: Kubernetes {release} lacks its API (1.{catalog[n].first_minor}+)"
            for n in lacking
        ),
    )


def lacks(scenario: Scenario, capabilities: Capabilities) -> list[str]:
    """What ``scenario`` needs of a cluster beyond its API that ``capabilities`` lack, as
    words ("reads the workload's files on the node"); empty when it can run there."""
    needs = (
        (
            scenario.reads_node_files,
            capabilities.node_command,
            "reads the workload's files on the node",
        ),
        (scenario.restarts_kubelets, capabilities.restart_kubelet, "restarts the kubelets"),
    )
    return [words for needed, has, words in needs if needed and not has]


def _only_when_named(scenario: Scenario) -> bool:
    return scenario.only_when_named or scenario.restarts_kubelets


def _why_named_only(name: str, scenario: Scenario) -> str:
    if scenario.restarts_kubelets:
        return "it restarts the workers' kubelets; name it with --scenarios"
    return f"it runs only when named (--scenarios {name})"


def run_one_at_a_time(
    target: RunTarget,
    names: Sequence[str],
    progress: Progress,
    *,
    catalog: Mapping[str, Scenario] = REGISTRY,
    on_run: Callable[[ScenarioRun], None] = lambda _run: None,
) -> list[ScenarioRun]:
    """Each scenario in a run of its own: together they load two cores past the verdict's
    tolerance. ``on_run`` sees each run as it ends; an interrupted one (Ctrl-C) ends the
    sequence, not just the scenario it was in."""
    runs = []
    for name in names:
        run = run_scenarios(target, progress, [name], catalog=catalog)
        on_run(run)
        runs.append(run)
        if run.status == "interrupted":
            break
    return runs
