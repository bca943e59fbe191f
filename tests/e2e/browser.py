"""Headless Chromium from Debian's packages, as the browser tests open a page."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from crashloop_harness.substrate import hostpkgs

CHROMIUM: Final = "/usr/bin/chromium"
CHROMEDRIVER: Final = "/usr/bin/chromedriver"


@contextmanager
def headless_chromium(why: str, *flags: str) -> Iterator[webdriver.Chrome]:
    """A headless Chromium with ``flags`` beside the usual ones, installed first if missing
    (``why`` says which check needs it); quit afterwards whatever happened."""
    hostpkgs.ensure(["chromium", "chromium-driver"], why)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", *flags):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()
