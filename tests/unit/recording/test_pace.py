"""The node's pace probe: the program run in the node, and what its output says."""

from __future__ import annotations

import subprocess

import pytest

from crashloop_harness.recording.pace import PaceSample, pace_argv, pace_program, parse_pace


def test_a_probe_s_line_is_its_start_and_time_on_the_node_s_clock() -> None:
    sample = parse_pace("n1", "1796611571008241062 1796611571155760150 0\n")
    assert isinstance(sample, PaceSample)
    assert (sample.node, sample.started_ns) == ("n1", 1796611571008241062)
    assert sample.seconds == pytest.approx(0.147519088)


@pytest.mark.parametrize(
    ("output", "says"),
    [
        ("1 2 1", "failed the pace probe (exit 1)"),
        ("", "unreadable pace probe output"),
        ("ctr: image not found", "unreadable pace probe output"),
        ("5 4 0", "ended before it began"),
    ],
)
def test_a_probe_that_says_nothing_of_the_pace_says_why(output: str, says: str) -> None:
    found = parse_pace("n1", output)
    assert isinstance(found, str)
    assert says in found


def test_the_program_runs_the_image_from_the_runtime_s_own_client() -> None:
    program = pace_program("crashloop.local/workload:v1", "/workload")
    # containerd's client, in the kubelet's namespace, never the kubelet or crictl.
    assert "ctr --namespace k8s.io run --rm crashloop.local/workload:v1" in program
    assert "crictl" not in program
    assert "--mode exit --exit-code 0" in program


def test_the_program_is_a_shell_line_that_prints_one_parseable_line() -> None:
    # Run with a stand-in for ctr that succeeds: the timing and the line are the shell's own.
    argv = pace_argv("img", "/workload")
    program = "ctr() { return 0; }; " + argv[2]
    done = subprocess.run(["sh", "-c", program], capture_output=True, text=True, check=True)
    found = parse_pace("n1", done.stdout)
    assert isinstance(found, PaceSample), done.stdout
    assert 0 < found.seconds < 60
