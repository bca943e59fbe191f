#!/usr/bin/env python3
"""Which wrong kubelets the verdict catches: simulated kubelets judged by the harness's own code.

    scripts/simulate-verdict.py [--runs 100] [--seed 1] [--markdown docs/simulation.md]

Each case is a kubelet that is wrong in one small way (a neighbour max, a
first restart that waits, a level it never posts), run RUNS times with the
timing measured here: each restart waits its back-off plus an overshoot drawn
from the same worker's measured overshoots (delay minus level, restarts 2 on)
in run 20261204T162930Z-check-quick-8e9d (tests/data/traces/v1.35.8-quick-check),
scaled to the level where the kubelet's requeue jitter grows with it. The attempts go through
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

from harness.model.backoff import BackoffCurve, curve_for  # noqa: E402
from harness.model.kubeletconfig import KubeletBackoffConfig  # noqa: E402
from harness.model.releases import REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY  # noqa: E402
from harness.recording.records import AttemptRecord  # noqa: E402
from harness.runs.checkprofiles import CHECK_PROFILES  # noqa: E402
from harness.verdict import Observation, judge_worker, restarts_needed  # noqa: E402

NS = 1_000_000_000
T0 = 1_796_000_000 * NS
RUN_S = 0.01  # the bare container exits at once


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


def _delays(curve: BackoffCurve) -> Callable[[int], float]:
    return lambda n: curve.delay_before_restart(n).total_seconds()


def _first_waits(curve: BackoffCurve) -> Callable[[int], float]:
    """Restart 1 waits the initial back-off too (the fix of #133472 undone)."""
    return lambda n: curve.initial.total_seconds() if n == 1 else _delays(curve)(n)


CASES = (
    Case("control: fast as told", "fast", FAST, _delays(FAST), True),
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


def _overshoot(worker: str, level: float, rng: random.Random) -> float:
    """An overshoot measured at the nearest level on this worker, its jitter part scaled."""
    measured_level, overshoot = min(
        rng.sample(OVERSHOOTS[worker], k=len(OVERSHOOTS[worker])),
        key=lambda found: abs(found[0] - level),
    )
    # The restart's fixed cost (the sync, the runtime) stays; the requeue jitter,
    # a share of the level (the bounds table: requeue_fraction), scales with it.
    cost = min(overshoot, 1.0)
    jitter = max(overshoot - cost, 0.0)
    return cost + (jitter * level / measured_level if measured_level else 0.0)


def _records(case: Case, restarts: int, rng: random.Random) -> list[AttemptRecord]:
    records: list[AttemptRecord] = []
    started = T0
    for attempt in range(restarts + 1):
        level = case.true_delay(attempt) if attempt else 0.0
        if attempt:
            previous_exit = records[-1].finished_at_ns or 0
            late = _overshoot(case.worker, level, rng) if level else rng.uniform(0.6, 1.2)
            started = previous_exit + round((level + late) * NS)
        reported = level if attempt >= 2 and case.messages else None
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
                created_at_ns=started - round(0.3 * NS) if attempt else started,
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
    for _ in range(runs):
        records = _records(case, required, rng)
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
        args.markdown.write_text(
            "# The verdict on simulated kubelets\n\n"
            f"`scripts/simulate-verdict.py --runs {args.runs} --seed {args.seed}`: "
            "each case run with the v1.35 kubelet's timing and judged by the harness's own "
            "`judge_worker` on the quick and full profiles' needs (see the script's doc).\n\n"
            + table
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
