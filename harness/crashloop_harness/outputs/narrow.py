"""Tables that read at 80 columns, the width rich gives piped output.

Given too little width, rich wraps a table's cells and then cuts them with an
ellipsis: a node name cut to "plain-wo…" no longer says which node passed. A
table here is printed only when every row fits on one line; otherwise the same
rows go out as lines of words, which break only at their spaces.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

# A layout width, not a tolerance: wide enough that rich measures every column of a
# table at its natural width (no terminal is 10,000 columns wide).
_UNBOUNDED: Final = 10_000


def natural_width(console: Console, options: ConsoleOptions, table: Table) -> int:
    """The table's width with no cell wrapped (its title and caption wrap anyway)."""
    return Measurement.get(console, options.update_width(_UNBOUNDED), table).maximum


@dataclass(frozen=True)
class TableOrLines:
    """``table`` where its rows fit the width unwrapped, else ``lines`` saying the same."""

    table: Table
    lines: RenderableType

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        fits = natural_width(console, options, self.table) <= options.max_width
        yield self.table if fits else self.lines


def legend(terms: Sequence[tuple[str, str]]) -> Table:
    """Short names and what they mean, each meaning wrapped between words beside its name."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True)
    grid.add_column()
    for term, meaning in terms:
        grid.add_row(Text(term), Text(meaning))  # Text: a run id's "[" prints, not styles
    return grid
