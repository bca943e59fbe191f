#!/usr/bin/env python3
"""Which wrong kubelets the verdict catches: simulated kubelets judged by the harness's own code.

    scripts/simulate-verdict.py [--runs 100] [--seed 1] [--markdown docs/simulation.md]
        [--control-runs 1000] [--costs 0.5,1,1.5,2,3] [--mutation-costs 1,2]

Each case is a kubelet that is wrong in one small way (a neighbour max, a
first restart that waits, a level it never posts), run RUNS times with the
timing measured here: each restart waits its back-off, plus the kubelet's
requeue jitter drawn as its source draws it (uniform, up to half the level, at
most 30 s), plus the restart's own cost drawn from the same worker's measured
overshoots at levels of 2 s or less, less their jitter's mean, in run
20261204T162930Z-check-quick-8e9d (tests/data/traces/v1.35.8-quick-check).
Each worker restarts for as long as the profile observes (until its slowest
worker has what it needs), as on a real cluster. The attempts go through
:func:`crashloop_harness.verdict.judge_worker` with the curve the profile expects and
the restarts the quick and full profiles need; the table gives the share
caught and the rules that fired (each counted once per run, the three most
frequent). The kubelet's back-off messages are
seen, or hidden (a watch that misses them), as the case says.

Hosts other than this one: ``--costs`` multiplies the part of each restart
no back-off timer decides (the restart's own cost, restart 1's delay, the
runtime's start latency, drawn from the reference host's measured
percentiles) by each factor; each run has the check's restart-cost probes
beside it (PROBES_PER_NODE restarts with no back-off), and the sound kubelets (the controls) run
``--control-runs`` times at each, judged twice: with each node's cost
measured from its records (crashloop_harness.verdict.nodecost, as a check judges
now) and at the reference host's constant bounds (as it judged before),
so both columns come from one script. The wrong kubelets run at
``--mutation-costs``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Final

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "harness"))

from crashloop_harness.model.backoff import (  # noqa: E402
    REQUEUE_CAP,
    REQUEUE_FRACTION,
    BackoffCurve,
    curve_for,
)
from crashloop_harness.model.kubeletconfig import KubeletBackoffConfig  # noqa: E402
from crashloop_harness.model.releases import REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY  # noqa: E402
from crashloop_harness.recording.records import AttemptRecord  # noqa: E402
from crashloop_harness.runs.check import PROBES_PER_NODE  # noqa: E402
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES  # noqa: E402
from crashloop_harness.verdict import Observation, WorkerVerdict, judge_worker, restarts_needed  # noqa: E402
from crashloop_harness.verdict.nodecost import cost_of, reference_start_at  # noqa: E402

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


def _overshoot(worker: str, level: float, rng: random.Random, cost: float = 1.0) -> float:
    """The restart's cost measured on this worker (times ``cost``, a slower or faster host),
    plus the requeue's jitter at this level drawn as the kubelet draws it: uniform up to half
    the level, at most 30 s (wait.Jitter; the bounds table's requeue_fraction and
    requeue_cap)."""
    jitter = rng.uniform(0.0, REQUEUE_FRACTION * min(level, REQUEUE_CAP.total_seconds()))
    return cost * rng.choice(COSTS[worker]) + jitter


def _first_restart(rng: random.Random, cost: float) -> float:
    """A restart that waits no back-off (restart 1): the exit noticed and the sync, measured
    here at 0.6-1.2 s (docs/bounds.md, first_restart_upper_bound), times ``cost``."""
    return cost * rng.uniform(0.6, 1.2)


def _probe(rng: random.Random, cost: float, index: int) -> list[AttemptRecord]:
    """A restart-cost probe: one run, one restart with no back-off
    (crashloop_harness.runs.check)."""
    first_start = _start_latency(rng, cost)
    exit_ns = T0 + round((first_start + RUN_S) * NS)
    start_s = _start_latency(rng, cost)
    created_ns = exit_ns + round(_first_restart(rng, cost) * NS)
    return [
        AttemptRecord(
            run_id="sim",
            worker="probe",
            node="probe-node",
            namespace="sim",
            pod=f"probe-{index}",
            pod_uid=f"probe-{index}",
            container="main",
            attempt=attempt,
            container_id=f"p{index}-{attempt}",
            started_at_ns=started,
            created_at_ns=created,
            finished_at_ns=finished,
        )
        for attempt, created, started, finished in (
            (0, T0, T0 + round(first_start * NS), exit_ns),
            (1, created_ns, created_ns + round(start_s * NS), None),
        )
    ]


def _start_latency(rng: random.Random, cost: float) -> float:
    """The runtime's creation-to-start, drawn from the reference host's measured percentiles
    (bound reference_start_latency) and slowed by ``cost`` like the rest of the restart."""
    return cost * reference_start_at(rng.random())


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
    case: Case, restarts: int, rng: random.Random, horizon_s: float = 0.0, cost: float = 1.0
) -> list[AttemptRecord]:
    records: list[AttemptRecord] = []
    started = T0
    attempt = -1
    while True:
        attempt += 1
        if attempt > restarts and (started - T0) / NS >= horizon_s:
            break
        level = case.true_delay(attempt) if attempt else 0.0
        start_s = _start_latency(rng, cost)
        if attempt:
            previous_exit = records[-1].finished_at_ns or 0
            late = _overshoot(case.worker, level, rng, cost) if level else _first_restart(rng, cost)
            # The overshoot is measured to the kubelet's decision (the creation); the
            # runtime starts the container its start latency later.
            started = previous_exit + round((level + late + start_s) * NS)
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
                created_at_ns=started - round(start_s * NS),
                finished_at_ns=started + round(RUN_S * NS),
                exit_code=1,
                reported_backoff_s=reported,
            )
        )
    return records


@dataclass
class Tally:
    """How the runs of one case at one cost ended, and which rules fired."""

    runs: int = 0
    failed: int = 0
    errors: int = 0
    rules: Counter[str] = field(default_factory=Counter)

    def add(self, verdict: WorkerVerdict) -> None:
        self.runs += 1
        if verdict.passed:
            return
        if verdict.in_error:
            self.errors += 1
        else:
            self.failed += 1
        # Every rule that fired, once per run: which ones a case relies on.
        self.rules.update({failure.code for failure in verdict.failures})

    @property
    def caught(self) -> int:
        return self.failed + self.errors

    def by(self) -> str:
        return ", ".join(f"{rule} {n}" for rule, n in self.rules.most_common(3)) or "-"


def _judge(
    case: Case, profile: str, runs: int, rng: random.Random, cost: float = 1.0
) -> tuple[Tally, Tally]:
    """The case's runs judged on each node's measured cost, and at the reference's bounds."""
    need = CHECK_PROFILES[profile].need_for(case.worker, case.expected)
    required = restarts_needed(case.expected, need.min_restarts, need.until_delay)
    measured, constant = Tally(), Tally()
    horizon_s = _horizon_s(profile)
    node = f"node-{case.worker}"
    for _ in range(runs):
        records = _records(case, required, rng, horizon_s, cost)
        probes = [_probe(rng, cost, index) for index in range(PROBES_PER_NODE)]
        for tally, node_cost in ((measured, cost_of(node, [records, *probes])), (constant, None)):
            tally.add(
                judge_worker(
                    records,
                    case.expected,
                    worker=case.worker,
                    node=node,
                    observation=Observation(required_restarts=required, cost=node_cost),
                )
            )
    return measured, constant


def _share(count: int, runs: int) -> str:
    return f"{100 * count / runs:.1f} %"


def _with_tables(page: Path, command: str, tables: str) -> str:
    """The page with its command line and tables written again, the prose after them kept."""
    head = (
        "# The verdict on simulated kubelets\n\n"
        f"`{command}`: each case run with the v1.35 kubelet's timing and judged by the "
        "harness's own `judge_worker` on the quick and full profiles' needs (see the script's "
        'doc). "by" counts every rule that fired, once per run (the three most frequent).\n\n'
    )
    old = page.read_text() if page.exists() else ""
    marker = "What it says"
    return head + tables + ("\n" + old[old.index(marker) :] if marker in old else "")


def _control_table(runs: int, costs: list[float], rng: random.Random) -> str:
    lines = [
        "Sound kubelets on hosts whose restarts cost a multiple of this one's, "
        f"{runs} runs per profile and cost: the share that ended failed and in error, judged "
        "on each node's measured cost (now) and at the reference host's constant bounds "
        "(before).\n",
        "| control | cost | quick: failed | error | before: failed | full: failed | error | "
        "before: failed | by (now) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for case in (c for c in CASES if c.name.startswith("control")):
        for cost in costs:
            quick, quick_before = _judge(case, "quick", runs, rng, cost)
            full, full_before = _judge(case, "full", runs, rng, cost)
            rules = quick.rules + full.rules
            by = ", ".join(f"{rule} {n}" for rule, n in rules.most_common(3)) or "-"
            lines.append(
                f"| {case.name.removeprefix('control: ')} | x{cost:g} | "
                f"{_share(quick.failed, runs)} | {_share(quick.errors, runs)} | "
                f"{_share(quick_before.failed, runs)} | {_share(full.failed, runs)} | "
                f"{_share(full.errors, runs)} | {_share(full_before.failed, runs)} | {by} |"
            )
    return "\n".join(lines) + "\n"


def _mutation_table(runs: int, costs: list[float], rng: random.Random) -> str:
    header = " | ".join(f"x{c:g} quick | x{c:g} full" for c in costs)
    lines = [
        f"Wrong kubelets, {runs} runs per profile and cost: caught (failed + error) and, of "
        "those, in error; judged on each node's measured cost.\n",
        f"| case | worker | {header} | by (x{costs[0]:g}, quick and full) |",
        "|---|---|" + "---|---|" * len(costs) + "---|",
    ]
    for case in (c for c in CASES if not c.name.startswith("control")):
        cells: list[str] = []
        by = ""
        for cost in costs:
            quick, _ = _judge(case, "quick", runs, rng, cost)
            full, _ = _judge(case, "full", runs, rng, cost)
            cells += [_caught_cell(quick), _caught_cell(full)]
            if not by:
                rules = quick.rules + full.rules
                by = ", ".join(f"{rule} {n}" for rule, n in rules.most_common(3)) or "-"
        lines.append(f"| {case.name} | {case.worker} | {' | '.join(cells)} | {by} |")
    return "\n".join(lines) + "\n"


def _caught_cell(tally: Tally) -> str:
    return f"{tally.caught}" + (f" ({tally.errors} error)" if tally.errors else "")


def _floats(text: str) -> list[float]:
    return [float(part) for part in text.split(",") if part.strip()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100, help="runs per wrong kubelet")
    parser.add_argument("--control-runs", type=int, default=1000, help="runs per sound kubelet")
    parser.add_argument("--costs", type=_floats, default=[0.5, 1.0, 1.5, 2.0, 3.0])
    parser.add_argument("--mutation-costs", type=_floats, default=[1.0, 2.0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--markdown", type=Path, help="write the tables there as well")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    tables = (
        _control_table(args.control_runs, args.costs, rng)
        + "\n"
        + _mutation_table(args.runs, args.mutation_costs, rng)
    )
    print(tables, end="")
    if args.markdown:
        command = (
            f"scripts/simulate-verdict.py --runs {args.runs} --control-runs {args.control_runs} "
            f"--costs {','.join(f'{c:g}' for c in args.costs)} "
            f"--mutation-costs {','.join(f'{c:g}' for c in args.mutation_costs)} "
            f"--seed {args.seed}"
        )
        args.markdown.write_text(_with_tables(args.markdown, command, tables))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
