"""End-to-end tests run for real or fail: a skipped e2e test fails the session."""

from __future__ import annotations

import pytest

from harness.cluster.lifecycle import Cluster
from harness.plugin.options import ours
from harness.runs.check import CheckResult, run_check
from harness.runs.checkprofiles import CHECK_PROFILES
from harness.runs.scenarios import ScenarioRun, run_scenarios
from harness.scenarios import SCENARIOS, sized_registry
from harness.scenarios.statefulset_ordinal import SHORT_FAIL_TIMES

_skipped: list[str] = []


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The version matrix (a cluster per release) runs only when -m names it."""
    if "matrix" in (config.getoption("markexpr") or ""):
        return
    deselected = [item for item in items if item.get_closest_marker("matrix")]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if not item.get_closest_marker("matrix")]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped:
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _skipped and exitstatus == pytest.ExitCode.OK:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(
                f"e2e tests must run, not skip: {', '.join(_skipped)}", red=True, bold=True
            )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def conformance(crashloop_cluster: Cluster, pytestconfig: pytest.Config) -> CheckResult:
    """The kind-mode check of the session's cluster, run once: the conformance tests judge it,
    the existing-cluster tests compare their verdict with it."""
    profile = CHECK_PROFILES[ours(pytestconfig, "check-profile")]
    return run_check(crashloop_cluster, profile, lambda message: print(f"[check] {message}"))


def _observe(cluster: Cluster, scenario: str) -> ScenarioRun:
    run = run_scenarios(
        cluster,
        lambda message: print(f"[scenarios] {message}"),
        [scenario],
        catalog=sized_registry(ordinal_failures=SHORT_FAIL_TIMES),
    )
    for by_worker in run.results.values():
        for result in by_worker.values():
            for metric in result.metrics:
                print(
                    f"[scenarios] {result.scenario} {result.worker} {metric.name}: "
                    f"measured {metric.measured} expected {metric.expected} "
                    f"[{metric.lower}, {metric.upper}] {'ok' if metric.passed else 'FAIL'}"
                )
    return run


@pytest.fixture(scope="session")
def scenario_runs(crashloop_cluster: Cluster) -> dict[str, ScenarioRun]:
    """Each scenario in kind mode, one at a time, run once: the scenario tests judge them,
    the existing-cluster tests compare their verdicts with them."""
    return {scenario: _observe(crashloop_cluster, scenario) for scenario in SCENARIOS}
