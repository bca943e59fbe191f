"""The node's pace probe: the program run in the node, and what its output says."""

from __future__ import annotations

import subprocess

import pytest

from crashloop_harness.recording.pace import (
    CPU_BURST,
    PaceSample,
    pace_argv,
    pace_program,
    parse_pace,
)


def test_a_probe_s_line_is_its_start_and_time_on_the_node_s_clock() -> None:
    sample = parse_pace("n1", "1796611571008241062 1796611571155760150 0\n")
    assert isinstance(sample, PaceSample)
    assert (sample.node, sample.started_ns) == ("n1", 1796611571008241062)
    assert sample.seconds == pytest.approx(0.147519088)


@pytest.mark.parametrize(
    ("output", "says"),
    [
        ("1 2 1", "the pace probe failed in the node (exit 1)"),
        ("", "unreadable pace probe output"),
        ("ctr: image not found", "unreadable pace probe output"),
        ("5 4 0", "ended before it began"),
    ],
)
def test_a_probe_that_says_nothing_of_the_pace_says_why(output: str, says: str) -> None:
    found = parse_pace("n1", output)
    assert isinstance(found, str)
    assert says in found


def test_the_program_is_a_burst_of_shell_arithmetic_timed_by_the_shell_alone() -> None:
    program = pace_program(500)
    # No process is started between the two readings: no date, no runtime client.
    assert program.count("$EPOCHREALTIME") == 2
    assert "while (( i < 500 ))" in program
    for started in ("date", "ctr", "crictl", "kubectl"):
        assert started not in program


def test_the_program_prints_one_parseable_line_whose_time_grows_with_the_burst() -> None:
    def timed(iterations: int) -> float:
        done = subprocess.run(pace_argv(iterations), capture_output=True, text=True, check=True)
        found = parse_pace("n1", done.stdout)
        assert isinstance(found, PaceSample), done.stdout
        assert found.probe == CPU_BURST
        return found.seconds

    # A thousand times the burst takes longer: the time is the burst's, not a constant.
    # The least of three each, so a busy host's one preemption cannot turn it round.
    assert min(timed(200) for _ in range(3)) < min(timed(200_000) for _ in range(3))
