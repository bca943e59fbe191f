"""The report as a document: a few kinds of block, rendered to Markdown and to HTML.

One list of blocks renders to both formats, so they cannot drift apart. Every
piece of text from a run (names, reasons, kubelet messages) is escaped for the
format it lands in: a pod named ``<script>`` must print, not run.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from crashloop_harness.core.atomicfile import write_atomically

# The words that carry a verdict in a table cell (HTML colours them too).
PASS: Final = "PASS"
FAIL: Final = "FAIL"
# Notes are many (one per pod-status timestamp that disagrees with the
# runtime's); the Markdown shows the first few, summary.json keeps them all.
_MD_NOTES_SHOWN: Final = 5

# A report is written twice from the same blocks: Markdown to read in a terminal or a
# pull request, HTML with its plots inline to open in a browser.
REPORT_MD: Final = "report.md"
REPORT_HTML: Final = "report.html"

# --- blocks --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class Bullets:
    """A list; with ``folded`` set, the HTML folds it under that title."""

    items: tuple[str, ...]
    folded: str | None = None


@dataclass(frozen=True)
class Table:
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Image:
    """A PNG next to the report: linked from the Markdown, embedded in the HTML."""

    path: Path
    alt: str


Block = Heading | Paragraph | Bullets | Table | Image


# --- Markdown ------------------------------------------------------------------------------

# Characters that would start emphasis, code, links, HTML or end a table cell.
_MD_SPECIAL: Final = re.compile(r"([\\`*_\[\]<>|~&#])")


def md_escape(text: str) -> str:
    """``text`` as literal Markdown inline text, on one line."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def to_markdown(blocks: Sequence[Block]) -> str:
    parts = [_md_block(block) for block in blocks]
    return "\n\n".join(parts) + "\n"


def _md_block(block: Block) -> str:
    match block:
        case Heading(level, text):
            return f"{'#' * level} {md_escape(text)}"
        case Paragraph(text):
            return md_escape(text)
        case Bullets(items, folded):
            shown = items if folded is None else items[:_MD_NOTES_SHOWN]
            lines = [f"- {md_escape(item)}" for item in shown]
            if len(shown) < len(items):
                lines.append(f"- ... {len(items) - len(shown)} more in summary.json")
            return "\n".join(lines)
        case Table(headers, rows):
            lines = [
                _md_row(headers),
                "|" + "|".join("---" for _ in headers) + "|",
                *(_md_row(row) for row in rows),
            ]
            return "\n".join(lines)
        case Image(path, alt):
            return f"![{md_escape(alt)}]({path.name})"


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(md_escape(cell) for cell in cells) + " |"


# --- HTML ----------------------------------------------------------------------------------

_CSS: Final = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: left; }
th { background: #f0f0f0; }
td.pass { color: #006400; font-weight: bold; }
td.fail { color: #b00000; font-weight: bold; }
img { max-width: 100%; height: auto; display: block; margin: 1em 0; }
"""


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def to_html(blocks: Sequence[Block], title: str) -> str:
    body = "\n".join(_html_block(block) for block in blocks)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{_esc(title)}</title>\n<style>{_CSS}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )


def _html_block(block: Block) -> str:
    match block:
        case Heading(level, text):
            return f"<h{level}>{_esc(text)}</h{level}>"
        case Paragraph(text):
            return f"<p>{_esc(text)}</p>"
        case Bullets(items, folded):
            listing = "<ul>" + "".join(f"<li>{_esc(item)}</li>" for item in items) + "</ul>"
            if folded is None:
                return listing
            return f"<details><summary>{_esc(folded)}</summary>{listing}</details>"
        case Table(headers, rows):
            head = "".join(f"<th>{_esc(h)}</th>" for h in headers)
            body = "".join("<tr>" + "".join(_html_cell(c) for c in row) + "</tr>" for row in rows)
            return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        case Image(path, alt):
            data = base64.b64encode(path.read_bytes()).decode("ascii")
            return f'<img alt="{_esc(alt)}" src="data:image/png;base64,{data}">'


def _html_cell(text: str) -> str:
    # The word carries the verdict; the class only colours it.
    css = {PASS: ' class="pass"', FAIL: ' class="fail"'}.get(text, "")
    return f"<td{css}>{_esc(text)}</td>"


def write_report_pages(run_dir: Path, blocks: Sequence[Block], title: str) -> Path:
    """``report.md`` and ``report.html`` in ``run_dir``, from the same blocks; the HTML's path."""
    write_atomically(run_dir / REPORT_MD, to_markdown(blocks).encode("utf-8"))
    return write_atomically(run_dir / REPORT_HTML, to_html(blocks, title).encode("utf-8"))
