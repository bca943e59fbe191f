"""Rich tables for verdicts and run summaries (crashloop_harness.outputs.render)."""

from __future__ import annotations

import dataclasses

import pytest
from rich.console import Console
from rich.table import Table

from crashloop_harness.outputs.render import restart_cells, verdict_table
from crashloop_harness.verdict import WorkerVerdict, judge_worker
from tests.unit.factories import (
    DEFAULT,
    DEFAULT_DELAYS,
    FAST,
    attempts,
    default_verdict,
    expected_reports,
    fast_verdict,
)
from tests.unit.narrowtext import WIDTHS, not_whole, rendered, too_wide_or_cut


def text_of(table: Table) -> str:
    console = Console(record=True, width=200)
    console.print(table)
    return console.export_text()


def row_of(text: str, first_cell: str) -> list[str]:
    """The cells of the table row whose first cell is ``first_cell``."""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("│┃").split("│")]
        if cells and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no row starting with {first_cell!r} in:\n{text}")


def test_verdict_table_shows_each_restart_to_the_millisecond() -> None:
    text = text_of(verdict_table(fast_verdict(), FAST))
    for header in ("restart", "expected", "measured", "margin", "bound", "kubelet reported"):
        assert header in text
    assert "fast on crashloop-worker" in text
    assert row_of(text, "1") == ["1", "0s", "0.900s", "+0.900s", "5s", "-", "PASS"]
    assert row_of(text, "3") == ["3", "2s", "2.413s", "+0.413s", "4.5s", "2s", "PASS"]
    assert "FAIL" not in text


def test_verdict_table_shows_the_kubelets_report() -> None:
    verdict = judge_worker(
        attempts([0.3, 2.3], reported=expected_reports(FAST, 2)), FAST, worker="fast"
    )
    assert row_of(text_of(verdict_table(verdict, FAST)), "2")[5] == "2s"


def test_verdict_table_marks_failures_in_words_and_explains_them() -> None:
    text = text_of(verdict_table(default_verdict(), DEFAULT))
    assert row_of(text, "2")[-1] == "PASS"
    assert row_of(text, "3") == ["3", "20s", "35.000s", "+15.000s", "31.5s", "20s", "FAIL"]
    # The caption wraps at the table's width; compare the words.
    words = " ".join(text.split())
    assert "default: restart 3: expected 20s (accepting up to 31.5s), measured 35.000s" in words
    assert "too late: restarted (created) after 35.000s, over the 31.500s upper bound" in words


def test_verdict_table_colours_pass_and_fail() -> None:
    console = Console(record=True, width=200, color_system="truecolor", force_terminal=True)
    console.print(verdict_table(default_verdict(), DEFAULT))
    html = console.export_html(inline_styles=True)
    assert "color: #008000" in html  # green PASS
    assert "color: #800000" in html  # red FAIL


def test_verdict_table_prints_brackets_in_reasons_literally() -> None:
    verdict = default_verdict()
    odd = dataclasses.replace(verdict.checks[2], reason="[bold]not markup[/bold]")
    verdict = dataclasses.replace(verdict, checks=(*verdict.checks[:2], odd))
    assert "[bold]not markup[/bold]" in text_of(verdict_table(verdict, DEFAULT))


def test_verdict_table_of_nothing_says_so() -> None:
    verdict = WorkerVerdict(
        worker="fast", node="w1", checks=(), reported_seen=0, reported_expected=0
    )
    assert "no restart observed yet" in text_of(verdict_table(verdict, FAST))


@pytest.mark.parametrize("width", WIDTHS)
def test_a_verdict_table_reads_whole_with_an_existing_cluster_s_names(width: int) -> None:
    verdict = judge_worker(
        attempts(DEFAULT_DELAYS, reported=expected_reports(DEFAULT, len(DEFAULT_DELAYS))),
        DEFAULT,
        worker="plain-worker2/runs-5s",
        node="plain-worker2",
    )
    lines = rendered(verdict_table(verdict, DEFAULT), width)
    assert too_wide_or_cut(lines, width) == []
    assert not_whole(["plain-worker2/runs-5s", "plain-worker2"], lines) == []
    # Every restart's row on one line, each number with its unit whole.
    rows = [[cell for cell in line.split() if cell != "│"] for line in lines]
    for check in verdict.checks:
        assert [*restart_cells(check), "PASS" if check.passed else "FAIL"] in rows
