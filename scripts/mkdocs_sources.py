"""mkdocs hook (mkdocs.yml `hooks:`): the docs site links the source files it names.

A page that names a file of the checkout as a code span (`harness/crashloop_harness/
fleet/engine.py`) gets it as a link to that file, which the site carries under src/.
Only files that exist are linked, so a stale name stays plain text; fenced code and
spans already inside a link are left alone. Markdown files are left out: the site
would take them for pages.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SOURCE_DIR = "src"
# A code span that is a path into the checkout's source folders.
_SPAN = re.compile(
    r"(?<!\[)`((?:harness|workloads|clusters|scripts|tests|examples)/[A-Za-z0-9_./-]+)`(?!\]\()"
)
_FENCE = re.compile(r"^(?:```|~~~)", re.MULTILINE)


def linkable(path: str) -> bool:
    """A file of the checkout (not a folder, not Markdown) that a page may link."""
    target = ROOT / path
    return target.is_file() and target.suffix != ".md" and ROOT in target.resolve().parents


def named_sources(markdown: str) -> set[str]:
    return {path for path in _SPAN.findall(markdown) if linkable(path)}


def link_sources(markdown: str, page_uri: str) -> str:
    """``markdown`` with each linkable path span turned into a link, from ``page_uri``."""
    up = posixpath.relpath(SOURCE_DIR, posixpath.dirname(page_uri) or ".")

    def linked(match: re.Match[str]) -> str:
        path = match.group(1)
        return f"[`{path}`]({up}/{path})" if linkable(path) else match.group(0)

    # Every other part between fences is prose; the parts inside fences are kept as written.
    parts = re.split(r"(^(?:```|~~~).*?^(?:```|~~~)[^\n]*$)", markdown, flags=re.M | re.S)
    return "".join(part if _FENCE.match(part) else _SPAN.sub(linked, part) for part in parts)


def on_files(files: Any, config: Any) -> Any:
    """The source files the pages name, added to the site under src/."""
    from mkdocs.structure.files import File

    docs = Path(config["docs_dir"])
    named: set[str] = set()
    for page in docs.rglob("*.md"):
        named |= named_sources(page.read_text(encoding="utf-8"))
    for path in sorted(named):
        files.append(
            File.generated(config, f"{SOURCE_DIR}/{path}", abs_src_path=str(ROOT / path))
        )
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return link_sources(markdown, page.file.src_uri)
