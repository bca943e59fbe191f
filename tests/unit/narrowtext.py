"""Rendering at a terminal's width, and what must read whole there: names, numbers with units."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

from rich.console import Console, RenderableType

# Piped, rich renders at 80 columns; a terminal beside a projector gives about 100.
WIDTHS = (80, 100)
# What may stand next to a token whose end is not its end: part of a name or a number.
_WORD = r"[\w./+-]"


def rendered(renderable: RenderableType, width: int) -> list[str]:
    """The lines a console ``width`` columns wide prints, trailing spaces dropped."""
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(renderable)
    return [line.rstrip() for line in console.export_text().splitlines()]


def too_wide_or_cut(lines: Sequence[str], width: int) -> list[str]:
    """The lines over ``width`` or holding rich's ellipsis (a cell cut short)."""
    return [line for line in lines if len(line) > width or "…" in line]


def whole(token: str, lines: Sequence[str]) -> bool:
    """Whether ``token`` stands whole on one line, not split, cut or part of a longer word."""
    pattern = re.compile(rf"(?<!{_WORD}){re.escape(token)}(?!{_WORD})")
    return any(pattern.search(line) for line in lines)


def not_whole(tokens: Sequence[str], lines: Sequence[str]) -> list[str]:
    return [token for token in tokens if not whole(token, lines)]
