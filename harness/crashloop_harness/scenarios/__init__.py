"""The scenarios as measured workloads, on every worker side by side.

The talk's three:

- task isolation: a container runs one session and exits 0, reset in place
  (``restartPolicy: Always``); compared with a fresh pod per session;
- fast restart on failure: a container fails a few times, then turns Ready;
- critical sidecar: a proxy sidecar is OOMKilled over and over while the main
  app, which never restarts, is cut off until the sidecar is back.

And the failure stories and restart APIs after it:

- statefulset ordinal: an OrderedReady StatefulSet held back by ordinal 1's
  crash loop;
- liveness kill: a healthy container killed by its liveness probe, over and over;
- restart rules (KEP-5307): ``restartPolicy: Never`` except a rule that
  restarts the container on one exit code;
- restart all (KEP-5532): a container whose exit restarts its whole pod in
  place, and what that does to the back-off;
- zombie reaping: a PID 1 that does not reap the children of its timed-out
  exec probes, under the node's PID limit, beside one under an init that
  reaps (run only when named: it needs the crashloop-pids cluster).

And a regression users hit in 1.35 (kubernetes/kubernetes#136969):

- kubelet restart beside a sidecar: an app crash-looping beside a sidecar
  with a startupProbe, the node's kubelet restarted under it; the app must
  go on restarting (run alone, and only when named: it restarts kubelets).

Each is one module behind the protocol of :mod:`.common` (pods, what to wait
for, metrics, headline, the release and the reach it needs). A new scenario is
one new module and one line below. Which of them a cluster runs is
:mod:`crashloop_harness.runs.scenarioplan`'s to say.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from crashloop_harness.scenarios import (
    critical_sidecar,
    fast_restart,
    kubelet_restart_sidecar,
    liveness_kill,
    restart_all,
    restart_rules,
    statefulset_ordinal,
    task_isolation,
    zombie_reaping,
)
from crashloop_harness.scenarios.common import Scenario

# In the order they run and are shown.
REGISTRY: Final[Mapping[str, Scenario]] = {
    scenario.name: scenario
    for scenario in (
        task_isolation.TASK_ISOLATION,
        fast_restart.FAST_RESTART,
        critical_sidecar.CRITICAL_SIDECAR,
        statefulset_ordinal.StatefulSetOrdinal(),
        liveness_kill.LIVENESS_KILL,
        restart_rules.RESTART_RULES,
        restart_all.RESTART_ALL,
        kubelet_restart_sidecar.KUBELET_RESTART_SIDECAR,
        zombie_reaping.ZOMBIE_REAPING,
    )
}
SCENARIOS: Final = tuple(REGISTRY)
TALK_SCENARIOS: Final = SCENARIOS[:3]  # the demo's default

TASK_ISOLATION: Final = task_isolation.NAME
FAST_RESTART: Final = fast_restart.NAME
CRITICAL_SIDECAR: Final = critical_sidecar.NAME
STATEFULSET_ORDINAL: Final = statefulset_ordinal.NAME
LIVENESS_KILL: Final = liveness_kill.NAME
RESTART_RULES: Final = restart_rules.NAME
RESTART_ALL: Final = restart_all.NAME
KUBELET_RESTART_SIDECAR: Final = kubelet_restart_sidecar.NAME
ZOMBIE_REAPING: Final = zombie_reaping.NAME


def scenario_named(name: str) -> Scenario:
    """The registered scenario called ``name``; ValueError naming the choices otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown scenario {name!r}: want one of {', '.join(SCENARIOS)}") from None


def sized_registry(*, ordinal_failures: int | None = None) -> Mapping[str, Scenario]:
    """The registry with the sizes a run asked for (None keeps a scenario's default).

    ``ordinal_failures``: how many times the StatefulSet's ordinal 1 fails
    (ValueError below one).
    """
    if ordinal_failures is None:
        return REGISTRY
    sized = statefulset_ordinal.StatefulSetOrdinal(fail_times=ordinal_failures)
    return {**REGISTRY, sized.name: sized}
