"""The exit code of a check or a nightly: an error (no answer) apart from a failure."""

from __future__ import annotations

import pytest

from crashloop_harness.cli.codes import CHECK_CODES, COULD_NOT_JUDGE, verdict_exit


@pytest.mark.parametrize(
    ("status", "passed", "code"),
    [
        ("passed", True, 0),
        ("failed", False, 1),
        ("error", False, COULD_NOT_JUDGE),
        ("interrupted", False, 130),
        ("interrupted", True, 130),
    ],
)
def test_each_status_has_its_code(status: str, passed: bool, code: int) -> None:
    assert verdict_exit(status, passed) == code


def test_the_help_names_the_code_of_a_run_that_could_not_judge() -> None:
    assert f"  {COULD_NOT_JUDGE}    the run could not judge" in CHECK_CODES
