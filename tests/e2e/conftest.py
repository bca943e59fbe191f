"""End-to-end tests run for real or fail: a skipped e2e test fails the session."""

from __future__ import annotations

import pytest

_skipped: list[str] = []


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
