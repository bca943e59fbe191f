"""How a check turns what it observed into its status."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.checkrun import CHECK_PROFILES, CheckResult, _judge
from tests.unit.test_verdict import FAST, attempts


def _result(status: str, delays: list[float], tmp_path: Path) -> CheckResult:
    result = CheckResult(
        run_id="run",
        run_dir=tmp_path,
        profile=CHECK_PROFILES["quick"],
        rows=[],
        curves={"fast": FAST},
        nodes={"fast": "crashloop-worker"},
        status=status,
    )
    result.attempts = {"fast": attempts(delays)}
    return result


ON_CURVE = [0.9, 2.9, 3.0, 2.8]
OFF_CURVE = [0.9, 2.9, 9.0, 2.8]


@pytest.mark.parametrize(
    ("status", "delays", "expected"),
    [
        ("observed", ON_CURVE, "passed"),
        ("observed", OFF_CURVE, "failed"),
        ("timeout", ON_CURVE, "failed"),
        # A silent node or a dead engine: no pass or fail is claimed.
        ("error", ON_CURVE, "error"),
        ("error", OFF_CURVE, "error"),
        ("interrupted", OFF_CURVE, "interrupted"),
    ],
)
def test_the_status_after_judging(
    status: str, delays: list[float], expected: str, tmp_path: Path
) -> None:
    result = _result(status, delays, tmp_path)
    _judge(result)
    assert result.status == expected
    assert set(result.verdicts) == {"fast"}, "what was measured is judged in every case"
