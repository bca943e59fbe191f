"""The talk's scenarios as measured workloads, on every worker side by side.

- task isolation: a container runs one session and exits 0, reset in place
  (``restartPolicy: Always``); compared with a fresh pod per session;
- fast restart on failure: a container fails a few times, then turns Ready;
- critical sidecar: a proxy sidecar is OOMKilled over and over while the main
  app, which never restarts, is cut off until the sidecar is back.

Each is one module behind the protocol of :mod:`.common` (pods, what to wait
for, metrics, headline). A new scenario is one new module and one line below.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from harness.scenarios import critical_sidecar, fast_restart, task_isolation
from harness.scenarios.common import Scenario

# In the order they run and are shown.
REGISTRY: Final[Mapping[str, Scenario]] = {
    scenario.name: scenario
    for scenario in (
        task_isolation.TaskIsolation(),
        fast_restart.FastRestart(),
        critical_sidecar.CriticalSidecar(),
    )
}
SCENARIOS: Final = tuple(REGISTRY)
TASK_ISOLATION: Final = task_isolation.NAME
FAST_RESTART: Final = fast_restart.NAME
CRITICAL_SIDECAR: Final = critical_sidecar.NAME


def scenario_named(name: str) -> Scenario:
    """The registered scenario called ``name``; ValueError naming the choices otherwise."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown scenario {name!r}: want one of {', '.join(SCENARIOS)}") from None
