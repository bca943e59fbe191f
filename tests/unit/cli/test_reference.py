"""docs/cli.md is scripts/cli-reference.py's rendering of the parser; it must never drift."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import ModuleType

from crashloop_harness.cli.app import build_parser
from tests.unit.scripts import load_script

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "cli-reference.py"
DOC = ROOT / "docs" / "cli.md"


def _script() -> ModuleType:
    return load_script("cli-reference")


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _section(page: str, name: str) -> str:
    start = page.index(f"\n## crashloop {name}\n")
    end = page.find("\n## ", start + 1)
    return page[start : end if end != -1 else len(page)]


def test_the_page_is_the_script_s_rendering_of_the_parser() -> None:
    assert DOC.is_file(), "docs/cli.md is missing: run scripts/cli-reference.py"
    assert DOC.read_text(encoding="utf-8") == _script().render(), (
        "docs/cli.md drifted from the parser in harness/crashloop_harness/cli/: run "
        "scripts/cli-reference.py"
    )


def test_the_page_shows_every_command_with_each_option() -> None:
    script = _script()
    page = script.render()
    for name, parser in _commands().items():
        # Wrapping may break a line anywhere a space is; compare the words.
        section = " ".join(_section(page, name).split())
        assert f"usage: crashloop {name}" in section
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            invocation = " ".join(script._invocation(parser, action).split())
            assert f"- `{invocation}`" in section, (name, invocation)


def test_check_says_whether_a_page_drifted(tmp_path: Path) -> None:
    script = _script()
    page = tmp_path / "cli.md"
    assert script.main(["--check", "--output", str(page)]) == 1
    assert script.main(["--output", str(page)]) == 0
    assert script.main(["--check", "--output", str(page)]) == 0
    page.write_text(
        page.read_text(encoding="utf-8").replace("--recreate", "--rebuild"), encoding="utf-8"
    )
    assert script.main(["--check", "--output", str(page)]) == 1
