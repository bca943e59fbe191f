"""One timeout table, scaled by one factor from the environment."""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from crashloop_harness.core import timeouts

HARNESS = Path(__file__).parents[3] / "harness" / "crashloop_harness"


@pytest.fixture
def reloaded(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    yield monkeypatch
    monkeypatch.delenv(timeouts.SCALE_VARIABLE, raising=False)
    importlib.reload(timeouts)


def test_every_wait_grows_by_the_scale(reloaded: pytest.MonkeyPatch) -> None:
    base = {name: getattr(timeouts, name) for name in dir(timeouts) if name.isupper()}
    reloaded.setenv(timeouts.SCALE_VARIABLE, "2.5")
    importlib.reload(timeouts)
    assert timeouts.SCALE == 2.5
    assert timeouts.SCALE_PROBLEM is None
    assert 2.5 * base["NODES_READY"] == timeouts.NODES_READY
    assert 2.5 * base["APT_INSTALL"] == timeouts.APT_INSTALL


@pytest.mark.parametrize("raw", ["two", "0", "-1", "nan", "inf"])
def test_a_scale_that_is_not_a_positive_number_is_a_problem_not_a_guess(
    reloaded: pytest.MonkeyPatch, raw: str
) -> None:
    reloaded.setenv(timeouts.SCALE_VARIABLE, raw)
    importlib.reload(timeouts)
    assert timeouts.SCALE == 1.0
    assert timeouts.SCALE_PROBLEM is not None
    assert timeouts.SCALE_VARIABLE in timeouts.SCALE_PROBLEM
    assert "such as 2" in timeouts.SCALE_PROBLEM


def test_no_literal_timeout_is_left_in_the_harness() -> None:
    literal = re.compile(r"\btimeout(?:_s)?=\d")
    found = [
        f"{path.relative_to(HARNESS)}:{number}"
        for path in HARNESS.rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if literal.search(line)
    ]
    assert found == [], "name these waits in harness/crashloop_harness/core/timeouts.py"
