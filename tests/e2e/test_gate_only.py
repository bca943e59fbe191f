"""What the alpha gate ReduceDefaultCrashLoopBackOffDecay does alone in v1.35.

A separate small cluster (the built-in spec gate-only): one worker with only the
gate. The measurement decides between the two readings of the kubelet code:
max 60s (the gate's own cap) or max 300s (the max gate, on by default,
defaults maxContainerRestartPeriod to 300s and takes precedence). Restart 8
tells them apart: 60s capped, or 64s on the uncapped doubling.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from crashloop_harness.cluster import lifecycle
from crashloop_harness.core.resources import CLUSTERS_DIR
from crashloop_harness.plugin import ClusterOptions, read_cluster_options, session_cluster
from crashloop_harness.runs.check import CheckResult, run_check
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES, CheckProfile, Need

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

GATE_ONLY_SPEC = CLUSTERS_DIR / "gate-only.yaml"
# Up to the first delay that differs between the readings, with every restart checked.
OBSERVATION = CheckProfile(
    "gate-only",
    420.0,
    CHECK_PROFILES["quick"].rule,
    overrides={"gate-only": Need(until_delay_s=64)},
)


@pytest.fixture(scope="module")
def gate_only_cluster(
    request: pytest.FixtureRequest, pytestconfig: pytest.Config
) -> Iterator[lifecycle.Cluster]:
    options: ClusterOptions = read_cluster_options(pytestconfig, str(GATE_ONLY_SPEC))
    yield from session_cluster(request, options)


@pytest.fixture(scope="module")
def observed(gate_only_cluster: lifecycle.Cluster) -> CheckResult:
    return run_check(gate_only_cluster, OBSERVATION, lambda m: print(f"[gate-only] {m}"))


def test_live_config_defaults_the_max_to_300s(observed: CheckResult) -> None:
    (row,) = [row for row in observed.rows if row.worker == "gate-only"]
    assert row.feature_gates["ReduceDefaultCrashLoopBackOffDecay"] is True
    assert row.max_container_restart_period == "5m"
    assert row.curve.initial == timedelta(seconds=1)
    assert row.curve.maximum == timedelta(seconds=300)


def test_measured_restarts_follow_initial_1s_max_300s(observed: CheckResult) -> None:
    verdict = observed.verdicts["gate-only"]
    assert verdict.passed, "\n".join(verdict.messages)
    eighth = next(check for check in verdict.checks if check.n == 8)
    assert eighth.expected_s == 64.0
    # The kubelet's own reading of its back-off: 64s, not a 60s cap.
    assert eighth.reported_s == 64.0
    assert eighth.measured_s is not None
    assert eighth.measured_s >= 64.0
