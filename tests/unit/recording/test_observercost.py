"""The observer's own cost: engine CPU read from /proc, latency from the records."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from crashloop_harness.recording.observercost import (
    CpuReading,
    engine_cpu_s,
    observation_latencies_ms,
    observer_cost,
)
from crashloop_harness.recording.records import AttemptRecord

TICKS = os.sysconf("SC_CLK_TCK")


def _process(
    proc: Path, pid: int, ppid: int, name: str, *, argv: list[str], ticks: tuple[int, ...]
) -> None:
    """A /proc/<pid> with stat (utime, stime, cutime, cstime as given) and cmdline."""
    entry = proc / str(pid)
    entry.mkdir()
    utime, stime, cutime, cstime = ticks
    # Fields after "(name) ": state ppid pgrp session tty tpgid flags minflt
    # cminflt majflt cmajflt utime stime cutime cstime ...
    fields = ["S", str(ppid), "1", "1", "0", "-1", "0", "0", "0", "0", "0"]
    fields += [str(utime), str(stime), str(cutime), str(cstime), "20", "0"]
    (entry / "stat").write_text(f"{pid} ({name}) {' '.join(fields)}\n")
    (entry / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")


def test_engine_cpu_counts_dockerd_its_containerd_and_the_node_shims(tmp_path: Path) -> None:
    _process(tmp_path, 100, 1, "dockerd", argv=["dockerd"], ticks=(10, 5, 0, 0))
    containerd = ["containerd", "--config", "x"]
    _process(tmp_path, 101, 100, "containerd", argv=containerd, ticks=(4, 1, 2, 3))
    shim = ["containerd-shim-runc-v2", "-namespace", "moby", "-id", "abc"]
    _process(tmp_path, 102, 1, "containerd-shim", argv=shim, ticks=(1, 1, 20, 10))
    # Not the engine: a kind node's own containerd, its shims, the kubelet.
    _process(tmp_path, 200, 150, "containerd", argv=["containerd"], ticks=(500, 500, 0, 0))
    node_shim = ["containerd-shim-runc-v2", "-namespace", "k8s.io", "-id", "def"]
    _process(tmp_path, 201, 1, "containerd-shim", argv=node_shim, ticks=(300, 0, 0, 0))
    _process(tmp_path, 202, 150, "kubelet", argv=["kubelet"], ticks=(900, 0, 0, 0))
    (tmp_path / "self").mkdir()  # not a pid
    assert engine_cpu_s(tmp_path) == pytest.approx((15 + 10 + 32) / TICKS)


def test_no_local_engine_means_no_engine_cost(tmp_path: Path) -> None:
    _process(tmp_path, 100, 1, "containerd", argv=["containerd"], ticks=(10, 5, 0, 0))
    assert engine_cpu_s(tmp_path) is None
    assert engine_cpu_s(tmp_path / "missing") is None


def _record(attempt: int, started: int, seen: int | None) -> AttemptRecord:
    return AttemptRecord(
        run_id="run",
        worker="fast",
        node="node-1",
        namespace="ns",
        pod="crash-fast",
        pod_uid="uid",
        container="app",
        attempt=attempt,
        container_id=f"c{attempt}",
        started_at_ns=started,
        seen_at_ns=seen,
    )


def test_the_cost_is_the_difference_of_two_readings_with_latency_percentiles() -> None:
    records = [_record(i, 1_000_000_000, 1_000_000_000 + (i + 1) * 1_000_000) for i in range(20)]
    records.append(_record(20, 5, None))  # first seen before stamping existed: not counted
    cost = observer_cost(
        observer="events",
        before=CpuReading(at=100.0, harness_s=2.0, engine_s=10.0),
        after=CpuReading(at=220.0, harness_s=5.0, engine_s=13.0),
        records=records,
        reconciled=1,
        reconnects=2,
    )
    assert cost.wall_s == 120.0
    assert cost.harness_cpu_s == 3.0
    assert cost.engine_cpu_s == 3.0
    assert cost.harness_per_min_s == pytest.approx(1.5)
    assert cost.share_of_core == pytest.approx(0.05)
    assert cost.attempts_seen == 20
    assert cost.latency_median_ms == pytest.approx(10.5)
    assert cost.latency_p95_ms == pytest.approx(19.0)
    assert cost.latency_max_ms == pytest.approx(20.0)
    assert "5.0% of one core" in cost.headline()
    assert "ms after they happened (median, max 20 ms)" in cost.headline()


def test_without_an_engine_reading_the_share_is_unknown_not_zero() -> None:
    cost = observer_cost(
        observer="poll",
        before=CpuReading(at=0.0, harness_s=0.0, engine_s=None),
        after=CpuReading(at=60.0, harness_s=1.0, engine_s=4.0),
        records=[],
    )
    assert cost.engine_cpu_s is None
    assert cost.share_of_core is None
    assert cost.latency_median_ms is None
    assert "engine n/a" in cost.headline()
    assert "no start seen" in cost.headline()
    assert observation_latencies_ms([]) == []
