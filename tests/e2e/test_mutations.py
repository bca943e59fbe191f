"""Mutation drill: kubelets one step off their profile must make the check fail.

Each worker's kubelet is switched to a neighbour config (its config file in
the node edited, the kubelet restarted) while the check is told the original
profile's curve. The smallest wrong behaviours the verdict claims to catch,
on real kubelets:

- fast at 3s and at 1s instead of 2s;
- reduced capped at 30s instead of 60s (the delay windows of 30s and 32s
  overlap: only the confirmed level tells them apart);
- default capped at 150s instead of 300s (160s expected at restart 6: past
  the quick profile's 80s, so the drill watches the default worker one level
  further; the nightly full profile goes there anyway);
- a kubelet stopped mid-check and never restarted (an overdue restart).

Each must fail the check, naming the worker and the first restart that gave
it away, and end without waiting for the observation window. Every kubelet
gets its own config back afterwards.
"""

from __future__ import annotations

import dataclasses
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
import yaml
from tenacity import RetryError, Retrying, retry_if_result, stop_after_delay, wait_fixed

from crashloop_harness.cluster.kube import node_statuses, worker_nodes
from crashloop_harness.cluster.lifecycle import Cluster
from crashloop_harness.cluster.liveconfig import live_config_rows
from crashloop_harness.core import timeouts
from crashloop_harness.core.proc import run
from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.model.durations import parse_duration
from crashloop_harness.model.releases import KUBELET_CRASHLOOP_BACKOFF_MAX
from crashloop_harness.outputs.junit import junit_bytes
from crashloop_harness.runs.check import CheckResult, run_check
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES, CheckProfile, Need

pytestmark = [pytest.mark.e2e, pytest.mark.conformance, pytest.mark.crashloop_disruptive]

KUBELET_CONFIG = "/var/lib/kubelet/config.yaml"

# worker -> crashLoopBackOff.maxContainerRestartPeriod of its neighbour config
NEIGHBOURS_A: Mapping[str, str] = {"fast": "3s", "reduced": "30s", "default": "150s"}
NEIGHBOURS_B: Mapping[str, str] = {"fast": "1s"}


def _node_exec(node: str, *argv: str, input_text: str | None = None) -> str:
    return run(
        ["docker", "exec", "-i", node, *argv],
        timeout=timeouts.API_REQUEST,
        input_text=input_text,
    )


def _read_config(node: str) -> str:
    return _node_exec(node, "cat", KUBELET_CONFIG)


def _write_config_and_restart(node: str, text: str) -> None:
    _node_exec(node, "sh", "-c", f"cat > {KUBELET_CONFIG}", input_text=text)
    _node_exec(node, "systemctl", "restart", "kubelet")


def _with_max(text: str, max_period: str) -> str:
    config: dict[str, Any] = yaml.safe_load(text)
    config.setdefault("crashLoopBackOff", {})["maxContainerRestartPeriod"] = max_period
    # Before 1.35 the field needs its alpha gate, or the kubelet refuses to
    # start; from 1.35 the gate is on by default and naming it changes nothing.
    config.setdefault("featureGates", {})[KUBELET_CRASHLOOP_BACKOFF_MAX] = True
    return yaml.safe_dump(config, sort_keys=False)


def _wait_for_live_max(cluster: Cluster, node: str, max_period: str | None) -> None:
    """Until the node is Ready and its /configz shows the wanted max (None: its profile's)."""
    api = cluster.api()

    def settled() -> bool:
        try:
            ready = any(s.name == node and s.ready for s in node_statuses(api))
            row = next(r for r in live_config_rows(api, cluster.spec) if r.node == node)
        except Exception:  # the kubelet is restarting: its configz is away for a moment
            return False
        if max_period is None:
            return ready and not row.mismatches
        # configz prints Go durations ("2m30s" for 150s).
        live = parse_duration(row.max_container_restart_period)
        return ready and live == parse_duration(max_period)

    try:
        Retrying(
            stop=stop_after_delay(timeouts.NODES_READY),
            wait=wait_fixed(1),
            retry=retry_if_result(lambda done: not done),
        )(settled)
    except RetryError as error:
        raise AssertionError(f"{node}: the kubelet did not come back with {max_period}") from error


Mutate = Callable[[Mapping[str, str]], dict[str, str]]


@pytest.fixture
def neighbour_configs(crashloop_cluster: Cluster) -> Iterator[Mutate]:
    """Applies neighbour configs when called (worker -> max); restores every touched kubelet."""
    nodes = worker_nodes(crashloop_cluster.api())
    originals: dict[str, str] = {}

    def apply(mutations: Mapping[str, str]) -> dict[str, str]:
        for worker, max_period in mutations.items():
            node = nodes[worker]
            originals.setdefault(node, _read_config(node))
            _write_config_and_restart(node, _with_max(originals[node], max_period))
        for worker, max_period in mutations.items():
            _wait_for_live_max(crashloop_cluster, nodes[worker], max_period)
        return nodes

    try:
        yield apply
    finally:
        for node, text in originals.items():
            _write_config_and_restart(node, text)
        # A kubelet a drill stopped comes back; a running one is left as it is.
        # All first: each wait reads every node's configz.
        for node in nodes.values():
            _node_exec(node, "systemctl", "start", "kubelet")
        for node in nodes.values():
            _wait_for_live_max(crashloop_cluster, node, None)


def _told_the_profiles(cluster: Cluster) -> dict[str, BackoffCurve]:
    return {worker.name: worker.curve for worker in cluster.spec.workers}


# The quick profile, the default worker watched up to its 160s level, and
# without the variant pods (the drill judges the bare curve only).
_QUICK = CHECK_PROFILES["quick"]
DRILL = dataclasses.replace(
    _QUICK,
    name="mutation",
    timeout_s=timeouts.CHECK_MUTATION,
    overrides={"default": Need(until_delay_s=160)},
    variants=(),
)


# The fast tier's drill: fast at 1s and the default kubelet stopped are both
# decided within a minute; the reduced worker, a control here, need only restart.
DRILL_B = dataclasses.replace(
    DRILL,
    overrides={"default": Need(until_delay_s=160), "reduced": Need(min_restarts=1)},
)


def _check(
    cluster: Cluster,
    on_sample: Callable[[CheckResult], None] | None = None,
    profile: CheckProfile = DRILL,
) -> CheckResult:
    result = run_check(
        cluster,
        profile,
        lambda message: print(f"[mutation] {message}"),
        on_sample=on_sample,
        expected_curves=_told_the_profiles(cluster),
    )
    for worker, (after_s, message) in sorted(result.decided.items()):
        print(f"[mutation] {worker}: caught {after_s:.1f}s after the pods were created: {message}")
    return result


def _assert_caught(result: CheckResult, worker: str, status: str = "failed") -> str:
    """The worker failed, decided before the window ended; returns its first failure.

    ``status``: the run's, "error" where a kubelet stopped beside the mutation.
    """
    assert result.status == status, f"{result.status}: {result.reason}"
    assert worker in result.decided, f"{worker} was not caught during the run: {result.reason}"
    after_s, message = result.decided[worker]
    assert after_s < result.profile.timeout_s
    assert message.startswith(f"{worker}: "), message
    assert "restart " in message, message
    assert not result.verdicts[worker].passed
    return message


@pytest.mark.slow
def test_neighbour_caps_are_caught(crashloop_cluster: Cluster, neighbour_configs: Mutate) -> None:
    neighbour_configs(NEIGHBOURS_A)
    result = _check(crashloop_cluster)
    for worker in NEIGHBOURS_A:
        _assert_caught(result, worker)
    # Both neighbours are told apart by their level alone (the delay windows overlap).
    assert "restart 7" in result.decided["reduced"][1]
    assert "restart 6" in result.decided["default"][1]


def test_fast_at_1s_and_a_stopped_kubelet_are_caught(
    crashloop_cluster: Cluster, neighbour_configs: Mutate
) -> None:
    nodes = neighbour_configs(NEIGHBOURS_B)
    # The default worker's kubelet is stopped from the observing thread once
    # restart 1 is seen, and started again only by the fixture's clean-up.
    default_node = nodes["default"]
    stopped_at: list[float] = []
    stopping = threading.Lock()

    def stop_default_kubelet(result: CheckResult) -> None:
        with stopping:
            if not stopped_at and len(result.attempts.get("default", [])) >= 2:
                _node_exec(default_node, "systemctl", "stop", "kubelet")
                stopped_at.append(time.monotonic())

    started = time.monotonic()
    result = _check(crashloop_cluster, on_sample=stop_default_kubelet, profile=DRILL_B)
    assert stopped_at, "the default kubelet was never stopped"
    # Caught at restart 2: by its reported 1s level, or by restarting before 2s.
    # The stopped kubelet makes the run an error; each worker is still caught.
    assert "fast: restart 2" in _assert_caught(result, "fast", status="error")
    assert "overdue" in _assert_caught(result, "default", status="error")
    caught_after_stop = started + result.decided["default"][0] - stopped_at[0]
    print(f"[mutation] default: caught {caught_after_stop:.1f}s after its kubelet stopped")
    # Restart 2 is due by its exit + the release's bound for a 10s back-off
    # (16.5s where the kubelet requeues at expiry, 26.5s where it retries every
    # 10-15s, before 1.35); one listing and one sample later at most.
    # Its node's restart cost, as the run measured it, widens that bound. How soon after
    # it the check decides is a speed, measured and printed, not asserted: what the check
    # guarantees is a decision before the node's listings could go stale (LISTING_STALE,
    # after which the run ends an error instead). Measured: 21.7 s against a 16.7 s due
    # on a loaded CI run, 22.9 s against 21.5 s on another.
    curve = _told_the_profiles(crashloop_cluster)["default"]
    allowance = result.costs[default_node].allowance
    due_s = curve.upper_tolerance(curve.delay_before_restart(2), allowance).total_seconds()
    print(f"[mutation] default: due {due_s:.1f}s, {result.costs[default_node].describe()}")
    print(f"[mutation] default: decided {caught_after_stop - due_s:.1f}s past its due time")
    assert caught_after_stop < due_s + timeouts.LISTING_STALE
    assert f"the kubelet of node {default_node} stopped" in result.reason
    # Kept by node, JUnit names the stopped node's worker an error and no other.
    summary = result.written_summary()
    assert list(summary.stopped_kubelets) == [default_node]
    suite = ET.fromstring(junit_bytes(summary)).find("testsuite")
    assert suite is not None
    errors = {
        case.get("classname") for case in suite.iter("testcase") if case.find("error") is not None
    }
    assert "conformance.default" in errors
    assert "conformance.fast" not in errors
