"""The zombie scenario's model of a PID limit filling up (pure).

The server of :mod:`.zombie_reaping` samples its PID namespace every second
into ``zombies.log``: how many zombies, how many tasks, whether its fork check
gave a running process. This module reads those samples, says how fast the
zombies grew, and models one attempt's fill: from what the pod holds anyway
(its baseline, pause included) to the zombies leaving no room for the fork
check's child.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.scenarios import common

# The PID limit the crashloop-pids cluster's kubelets set on every pod
# (podPidsLimit in profiles/*-pids.yaml; a unit test keeps the two equal).
POD_PIDS_LIMIT: Final = 64
# One readiness probe every 2 s, each leaving 2 zombies: the limit is reached
# in about a minute (64 x 2 / 2 s), the scenario's time within a few minutes.
PROBE_PERIOD_S: Final = 2
ZOMBIES_PER_PROBE: Final = 2
# The server's sample and fork check.
SAMPLE_S: Final = 1
ZOMBIES_LOG: Final = "zombies.log"
FORK_OK: Final = "ok"
# The pause container: one task of the pod's PID limit the server cannot see.
PAUSE_TASKS: Final = 1
# The most processes of the workload binary in flight at once beside the
# server: the probe (the kubelet runs one at a time), its children, the fork
# check's child.
MOST_IN_FLIGHT: Final = ZOMBIES_PER_PROBE + 2


@dataclass(frozen=True)
class Sample:
    """One line of the server's zombies.log."""

    unix_ns: int
    zombies: int
    tasks: int
    fork: str  # "ok", "failed" (fork refused), "child-failed" (forked, could not run)

    @property
    def live(self) -> int:
        """Tasks that are not zombies: the server's threads and whatever is in flight."""
        return self.tasks - self.zombies


def parse_samples(text: str) -> list[Sample]:
    """The samples of a zombies.log, in file order; a torn last line is dropped."""
    lines = text.split("\n")
    samples = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            samples.append(
                Sample(int(raw["unix_ns"]), int(raw["zombies"]), int(raw["tasks"]), raw["fork"])
            )
        except (ValueError, KeyError, TypeError) as error:
            if number == len(lines):
                break
            raise ValueError(f"{ZOMBIES_LOG} line {number}: not a sample: {error}") from error
    return samples


def within(samples: Sequence[Sample], attempt: AttemptRecord) -> list[Sample]:
    """The samples one attempt's server took (its start to its end, or on)."""
    end = attempt.finished_at_ns
    return [
        s
        for s in samples
        if s.unix_ns >= attempt.started_at_ns and (end is None or s.unix_ns <= end)
    ]


@dataclass(frozen=True)
class PodTrace:
    """What one pod left: its container's attempts, its server's samples, its probes' starts."""

    attempts: Sequence[AttemptRecord]
    samples: Sequence[Sample]
    probes_ns: Sequence[int] = ()


@dataclass(frozen=True)
class Fill:
    """One attempt of the non-reaping pod, from its start to its first failed fork."""

    start_ns: int
    failed_ns: int | None  # the first sample whose fork did not give a running process
    baseline: int  # tasks the pod holds without zombies (pause included): the fewest seen
    in_flight: int  # the most tasks seen beyond the baseline that were not zombies
    zombies_at_failure: int | None

    def model_s(self, processes: int) -> float:
        """Seconds until the zombies leave no room for ``processes`` more processes of the
        workload binary, each the size of the most seen in flight (``in_flight``).

        0: the zombies alone fill the limit (the latest the fork check can fail);
        1: no room for the fork check's child (the model); ``MOST_IN_FLIGHT``:
        a probe, its children and the check's child all at once (the earliest).
        """
        held = self.baseline + processes * self.in_flight
        return (POD_PIDS_LIMIT - held) * PROBE_PERIOD_S / ZOMBIES_PER_PROBE


def fill_of(attempt: AttemptRecord, samples: Sequence[Sample]) -> Fill | None:
    """The attempt's fill from its samples; None when its server left none."""
    mine = within(samples, attempt)
    if not mine:
        return None
    failed = next((s for s in mine if s.fork != FORK_OK), None)
    before = [s for s in mine if failed is None or s.unix_ns < failed.unix_ns] or mine
    fewest = min(s.live for s in before)
    return Fill(
        start_ns=attempt.started_at_ns,
        failed_ns=None if failed is None else failed.unix_ns,
        baseline=fewest + PAUSE_TASKS,
        in_flight=max(s.live for s in before) - fewest,
        zombies_at_failure=None if failed is None else failed.zombies,
    )


def half_fill(samples: Sequence[Sample]) -> tuple[Sample, Sample] | None:
    """The first and the last sample of a fill's first half (before the limit slows the
    probes' forks); None with under two samples or no time between them."""
    if len(samples) < 2:
        return None
    last = samples[-1].zombies
    half = [s for s in samples if s.zombies <= last / 2]
    first, end = samples[0], half[-1] if len(half) > 1 else samples[1]
    return (first, end) if end.unix_ns > first.unix_ns else None


def growth(first: AttemptRecord | None, bare: PodTrace) -> list[common.Metric]:
    """How fast the zombies grew over the first half of the first fill: per probe, which
    the story fixes, and per minute, which the kubelet's probe ticker sets."""
    names = ("zombies_per_probe", "zombies_per_min")
    before = [] if first is None else within(bare.samples, first)
    window = half_fill([s for s in before if s.fork == FORK_OK])
    if window is None:
        why = "fewer than two samples of the first attempt before the limit"
        return [
            common.unmeasured(names[0], why, "count"),
            common.unmeasured(names[1], why, "1/min"),
        ]
    start, end = window
    gained = end.zombies - start.zombies
    window_s = common.seconds(end.unix_ns - start.unix_ns)
    probes = sum(start.unix_ns < t <= end.unix_ns for t in bare.probes_ns)
    each = ZOMBIES_PER_PROBE
    # A probe stamps its start before it forks: one stamped just before either
    # sample may have its children counted on the other side of it.
    per_probe = common.bounded(
        names[0],
        "count",
        expected=each,
        measured=gained / probes if probes else None,
        lower=each * (probes - 1) / probes if probes else None,
        upper=each * (probes + 1) / probes if probes else None,
        detail=(
            f"{gained} zombies over the {probes} probes of the first {window_s:.0f}s of the "
            "fill, each killed at its timeout (one probe more or less at either end)"
        ),
    )
    # Reported, not bounded: a probe that outlasts its period makes the ticker skip a
    # tick, which is the node's pace, not the story (run 20261206T162430Z-scenarios-a50f:
    # 54.2/min on default against 60).
    per_min = common.bounded(
        names[1],
        "1/min",
        expected=each * 60 / PROBE_PERIOD_S,
        measured=gained / window_s * 60,
        lower=None,
        upper=None,
        detail=f"one probe every {PROBE_PERIOD_S}s at most (the kubelet's ticker)",
    )
    return [per_probe, per_min]
