#!/usr/bin/env python3
"""Regenerate the report screenshots under docs/screenshots/ from real run directories.

    scripts/screenshots.py --check runs/<id>-check-quick-* --demo runs/<id>-check-demo-*

Each picture is one capture of a run's report.html in headless Chromium
(Debian's chromium and chromium-driver, installed on demand as the browser
tests do), 1280 px wide: the page from its top down to a stated element, or
that element alone. Nothing is stitched together. A run directory without a
report.html (the recording the package ships, a run of the test suite) gets
one written from its summary, attempt log and host CPU samples into a
temporary directory: run directories are only read. Each picture's run id is
printed, for the line the docs show under it.
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from PIL import Image
from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.wait import WebDriverWait

ROOT: Final = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "harness"))

from crashloop_harness.core import timeouts  # noqa: E402
from crashloop_harness.live.replay import load_recording  # noqa: E402
from crashloop_harness.outputs.document import REPORT_HTML  # noqa: E402
from crashloop_harness.outputs.report import write_report  # noqa: E402
from crashloop_harness.outputs.summaryfile import read_summary  # noqa: E402
from crashloop_harness.recording.hostcpu import HOST_CPU_FILE, read_samples  # noqa: E402
from crashloop_harness.substrate import hostpkgs  # noqa: E402

SCREENSHOTS: Final = ROOT / "docs" / "screenshots"
CHROMIUM: Final = "/usr/bin/chromium"
CHROMEDRIVER: Final = "/usr/bin/chromedriver"
WIDTH: Final = 1280
# The window's height while a page loads, and the space kept below a "top" picture's element.
HEIGHT: Final = 900
MARGIN: Final = 16
# Screenshots of text and plots hold few colours: a palette of 256 keeps them well under half
# the size (the check's picture: 121 KiB, 300 KiB in full colour).
COLOURS: Final = 256


@dataclass(frozen=True)
class Shot:
    """One picture: which run's report, and the element it is cut at.

    ``kind`` "top": the page from its top down to the element's end (what a
    reader sees first); "element": the element alone.
    """

    file: str
    run: Literal["check", "demo"]
    kind: Literal["top", "element"]
    xpath: str
    what: str

    def describe(self) -> str:
        where = "from its top down to its" if self.kind == "top" else "its"
        return f"{self.file}: the {self.run}'s report, {where} {self.what}"


SHOTS: Final = (
    Shot(
        "report-check.png",
        "check",
        "top",
        "//h2[.='Live kubelet config per worker']/following-sibling::table[1]",
        "live kubelet config table",
    ),
    Shot(
        "report-demo.png",
        "demo",
        "element",
        "//img[@alt='scenario metrics, measured vs model']",
        "plot of the scenarios",
    ),
)


def report_page(run_dir: Path, scratch: Path) -> Path:
    """The run's own report.html, or one written into ``scratch`` from its files."""
    page = run_dir / REPORT_HTML
    if page.is_file():
        return page
    # The replay's reading: the summary and each worker's bare crashing pod's attempts.
    recording = load_recording(run_dir)
    samples = read_samples(run_dir / HOST_CPU_FILE)
    return write_report(scratch, recording.summary, recording.attempts, host_cpu=samples)


def browser() -> webdriver.Chrome:
    hostpkgs.ensure(["chromium", "chromium-driver"], "the docs' screenshots")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"):
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))


def viewport(driver: webdriver.Chrome, height: int) -> None:
    """The page's visible area made ``WIDTH`` x ``height`` CSS px (the window is taller)."""
    frame: int = driver.execute_script("return window.outerHeight - window.innerHeight")
    driver.set_window_size(WIDTH, height + frame)
    WebDriverWait(driver, timeouts.BROWSER_PAGE).until(
        lambda d: d.execute_script("return [innerWidth, innerHeight]") == [WIDTH, height]
    )


def opened(driver: webdriver.Chrome, page: Path) -> None:
    """The page loaded with every image, at the top, ``HEIGHT`` px visible."""
    driver.get(page.as_uri())
    viewport(driver, HEIGHT)
    WebDriverWait(driver, timeouts.BROWSER_PAGE).until(
        lambda d: d.execute_script(
            "return document.readyState === 'complete' && "
            "Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)"
        )
    )


def capture(driver: webdriver.Chrome, shot: Shot) -> bytes:
    """The shot's picture as PNG, in one capture."""
    try:
        element: WebElement = driver.find_element(By.XPATH, shot.xpath)
    except NoSuchElementException:
        raise SystemExit(f"{shot.file}: the report has no {shot.what}") from None
    top, bottom = driver.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "return [Math.floor(r.top + scrollY), Math.ceil(r.bottom + scrollY)]",
        element,
    )
    if shot.kind == "top":
        viewport(driver, bottom + MARGIN)
        driver.execute_script("window.scrollTo(0, 0)")
        return driver.get_screenshot_as_png()
    # The element whole inside the visible area: a taller one would come out cut.
    viewport(driver, max(HEIGHT, bottom - top + 2 * MARGIN))
    return element.screenshot_as_png


def compact(png: bytes) -> bytes:
    picture = Image.open(io.BytesIO(png)).convert("RGB").quantize(COLOURS)
    out = io.BytesIO()
    picture.save(out, format="PNG", optimize=True)
    return out.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__,
        epilog="; ".join(shot.describe() for shot in SHOTS),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--check", type=Path, required=True, help="a quick check's run directory")
    parser.add_argument(
        "--demo",
        type=Path,
        required=True,
        help="a demo's own run directory, with its scenarios (the recording the package ships "
        "keeps none)",
    )
    parser.add_argument("--into", type=Path, default=SCREENSHOTS, help="default: docs/screenshots")
    args = parser.parse_args()
    runs: dict[str, Path] = {"check": args.check, "demo": args.demo}
    driver = browser()
    try:
        with tempfile.TemporaryDirectory() as scratch:
            for shot in SHOTS:
                run_dir = runs[shot.run]
                written = Path(scratch) / shot.run
                written.mkdir()
                opened(driver, report_page(run_dir, written))
                png = compact(capture(driver, shot))
                (args.into / shot.file).write_bytes(png)
                width, height = Image.open(io.BytesIO(png)).size
                print(
                    f"{shot.file}: run {read_summary(run_dir).run_id}, {width}x{height}, "
                    f"{len(png) // 1024} KiB"
                )
    finally:
        driver.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
