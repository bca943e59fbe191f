"""The documentation site as a reader opens it: every built page in headless Chromium.

`make docs` (mkdocs build --strict) proves the Markdown links resolve; this
proves the pages a browser renders from them: at a laptop's width and a
phone's, each page loads with its images, nothing makes the page scroll
sideways, no table cell shows the backslash that escaped a pipe in the
Markdown, and every link within the site (the theme's own included) reaches a
file of the build, down to its anchor.

No cluster: it is in the slow tier, not marked e2e, because it installs
Debian's chromium and chromium-driver (root and apt), which the unit and
replay tiers never ask of a host.
"""

from __future__ import annotations

import functools
import re
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote, urlsplit

import pytest
from selenium import webdriver
from selenium.webdriver.support.wait import WebDriverWait

from crashloop_harness.core import timeouts
from crashloop_harness.core.proc import run
from tests.e2e.browser import headless_chromium

pytestmark = [pytest.mark.slow]

ROOT: Final = Path(__file__).resolve().parents[2]
# A laptop, and a phone held upright (an iPhone 12 to 15 is 390 CSS px wide).
WIDTHS: Final = (1280, 390)
HEIGHT: Final = 900
# What every page reports of itself once loaded, read by its own DOM.
SEEN_JS: Final = """
return {
  width: window.innerWidth,
  scrollWidth: document.scrollingElement.scrollWidth,
  images: Array.from(document.images).map(i => [i.currentSrc || i.src, i.naturalWidth]),
  escapedPipes: Array.from(document.querySelectorAll('code'))
    .map(c => c.textContent).filter(t => t.includes('\\\\|')),
  links: Array.from(document.querySelectorAll('a[href], link[href], img[src], script[src]'))
    .map(e => e.href || e.src),
}
"""
_ID: Final = re.compile(r"""\sid=["']([^"']+)["']""")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as `make docs` builds it (from the checkout: snippets resolve from there)."""
    out = tmp_path_factory.mktemp("site")
    run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=str(ROOT),
        timeout=timeouts.DOCS_BUILD,
    )
    return out


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """One line per request would bury the test's own output."""


@pytest.fixture(scope="module")
def origin(site: Path) -> Iterator[str]:
    """The site served over HTTP on 127.0.0.1: its pages link to directories (use_directory_urls),
    which a file:// URL does not resolve to their index.html."""
    server = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(site))
    )
    thread = threading.Thread(target=server.serve_forever, name="docs-site", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    with headless_chromium("the docs site's browser check") as driver:
        yield driver


def _pages(site: Path) -> list[str]:
    """Every HTML page of the build, as a path from the site's root."""
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))


def _opened(driver: webdriver.Chrome, url: str) -> dict[str, Any]:
    driver.get(url)
    WebDriverWait(driver, timeouts.BROWSER_PAGE).until(
        lambda d: d.execute_script(
            "return document.readyState === 'complete' && "
            "Array.from(document.images).every(i => i.complete)"
        )
    )
    seen: dict[str, Any] = driver.execute_script(SEEN_JS)
    return seen


def _target(site: Path, path: str) -> Path:
    """The file of the build a same-site URL path serves (a directory: its index.html)."""
    relative = unquote(path).lstrip("/")
    return (
        site / relative / "index.html"
        if not relative or relative.endswith("/")
        else (site / relative)
    )


@functools.cache
def _ids(page: Path) -> frozenset[str]:
    return frozenset(_ID.findall(page.read_text(encoding="utf-8")))


def _broken(site: Path, origin: str, url: str) -> str | None:
    """Why a link does not resolve within the build; None when it does or leaves the site."""
    parts = urlsplit(url)
    if f"{parts.scheme}://{parts.netloc}" != origin:
        return None
    target = _target(site, parts.path)
    if not target.is_file():
        return f"{parts.path}: no such file in the build"
    fragment = unquote(parts.fragment)
    if fragment and target.suffix == ".html" and fragment not in _ids(target):
        return f"{parts.path}#{fragment}: no such anchor"
    return None


@pytest.fixture(scope="module")
def rendered(browser: webdriver.Chrome, site: Path, origin: str) -> dict[int, dict[str, Any]]:
    """Every page opened once at each width: width -> page -> what it showed."""
    pages = _pages(site)
    assert "index.html" in pages
    assert len(pages) > 10, pages
    by_width: dict[int, dict[str, Any]] = {}
    for width in WIDTHS:
        # Resized after start: started with --window-size=390,900 Chromium lays pages out
        # 485 px wide.
        browser.set_window_size(width, HEIGHT)
        by_width[width] = {page: _opened(browser, f"{origin}/{page}") for page in pages}
    return by_width


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_renders_whole_at(rendered: dict[int, dict[str, Any]], width: int) -> None:
    problems: list[str] = []
    images = 0
    for page, seen in rendered[width].items():
        assert seen["width"] == width, f"the window is {seen['width']} px wide, not {width}"
        images += len(seen["images"])
        problems += [f"{page}: image not loaded: {src}" for src, w in seen["images"] if not w]
        if seen["scrollWidth"] > seen["width"]:
            problems.append(f"{page}: scrolls sideways, {seen['scrollWidth']} px wide")
        problems += [f"{page}: a literal \\| in <code>: {text!r}" for text in seen["escapedPipes"]]
    assert images > 0, "no page showed an image: the check of images checked nothing"
    assert problems == [], f"at {width} px:\n" + "\n".join(problems)


def test_every_link_within_the_site_reaches_a_file_and_its_anchor(
    rendered: dict[int, dict[str, Any]], site: Path, origin: str
) -> None:
    links: dict[str, str] = {}  # url -> the first page linking it
    for page, seen in rendered[WIDTHS[0]].items():
        for url in seen["links"]:
            links.setdefault(url, page)
    internal = [url for url in links if url.startswith(origin)]
    assert len(internal) > 20, internal
    broken = [f"{links[url]} -> {why}" for url in links if (why := _broken(site, origin, url))]
    assert broken == [], "\n".join(broken)
