"""Fault drills: what a nightly run meets on a bad night, and how the harness answers.

- The kubelet of a worker restarted mid-run: its back-off state is wiped; the
  run must say so and refuse a verdict, never give a silent wrong one.
- The API server unreachable for a while (the control-plane container paused
  while the fast worker restarts four times): the recorder keeps sampling the
  runtimes, the pod watch resumes, and no attempt is lost.
- A worker node frozen (its container paused for 12s, the kubelet with it):
  a restart late across the freeze is an error, never the kubelet's failure.
- The watch stream dropped (every connection of the client reset under it by
  a relay in front of the API server): the watch resumes from its
  resourceVersion, the kubelet's reported back-off keeps arriving, and no
  attempt is lost.
- containerd stopped inside a worker's node while the node runs on: the run
  ends as an error naming the node's runtime, never as a pass.
- A measured pod deleted by someone else mid-check: an error naming the pod,
  never the kubelet's failure.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kubernetes import client

from crashloop_harness.cluster.lifecycle import Cluster
from crashloop_harness.core.proc import run
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.runs.check import CheckResult, run_check
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES, CheckProfile, Need
from tests.e2e.tcprelay import TcpRelay, server_address, through_port

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.crashloop_disruptive]

# Short observations: the fast worker's curve shows a lot in half a minute.
FAST_ONLY = CheckProfile(
    "drill",
    180.0,
    CHECK_PROFILES["quick"].rule,
    overrides={
        "fast": Need(min_restarts=10),
        "reduced": Need(min_restarts=1),
        "default": Need(min_restarts=1),
    },
)


def _observe_with(
    cluster: Cluster, when_fast_restarts: int, fault: Callable[[], None]
) -> CheckResult:
    """Run the observation; inject ``fault`` once the fast worker has restarted enough.

    The fault comes while the fast container waits out its back-off (its latest
    attempt seen exited): the recorder sees a start within milliseconds, and a
    fault that lands while the container still runs delays its exit instead of
    the kubelet's restart.
    """
    fired = threading.Event()

    def on_sample(result: CheckResult) -> None:
        fast = result.attempts.get("fast", [])
        in_back_off = bool(fast) and fast[-1].finished_at_ns is not None
        if not fired.is_set() and len(fast) > when_fast_restarts and in_back_off:
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


# The fault's length, not a synchronisation: well past the fast curve's 4.5s
# bound, well short of NODE_SILENT (which would end the run as a silent node).
FREEZE_S = 12.0


def test_a_frozen_node_is_an_error_not_the_kubelets_failure(crashloop_cluster: Cluster) -> None:
    node = f"{crashloop_cluster.name}-worker"
    thawed = threading.Event()  # never set: the freeze lasts its full FREEZE_S

    def freeze() -> None:
        run(["docker", "pause", node], timeout=30)
        try:
            thawed.wait(FREEZE_S)
        finally:
            run(["docker", "unpause", node], timeout=30)

    result = _observe_with(crashloop_cluster, 3, freeze)
    assert result.status == "error", result.reason
    assert "node frozen" in result.reason
    fast = result.verdicts["fast"]
    assert fast.in_error, fast.failures
    assert any(check.error for check in fast.checks) or fast.errors


def test_a_stopped_container_runtime_is_an_error_never_a_pass(crashloop_cluster: Cluster) -> None:
    node = f"{crashloop_cluster.name}-worker"

    def stop_containerd() -> None:
        run(["docker", "exec", node, "systemctl", "stop", "containerd"], timeout=60)

    try:
        result = _observe_with(crashloop_cluster, 3, stop_containerd)
    finally:
        run(["docker", "exec", node, "systemctl", "start", "containerd"], timeout=60)
    assert result.status == "error", result.reason
    assert f"the container runtime of node {node} stopped answering" in result.reason


def test_a_pod_deleted_mid_run_is_an_error_not_the_kubelets_failure(
    crashloop_cluster: Cluster,
) -> None:
    core = client.CoreV1Api(crashloop_cluster.api())
    deleted: list[str] = []

    def delete_the_fast_pod(result: CheckResult) -> None:
        fast = result.attempts.get("fast", [])
        if not deleted and len(fast) > 3:
            deleted.append(fast[-1].pod)
            core.delete_namespaced_pod(fast[-1].pod, fast[-1].namespace)

    result = run_check(
        crashloop_cluster,
        FAST_ONLY,
        lambda m: print(f"[drill] {m}"),
        on_sample=delete_the_fast_pod,
    )
    assert deleted, "the pod was never deleted"
    assert result.status == "error", result.reason
    assert f"pod {deleted[0]} (worker fast) was deleted during the run" in result.reason


def _assert_contiguous(records: list[AttemptRecord]) -> None:
    """Every attempt between the first and the last seen was recorded, in order."""
    numbers = [record.attempt for record in records]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers))), numbers
    for previous, current in itertools.pairwise(records):
        assert previous.finished_at_ns is not None
        assert current.started_at_ns > previous.finished_at_ns


@pytest.fixture
def relayed_cluster(
    crashloop_cluster: Cluster, tmp_path: Path
) -> Iterator[tuple[Cluster, TcpRelay]]:
    """The cluster, reached through a relay that can reset the client's connections."""
    relay = TcpRelay(server_address(crashloop_cluster.kubeconfig))
    kubeconfig = through_port(
        crashloop_cluster.kubeconfig, tmp_path / "relayed.kubeconfig", relay.port
    )
    try:
        yield dataclasses.replace(crashloop_cluster, kubeconfig=kubeconfig), relay
    finally:
        relay.close()


def test_a_dropped_watch_resumes_and_loses_no_attempt(
    relayed_cluster: tuple[Cluster, TcpRelay],
) -> None:
    cluster, relay = relayed_cluster
    dropped_at_ns: list[int] = []
    live_at_drop: list[int] = []

    def drop_every_connection() -> None:
        dropped_at_ns.append(time.time_ns())
        live_at_drop.append(relay.reset_all())

    result = _observe_with(cluster, 3, drop_every_connection)
    assert result.status == "passed", result.reason
    assert live_at_drop[0] >= 1, "no connection was live at the drop: the watch was not open"
    # The open watch itself was cut (not only idle pooled connections): its reader saw the reset.
    cut = [m for m in result.recorder_errors if m.startswith("pod watch:")]
    assert cut, f"the watch never saw the drop; recorder errors: {result.recorder_errors}"
    fast = result.attempts["fast"]
    _assert_contiguous(fast)
    # Only the watch fills in the kubelet's reported back-off: attempts that
    # began after the drop carrying one show the watch came back.
    after_drop = [r for r in fast if r.started_at_ns > dropped_at_ns[0]]
    reported = [r for r in after_drop if r.reported_backoff_s is not None]
    assert len(after_drop) >= 3, [r.attempt for r in fast]
    assert len(reported) >= len(after_drop) - 1, (
        f"the watch did not resume: {len(reported)} of {len(after_drop)} attempts after the drop "
        f"carry the kubelet's reported back-off; recorder errors: {result.recorder_errors}"
    )


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
    assert result.status == "passed", result.reason
    _assert_contiguous(result.attempts["fast"])
