#!/usr/bin/env python3
"""Which wrong kubelets the verdict catches: simulated kubelets judged by the harness's own code.

    scripts/simulate-verdict.py [--runs 100] [--seed 1] [--markdown docs/simulation.md]

Each case is a kubelet that is wrong in one small way (a neighbour max, a
first restart that waits, a level it never posts), run RUNS times with the
timing measured here: each restart waits its back-off, plus the kubelet's
requeue jitter drawn as its source draws it (uniform, up to half the level, at
most 30 s), plus the restart's own cost drawn from the same worker's measured
overshoots at levels of 2 s or less, less their jitter's mean, in run
20261204T162930Z-check-quick-8e9d (tests/data/traces/v1.35.8-quick-check).
Each worker restarts for as long as the profile observes (until its slowest
worker has what it needs), as on a real cluster. The attempts go through
:func:`harness.verdict.judge_worker` with the curve the profile expects and
the restarts the quick and full profiles need; the table gives the share
caught and the rules that fired (each counted once per run, the three most
frequent). The kubelet's back-off messages are
seen, or hidden (a watch that misses them), as the case says.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Final

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.model.backoff import (  # noqa: E402
    REQUEUE_CAP,
    REQUEUE_FRACTION,
    BackoffCurve,
    curve_for,
)
from harness.model.kubeletconfig import KubeletBackoffConfig  # noqa: E402
from harness.model.releases import REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY  # noqa: E402
from harness.recording.records import AttemptRecord  # noqa: E402
from harness.runs.checkprofiles import CHECK_PROFILES  # noqa: E402
from harness.verdict import Observation, judge_worker, restarts_needed  # noqa: E402

NS = 1_000_000_000
T0 = 1_796_000_000 * NS
RUN_S = 0.01  # the bare container exits at once
START_S = 0.3  # creation to start, the runtime's part


def _curve(max_s: float, *, reduced: bool = False) -> BackoffCurve:
    gates = ((REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY, True),) if reduced else ()
    return curve_for(
        KubeletBackoffConfig(
            feature_gates=gates, max_container_restart_period=timedelta(seconds=max_s)
        )
    )


FAST, REDUCED, DEFAULT = _curve(2), _curve(60, reduced=True), _curve(300)


@dataclass(frozen=True)
class Case:
    """A kubelet wrong in one way, on the worker whose curve it bends."""

    name: str
    worker: str
    expected: BackoffCurve  # what the check is told
    true_delay: Callable[[int], float]  # the kubelet's own back-off before restart n
    messages: bool  # the kubelet's back-off messages reach the watch
    # A restart 1 that waits posts its level as every later one does (the real
    # first-restart-backoff mutant did); False: a kubelet that waits without saying so.
    first_message: bool = True


def _delays(curve: BackoffCurve) -> Callable[[int], float]:
    return lambda n: curve.delay_before_restart(n).total_seconds()


def _first_waits(curve: BackoffCurve) -> Callable[[int], float]:
    """Restart 1 waits the initial back-off too (the fix of #133472 undone)."""
    return lambda n: curve.initial.total_seconds() if n == 1 else _delays(curve)(n)


CASES = (
    Case("control: fast as told", "fast", FAST, _delays(FAST), True),
    # A sound kubelet must pass on every worker: at a 60 s or 300 s cap the requeue's
    # jitter spans 30 s, which a bound measured on the fast worker alone once failed.
    Case("control: reduced as told", "reduced", REDUCED, _delays(REDUCED), True),
    Case("control: default as told", "default", DEFAULT, _delays(DEFAULT), True),
    Case("control: fast, messages hidden", "fast", FAST, _delays(FAST), False),
    Case("fast at 3s", "fast", FAST, _delays(_curve(3)), True),
    Case("fast at 3s, messages hidden", "fast", FAST, _delays(_curve(3)), False),
    Case("fast at 1s, messages hidden", "fast", FAST, _delays(_curve(1)), False),
    Case("fast: restart 1 waits, messages hidden", "fast", FAST, _first_waits(FAST), False),
    Case("reduced max 30s", "reduced", REDUCED, _delays(_curve(30, reduced=True)), True),
    Case(
        "reduced max 30s, messages hidden",
        "reduced",
        REDUCED,
        _delays(_curve(30, reduced=True)),
        False,
    ),
    Case("reduced: restart 1 waits", "reduced", REDUCED, _first_waits(REDUCED), True),
    Case(
        "reduced: restart 1 waits, saying nothing",
        "reduced",
        REDUCED,
        _first_waits(REDUCED),
        True,
        first_message=False,
    ),
    Case("fast: restart 1 waits", "fast", FAST, _first_waits(FAST), True),
    Case(
        "fast: restart 1 waits, saying nothing",
        "fast",
        FAST,
        _first_waits(FAST),
        True,
        first_message=False,
    ),
    Case("default max 150s", "default", DEFAULT, _delays(_curve(150)), True),
    Case(
        "default max 600s (the 300s cap ignored)",
        "default",
        DEFAULT,
        lambda n: min(10.0 * 2 ** max(n - 2, 0), 600.0) if n > 1 else 0.0,
        True,
    ),
)


LIVE = ROOT / "tests" / "data" / "traces" / "v1.35.8-quick-check" / "live.json"
TOLD = {"fast": FAST, "reduced": REDUCED, "default": DEFAULT}


def _overshoots() -> dict[str, list[tuple[float, float]]]:
    """worker -> (level, overshoot) of every measured restart that waited."""
    live = json.loads(LIVE.read_text())
    found: dict[str, list[tuple[float, float]]] = {}
    for worker in live["workers"]:
        curve = TOLD.get(worker["worker"])
        if curve is None:
            continue
        for n, measured in enumerate(worker["measured_s"], start=1):
            level = curve.delay_before_restart(n).total_seconds()
            if n >= 2 and measured is not None:
                found.setdefault(worker["worker"], []).append((level, measured - level))
    return found


OVERSHOOTS: Final = _overshoots()


# Overshoots measured at levels this small carry at most 1 s of the requeue's jitter.
SMALL_LEVEL_S: Final = 2.0


def _costs() -> dict[str, list[float]]:
    """worker -> the restart's own cost (the sync, the runtime's start) as measured: its
    overshoots at small levels less their jitter's mean (a quarter of the level); a worker
    with no small level (default) takes the fast worker's, measured on the same machine."""
    costs = {
        worker: [
            max(o - REQUEUE_FRACTION * level / 2, 0.0)
            for level, o in found
            if level <= SMALL_LEVEL_S
        ]
        for worker, found in OVERSHOOTS.items()
    }
    return {worker: costs.get(worker) or costs["fast"] for worker in TOLD}


COSTS: Final = _costs()


def _overshoot(worker: str, level: float, rng: random.Random) -> float:
    """The restart's cost measured on this worker, plus the requeue's jitter at this level
    drawn as the kubelet draws it: uniform up to half the level, at most 30 s
    (wait.Jitter; the bounds table's requeue_fraction and requeue_cap)."""
    jitter = rng.uniform(0.0, REQUEUE_FRACTION * min(level, REQUEUE_CAP.total_seconds()))
    return rng.choice(COSTS[worker]) + jitter


def _horizon_s(profile: str) -> float:
    """How long the profile observes: until its slowest worker has its restarts (a worker
    decided early keeps restarting meanwhile, as on a real cluster)."""
    longest = 0.0
    for worker, curve in TOLD.items():
        need = CHECK_PROFILES[profile].need_for(worker, curve)
        required = restarts_needed(curve, need.min_restarts, need.until_delay)
        longest = max(longest, sum(d.total_seconds() for d in curve.delays(required)))
    return longest


def _records(
    case: Case, restarts: int, rng: random.Random, horizon_s: float = 0.0
) -> list[AttemptRecord]:
    records: list[AttemptRecord] = []
    started = T0
    attempt = -1
    while True:
        attempt += 1
        if attempt > restarts and (started - T0) / NS >= horizon_s:
            break
        level = case.true_delay(attempt) if attempt else 0.0
        if attempt:
            previous_exit = records[-1].finished_at_ns or 0
            late = _overshoot(case.worker, level, rng) if level else rng.uniform(0.6, 1.2)
            # The overshoot is measured to the kubelet's decision (the creation); the
            # runtime starts the container START_S later.
            started = previous_exit + round((level + late + START_S) * NS)
        says = case.messages and (attempt >= 2 or case.first_message)
        reported = level if level and says else None
        records.append(
            AttemptRecord(
                run_id="sim",
                worker=case.worker,
                node=f"node-{case.worker}",
                namespace="sim",
                pod=f"crash-{case.worker}",
                pod_uid="sim-uid",
                container="main",
                attempt=attempt,
                container_id=f"c{attempt}",
                started_at_ns=started,
                created_at_ns=started - round(START_S * NS) if attempt else started,
                finished_at_ns=started + round(RUN_S * NS),
                exit_code=1,
                reported_backoff_s=reported,
            )
        )
    return records


def _caught(case: Case, profile: str, runs: int, rng: random.Random) -> tuple[int, str]:
    need = CHECK_PROFILES[profile].need_for(case.worker, case.expected)
    required = restarts_needed(case.expected, need.min_restarts, need.until_delay)
    rules: Counter[str] = Counter()
    caught = 0
    horizon_s = _horizon_s(profile)
    for _ in range(runs):
        records = _records(case, required, rng, horizon_s)
        verdict = judge_worker(
            records,
            case.expected,
            worker=case.worker,
            node=f"node-{case.worker}",
            observation=Observation(required_restarts=required),
        )
        if not verdict.passed:
            caught += 1
            # Every rule that fired, once per run: which ones a case relies on.
            rules.update({_rule(failure) for failure in verdict.failures})
    return caught, ", ".join(f"{rule} {n}" for rule, n in rules.most_common(3))


def _rule(failure: str) -> str:
    for name, rule in (
        ("levels unconfirmed", "levels unconfirmed"),
        ("cap came", "cap median"),
        ("too early", "too early"),
        ("too late", "too late"),
        ("unconfirmed", "unconfirmed"),
        ("reported", "reported"),
        ("overdue", "overdue"),
        ("incomplete", "incomplete"),
    ):
        if name in failure:
            return rule
    return failure.split(":")[1].strip()[:30] if ":" in failure else failure[:30]


def _with_table(page: Path, runs: int, seed: int, table: str) -> str:
    """The page with its command line and table written again, the prose after them kept."""
    head = (
        "# The verdict on simulated kubelets\n\n"
        f"`scripts/simulate-verdict.py --runs {runs} --seed {seed}`: "
        "each case run with the v1.35 kubelet's timing and judged by the harness's own "
        "`judge_worker` on the quick and full profiles' needs (see the script's doc). "
        '"by" counts every rule that fired, once per run (the three most frequent).\n\n'
    )
    old = page.read_text() if page.exists() else ""
    lines = old.splitlines(keepends=True)
    table_at = next((i for i, line in enumerate(lines) if line.startswith("| case |")), None)
    if table_at is None:
        return head + table
    after = next(
        (i for i in range(table_at, len(lines)) if not lines[i].startswith("|")), len(lines)
    )
    return head + table + "".join(lines[after:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--markdown", type=Path, help="write the table there as well")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    lines = [
        f"| case | worker | quick: caught of {args.runs} | by | full: caught of {args.runs} | by |",
        "|---|---|---|---|---|---|",
    ]
    for case in CASES:
        quick, quick_by = _caught(case, "quick", args.runs, rng)
        full, full_by = _caught(case, "full", args.runs, rng)
        lines.append(
            f"| {case.name} | {case.worker} | {quick} | {quick_by or '-'} | {full} | "
            f"{full_by or '-'} |"
        )
    table = "\n".join(lines) + "\n"
    print(table, end="")
    if args.markdown:
        args.markdown.write_text(_with_table(args.markdown, args.runs, args.seed, table))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
