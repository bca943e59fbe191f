"""The two locks agree: run.lock (the demo and the CLI) pins what dev.lock pins, and less."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_PIN = re.compile(r"^([A-Za-z0-9_.-]+)==(\S+)", re.MULTILINE)


def _pins(name: str) -> dict[str, str]:
    text = (ROOT / "requirements" / name).read_text()
    return {package.lower(): version for package, version in _PIN.findall(text)}


def test_the_run_lock_pins_the_dev_lock_s_versions_and_no_tool_of_the_tests() -> None:
    run, dev = _pins("run.lock"), _pins("dev.lock")
    assert {p: v for p, v in run.items() if dev.get(p) != v} == {}, "run `make lock`"
    for tool in ("ruff", "mypy", "mkdocs", "selenium", "hypothesis", "pytest-xdist"):
        assert tool in dev
        assert tool not in run
