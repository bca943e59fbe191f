"""The report as a reader opens it: report.html in headless Chromium (Debian's package).

For each kind of run the docs show (a check; a demo-like run with the talk's
scenarios beside it), from this session's real runs: the page renders, every
image loads, nothing scrolls sideways at 1280 px, and the verdict is the first
thing on the page. A screenshot of each is kept in its run directory (the docs'
pictures are made from real runs by scripts/screenshots.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest
from selenium import webdriver
from selenium.webdriver.support.wait import WebDriverWait

from crashloop_harness.core import timeouts
from crashloop_harness.outputs.document import REPORT_HTML
from crashloop_harness.outputs.report import write_report
from crashloop_harness.outputs.summaryfile import read_summary
from crashloop_harness.runs.check import CheckResult
from crashloop_harness.runs.scenarios import ScenarioRun
from crashloop_harness.scenarios.headline import headline_metrics
from tests.e2e.browser import headless_chromium

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

WIDTH: Final = 1280


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    with headless_chromium("the report's browser check", f"--window-size={WIDTH},900") as driver:
        yield driver


def _opened(driver: webdriver.Chrome, page: Path) -> dict[str, Any]:
    """The page loaded with its images; what a reader sees of it, read by the page's own DOM."""
    driver.get(page.as_uri())
    WebDriverWait(driver, timeouts.BROWSER_PAGE).until(
        lambda d: d.execute_script(
            "return document.readyState === 'complete' && "
            "Array.from(document.images).every(i => i.complete)"
        )
    )
    seen: dict[str, Any] = driver.execute_script(
        "return {"
        " images: Array.from(document.images).map(i => [i.getAttribute('src'), i.naturalWidth]),"
        " scrollWidth: document.documentElement.scrollWidth,"
        " innerWidth: window.innerWidth,"
        " first: document.body.firstElementChild.tagName + ': ' +"
        "   document.body.firstElementChild.innerText,"
        " height: document.documentElement.scrollHeight"
        "}"
    )
    return seen


def _check_page(driver: webdriver.Chrome, run_dir: Path, status: str) -> None:
    seen = _opened(driver, run_dir / REPORT_HTML)
    assert seen["images"], "the report shows no image"
    broken = [src for src, width in seen["images"] if not width]
    assert broken == [], f"images that did not load: {broken}"
    assert seen["scrollWidth"] <= seen["innerWidth"], (
        f"the page scrolls sideways at {WIDTH} px: {seen['scrollWidth']} px wide"
    )
    assert seen["first"].startswith(f"H1: {status.upper()}"), seen["first"]
    # The whole page in one picture, for the docs.
    driver.set_window_size(WIDTH, min(int(seen["height"]), 8000))
    assert driver.save_screenshot(str(run_dir / "report.png"))
    driver.set_window_size(WIDTH, 900)


def test_a_checks_report_renders_whole_and_opens_with_its_verdict(
    browser: webdriver.Chrome, conformance: CheckResult
) -> None:
    summary = read_summary(conformance.run_dir)
    write_report(conformance.run_dir, summary, conformance.attempts)
    _check_page(browser, conformance.run_dir, summary.status)


def test_a_report_with_the_talks_scenarios_renders_whole_and_opens_with_its_verdict(
    browser: webdriver.Chrome, conformance: CheckResult, talk_run: ScenarioRun, tmp_path: Path
) -> None:
    # The demo's page: the check's report with the scenarios' takeaways and plot beside it.
    summary = read_summary(conformance.run_dir)
    page_dir = tmp_path / "with-scenarios"
    page_dir.mkdir()
    metrics = headline_metrics(talk_run.results)
    assert metrics, "the talk's scenarios measured no headline"
    write_report(page_dir, summary, conformance.attempts, metrics)
    _check_page(browser, page_dir, summary.status)
    kept = conformance.run_dir / "report-with-scenarios.png"
    kept.write_bytes((page_dir / "report.png").read_bytes())
