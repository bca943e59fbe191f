"""docs/bounds.md is scripts/bounds-table.py's rendering of the table; it must never drift."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from crashloop_harness.model.bounds import BOUNDS
from tests.unit.scripts import load_script

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "bounds-table.py"
DOC = ROOT / "docs" / "bounds.md"


def _script() -> ModuleType:
    return load_script("bounds-table")


def test_the_page_is_the_script_s_rendering_of_the_table() -> None:
    assert DOC.is_file(), "docs/bounds.md is missing: run scripts/bounds-table.py"
    assert DOC.read_text(encoding="utf-8") == _script().render(), (
        "docs/bounds.md drifted from harness/crashloop_harness/model/bounds.py: run "
        "scripts/bounds-table.py"
    )


def test_the_page_shows_every_entry_with_its_value_and_source() -> None:
    page = _script().render()
    for bound in BOUNDS.values():
        row = next(line for line in page.splitlines() if line.startswith(f"| `{bound.name}` |"))
        assert f"| {bound.shown()} | {bound.source_kind} |" in row
        assert bound.source in row
        assert bound.why in row


def test_check_says_whether_a_page_drifted(tmp_path: Path) -> None:
    script = _script()
    page = tmp_path / "bounds.md"
    assert script.main(["--check", "--output", str(page)]) == 1
    assert script.main(["--output", str(page)]) == 0
    assert script.main(["--check", "--output", str(page)]) == 0
    page.write_text(page.read_text(encoding="utf-8").replace("5 s", "6 s"), encoding="utf-8")
    assert script.main(["--check", "--output", str(page)]) == 1
