"""One Go version named everywhere: every "Go >= X" the project says is pins.GO_MINIMUM."""

from __future__ import annotations

import re
from pathlib import Path

from crashloop_harness.core import pins

ROOT = Path(__file__).resolve().parents[3]
_SAID = re.compile(r"Go (?:>=|≥) ?(1\.\d+)")
_WHERE = ("README.md", "docs", "harness", "scripts", "Makefile", "clusters", "workloads")


def _texts() -> list[Path]:
    found: list[Path] = []
    for name in _WHERE:
        path = ROOT / name
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found += [
                p
                for p in path.rglob("*")
                if p.is_file() and p.suffix in {".md", ".py", ".sh", ".txt", ""}
            ]
    return found


def test_every_go_version_the_project_asks_for_is_the_pinned_minimum() -> None:
    said = {
        f"{path.relative_to(ROOT)}: Go >= {version}"
        for path in _texts()
        for version in _SAID.findall(path.read_text(errors="replace"))
        if version != pins.GO_MINIMUM
    }
    assert said == set(), f"name Go >= {pins.GO_MINIMUM} (core/pins.py GO_MINIMUM) instead"


def test_the_install_hint_names_the_minimum_and_where_to_get_it() -> None:
    assert f"Go >= {pins.GO_MINIMUM}" in pins.GO_INSTALL
    assert "go.dev/dl" in pins.GO_INSTALL
