"""The host's CPU busy share, from /proc/stat (pure parsing, a real read)."""

from __future__ import annotations

from pathlib import Path

from harness.recording.hostcpu import CpuTimes, busy_between, parse_stat, read_cpu_times

STAT = "cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\nintr 1\n"


def test_the_aggregate_line_counts_everything_but_idle_and_iowait_as_busy() -> None:
    assert parse_stat(STAT) == CpuTimes(busy=150, total=1000)
    assert parse_stat("intr 1\n") is None


def test_the_busy_share_between_two_readings() -> None:
    assert busy_between(CpuTimes(150, 1000), CpuTimes(240, 1100)) == 0.9
    assert busy_between(CpuTimes(150, 1000), CpuTimes(150, 1000)) is None


def test_a_host_without_proc_stat_gives_nothing(tmp_path: Path) -> None:
    assert read_cpu_times(tmp_path / "missing") is None
    assert read_cpu_times() is not None  # this Linux host has one
