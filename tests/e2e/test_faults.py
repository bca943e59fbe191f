"""Fault drills: what a nightly run meets on a bad night, and how the harness answers.

- The kubelet of a worker restarted mid-run: its back-off state is wiped; the
  run must say so and refuse a verdict, never give a silent wrong one.
- The API server unreachable for a while (the control-plane container paused
  while the fast worker restarts four times): the recorder keeps sampling the
  runtimes, the pod watch resumes, and no attempt is lost.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable

import pytest

from harness.checkrun import CheckProfile, CheckResult, Need, run_check
from harness.cluster import Cluster
from harness.proc import run

pytestmark = pytest.mark.e2e

# Short observations: the fast worker's curve shows a lot in half a minute.
FAST_ONLY = CheckProfile(
    "drill",
    180.0,
    {
        "fast": Need(min_restarts=10),
        "reduced": Need(min_restarts=1),
        "default": Need(min_restarts=1),
    },
)


def _observe_with(
    cluster: Cluster, when_fast_restarts: int, fault: Callable[[], None]
) -> CheckResult:
    """Run the observation; inject ``fault`` once the fast worker has restarted enough."""
    fired = threading.Event()

    def on_sample(result: CheckResult) -> None:
        if not fired.is_set() and len(result.attempts.get("fast", [])) > when_fast_restarts:
            fired.set()
            threading.Thread(target=fault, daemon=True).start()

    result = run_check(cluster, FAST_ONLY, lambda m: print(f"[drill] {m}"), on_sample=on_sample)
    assert fired.is_set(), "the fault was never injected"
    return result


def test_a_kubelet_restart_mid_run_is_reported_not_judged(crashloop_cluster: Cluster) -> None:
    node = f"{crashloop_cluster.name}-worker"

    def restart_kubelet() -> None:
        run(["docker", "exec", node, "systemctl", "restart", "kubelet"], timeout=60)

    result = _observe_with(crashloop_cluster, 3, restart_kubelet)
    assert result.status == "error"
    assert f"node {node}" in result.reason
    assert "restarted during the run" in result.reason


def test_an_unreachable_api_server_loses_no_attempt(crashloop_cluster: Cluster) -> None:
    control_plane = f"{crashloop_cluster.name}-control-plane"
    # The outage lasts until the fast worker restarted this often without an
    # API server: the kubelet keeps restarting, the recorder keeps sampling.
    restarts_during_outage = 4
    paused_at: list[int] = []
    resumed = threading.Event()

    def on_sample(result: CheckResult) -> None:
        seen = len(result.attempts.get("fast", []))
        if not paused_at and seen > 2:
            run(["docker", "pause", control_plane], timeout=30)
            paused_at.append(seen)
        elif paused_at and not resumed.is_set() and seen >= paused_at[0] + restarts_during_outage:
            run(["docker", "unpause", control_plane], timeout=30)
            resumed.set()

    try:
        result = run_check(
            crashloop_cluster, FAST_ONLY, lambda m: print(f"[drill] {m}"), on_sample=on_sample
        )
    finally:
        if paused_at and not resumed.is_set():
            run(["docker", "unpause", control_plane], timeout=30)
    assert paused_at, "the API server was never paused"
    assert resumed.is_set(), "the fast worker did not restart while the API server was away"
    assert result.status in ("passed", "failed"), result.reason
    fast = result.attempts["fast"]
    numbers = [record.attempt for record in fast]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers))), numbers
    for previous, current in itertools.pairwise(fast):
        assert previous.finished_at_ns is not None
        assert current.started_at_ns > previous.finished_at_ns
