"""Conformance: every worker's kubelet restarts a crashing container on its curve.

One shared observation (the bare crashing container on all workers at once,
`--check-profile quick|full`), many assertions. The run directory keeps
attempts.jsonl, summary.json and junit.xml.
"""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest

from harness.backoff import BackoffCurve
from harness.checkrun import CHECK_PROFILES, CheckResult, run_check
from harness.cluster import Cluster
from harness.records import read_attempts
from harness.summary import read_summary
from harness.verdict import judge_worker

pytestmark = [pytest.mark.e2e, pytest.mark.conformance]

WORKERS = ("fast", "reduced", "default")


@pytest.fixture(scope="module")
def conformance(crashloop_cluster: Cluster, pytestconfig: pytest.Config) -> CheckResult:
    profile = CHECK_PROFILES[pytestconfig.getoption("check_profile")]
    return run_check(crashloop_cluster, profile, lambda message: print(f"[check] {message}"))


def test_every_worker_was_observed_long_enough(conformance: CheckResult) -> None:
    assert conformance.status in ("passed", "failed"), conformance.reason
    assert sorted(conformance.attempts) == sorted(WORKERS)


@pytest.mark.parametrize("worker", WORKERS)
def test_worker_restarts_follow_its_live_curve(conformance: CheckResult, worker: str) -> None:
    verdict = conformance.verdicts[worker]
    assert verdict.checks, f"{worker}: no restart was measured"
    assert verdict.passed, "\n".join(verdict.failures)


@pytest.mark.parametrize("worker", WORKERS)
def test_kubelet_reports_the_models_backoff(conformance: CheckResult, worker: str) -> None:
    verdict = conformance.verdicts[worker]
    reported = [check for check in verdict.checks if check.reported_s is not None]
    assert reported, f"{worker}: the watch never saw a back-off message"
    assert all(check.reported_s == check.expected_s for check in reported)


def test_the_curves_are_ordered_fast_reduced_default(conformance: CheckResult) -> None:
    # Restart 3 waits 2s, 2s and 20s nominally: the talk's ordering, measured.
    third: dict[str, float] = {}
    for worker in WORKERS:
        measured = next(c.measured_s for c in conformance.verdicts[worker].checks if c.n == 3)
        assert measured is not None, f"{worker}: restart 3 was not measured"
        third[worker] = measured
    assert third["fast"] < third["default"]
    assert third["reduced"] < third["default"]


def test_outputs_are_complete(conformance: CheckResult) -> None:
    summary = read_summary(conformance.run_dir)
    assert {w.worker for w in summary.workers} == set(WORKERS)
    assert (conformance.run_dir / "junit.xml").exists()
    recorded = read_attempts(conformance.run_dir / "attempts.jsonl")
    assert len(recorded) >= sum(len(a) for a in conformance.attempts.values())
    # Attempts of one container never overlap: each starts after the previous
    # one finished. (A single attempt of a container that exits at once may
    # show its finish a fraction of a millisecond before its start: the
    # runtime stamps the start after runc returns.)
    for attempts in conformance.attempts.values():
        for previous, current in itertools.pairwise(attempts):
            assert previous.finished_at_ns is not None
            assert current.started_at_ns > previous.finished_at_ns


def test_the_verdict_can_fail(conformance: CheckResult) -> None:
    """A model that believes the fast worker waits 5s must reject what was measured."""
    wrong = BackoffCurve(initial=timedelta(seconds=5), maximum=timedelta(seconds=5))
    verdict = judge_worker(conformance.attempts["fast"], wrong, worker="fast")
    assert not verdict.passed
    message = verdict.failures[0]
    assert "fast" in message
    assert "restart 2" in message
    assert "5s" in message
