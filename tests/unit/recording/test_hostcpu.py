"""The host's CPU busy share, from /proc/stat (pure parsing, a real read)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from crashloop_harness.recording.hostcpu import (
    HOST_CPU_FILE,
    CpuSample,
    CpuTimes,
    busy_at,
    busy_between,
    parse_stat,
    read_cpu_times,
    read_samples,
    restarts_under_load,
    saturated_spans,
    write_samples,
)
from tests.unit.factories import attempts

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


S = 1_000_000_000


def test_a_restart_gets_the_busy_share_of_the_second_it_started_in(tmp_path: Path) -> None:
    samples = [CpuSample(10 * S, 0.3), CpuSample(11 * S, 0.95), CpuSample(12 * S, 0.5)]
    assert busy_at(samples, 10 * S + S // 2) == 0.95  # the interval (10s, 11s]
    assert busy_at(samples, 9 * S) == 0.3
    assert busy_at(samples, 15 * S) is None  # after the last sample: unknown
    assert busy_at([CpuSample(20 * S, 1.0)], 10 * S) is None  # too far off to say
    path = tmp_path / HOST_CPU_FILE
    write_samples(path, samples)
    assert read_samples(path) == samples
    assert read_samples(tmp_path / "absent.jsonl") == []


def test_restarts_under_load_count_only_restarts_with_a_sample() -> None:
    samples = [CpuSample(10 * S, 0.3), CpuSample(11 * S, 0.95)]
    starts = {0: 9 * S, 1: 10 * S + 1, 2: 9 * S + 5, 3: 30 * S}
    records = [
        dataclasses.replace(record, started_at_ns=starts[record.attempt])
        for record in attempts([1.0, 1.0, 1.0])
    ]
    # Attempt 0 is no restart; restart 1 came at 95 %, restart 2 at 30 %; restart 3
    # has no sample near it and is not counted either way.
    assert restarts_under_load(samples, {"fast": records}) == {"fast": (1, 2)}


def test_saturated_samples_join_into_spans_with_their_busiest_share() -> None:
    s = 1_000_000_000
    samples = [
        CpuSample(10 * s, 0.5),
        CpuSample(11 * s, 0.95),
        CpuSample(12 * s, 0.99),
        CpuSample(13 * s, 0.4),
        CpuSample(14 * s, 0.92),
    ]
    assert saturated_spans(samples) == ((10 * s, 12 * s, 0.99), (13 * s, 14 * s, 0.92))
    assert saturated_spans(samples, threshold=1.0) == ()
    assert saturated_spans([]) == ()
