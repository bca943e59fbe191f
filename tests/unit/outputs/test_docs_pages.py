"""The documentation pages as the site renders them: what strict mode does not catch."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[3] / "docs"
# A code span holding "\|": the site's tables keep a pipe inside code as it is, so the
# escape shows as a literal backslash (GitHub's tables would need it; the site is the page).
ESCAPED_PIPE_IN_CODE = re.compile(r"`[^`\n]*\\\|[^`\n]*`")


def test_no_code_span_shows_a_literal_escaped_pipe() -> None:
    found = {
        f"{page.name}:{number}": line
        for page in sorted(DOCS.glob("*.md"))
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if ESCAPED_PIPE_IN_CODE.search(line)
    }
    assert found == {}


def test_the_first_page_has_the_install_step_and_the_two_commands_up_top() -> None:
    first_screen = "\n".join((DOCS / "index.md").read_text(encoding="utf-8").splitlines()[:40])
    assert "make demo" in first_screen
    assert "make test" in first_screen
    assert "pip install" in first_screen
