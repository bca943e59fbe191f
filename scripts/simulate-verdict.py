#!/usr/bin/env python3
"""Which wrong kubelets the verdict catches: simulated kubelets judged by the harness's own code.

    scripts/simulate-verdict.py [--runs 100] [--control-runs 500] [--seed 1]
        [--costs 0.5,1,1.5,2,3,4] [--mutation-costs 1,2]
        [--models project,pleg-unscaled,timers-unscaled] [--markdown docs/simulation.md]

Each case is a kubelet, sound (a control) or wrong in one small way (a
neighbour cap, a first restart that waits, a creation that comes late, a level
it never posts), run RUNS times with the timing measured here. Each restart
waits its back-off, plus the kubelet's requeue jitter drawn as its source draws
it (uniform, up to half the level, at most 30 s), plus the restart's own cost:
drawn from the same worker's measured overshoots at levels of 2 s or less, less
their jitter's mean, in run 20261204T162930Z-check-quick-8e9d
(tests/data/traces/v1.35.8-quick-check). Restart 1 waits no back-off: the exit
noticed (the PLEG's relist, uniform 0-1 s) and a restart's work. The runtime
starts each container its start latency after creating it, drawn from the
reference host's percentiles (bound reference_start_latency). Each worker
restarts for as long as the profile observes (until its slowest worker has what
it needs), as on a real cluster, each on a node of its own, beside the check's
PROBES_PER_NODE restart-cost probes (one restart with no back-off each) and its
pace probes: one every PACE_EVERY_S (5 s) of the worker's observation, each
drawn from the 99 burst probes of run 20261207T053419Z-check-quick-d9ac (bound
reference_pace) times the host's cost. The kubelet under test runs the probe
pods too, so a kubelet that waits before restart 1 or creates late does so on
them as well; no kubelet code is in the pace probe.

The wrong kubelets' own code, as simulated: a restart 1 that waits goes through
the back-off's path (the wait, then the requeue's jitter, the tick and the work
of any waited restart), posting its level or not; a late creation adds its
seconds to every restart's decision, restart 1's included; a late start adds
them between each container's creation and its start; a back-off counted from
the exit's sight adds the PLEG's wait before every waited back-off. Those run on
every worker (a kubelet's code is the same on every node), the neighbour caps
and the first waits of the earlier cases on the worker they name.

Judged twice, by :func:`crashloop_harness.verdict.judge_worker` with the curve the
profile expects and the restarts the quick and full profiles need: "paced"
(the node's cost with its pace probes, as a kind-mode check judges since the
probes: timers unscaled, the work times the pace, the starts' median held to
the runtime's pace) and "restart-measured" (the node's cost read from its
restarts that wait no back-off and capped by its runtime's start latency, no
pace: as checks judged before the probes). A case on more than one worker is a
check: failed when any worker failed, in error when none failed and one is in
error. The tables give the share (controls) or the count (wrong kubelets)
failed and in error, and the rules that fired (each counted once per run, the
three most frequent; a rule of a case on several workers is named with its
worker).

Hosts other than this one (``--costs`` for the controls, ``--mutation-costs`` for
the wrong kubelets) are ``c`` times as slow at a restart's work. Which parts of a
restart slow with the host is a model (``--models``, each its own tables):

- ``project``: every part no back-off timer decides scales by ``c``: restart 1,
  the restart's cost after its requeue, the start latency, the pace probe;
- ``pleg-unscaled``: restart 1's wait for the PLEG's relist (uniform 0-1 s,
  bound pleg_relist_period) is a timer and does not scale; the rest of restart
  1 (its measured 0.6-1.2 s less that wait's 0.5 s mean: uniform 0.1-0.7 s) and
  everything else does;
- ``timers-unscaled``: the PLEG's wait and the sync loop's tick (uniform 0-1 s,
  bound sync_tick) do not scale, on restart 1 and on restarts that waited; only
  the work does (and the start latency and pace probe, all work).

The timer/work split of a waited restart's measured cost: the tick is drawn
afresh, uniform 0-1 s, and the work is the measured cost less the whole ticks
it waited (its remainder modulo 1 s), never under WORK_FLOOR_S. The fast
worker's 54 costs sit in two modes a tick apart (48 at 0.08-0.31 s, 6 at
1.15-1.25 s: the same restart a tick later, as bound sync_tick records on other
days), so the work is 0.08-0.31 s, median 0.18 s, near a pace probe's whole
create-start-exit-remove (0.211 s). Taking 0.5 s (the tick's mean) off each cost
instead would leave no work in 48 costs and 0.65-0.75 s in the other 6: a tick
counted as work. The fresh tick is independent of the jitter, where the real
one absorbs it (restarts keep a tick's phase), so at 1x this model's overshoot
at the 2 s level is 1.19 s in mean against 0.80 s measured: wider than this
host, for the controls and the wrong kubelets alike. Restart 1 is synced on the
PLEG's event, not on a tick (kubelet.go syncLoopIteration: plegCh ->
HandlePodSyncs), and its 10 measured values (0.15-1.36 s, bound
reference_first_restart) leave no room for a second uniform second: its timer is
the PLEG's wait alone, so on restart 1 timers-unscaled is pleg-unscaled.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import random
import sys
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Final

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "harness"))

from crashloop_harness.model.backoff import (  # noqa: E402
    PLEG_RELIST_PERIOD,
    REQUEUE_CAP,
    REQUEUE_FRACTION,
    SYNC_TICK,
    BackoffCurve,
    curve_for,
)
from crashloop_harness.model.kubeletconfig import KubeletBackoffConfig  # noqa: E402
from crashloop_harness.model.releases import REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY  # noqa: E402
from crashloop_harness.recording.pace import PACE_EVERY_S  # noqa: E402
from crashloop_harness.recording.records import AttemptRecord  # noqa: E402
from crashloop_harness.runs.check import PROBES_PER_NODE  # noqa: E402
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES  # noqa: E402
from crashloop_harness.verdict import Observation, WorkerVerdict, judge_worker, restarts_needed  # noqa: E402
from crashloop_harness.verdict.nodecost import NodeCost, cost_of  # noqa: E402
from crashloop_harness.verdict.samples import reference_start_at  # noqa: E402

NS = 1_000_000_000
T0 = 1_796_000_000 * NS
RUN_S = 0.01  # the bare container exits at once
PROFILES: Final = ("quick", "full")
MODELS: Final = ("project", "pleg-unscaled", "timers-unscaled")
JUDGINGS: Final = ("paced", "restart-measured")
PLEG_RELIST_S: Final = PLEG_RELIST_PERIOD.total_seconds()
SYNC_TICK_S: Final = SYNC_TICK.total_seconds()
REQUEUE_CAP_S: Final = REQUEUE_CAP.total_seconds()
# The least work a restart does (timers-unscaled): no measured cost's remainder is under it.
WORK_FLOOR_S: Final = 0.02
# Every burst pace probe of run 20261207T053419Z-check-quick-d9ac (its trace's "pace"
# entries, seconds): a quick check on the reference host, its three nodes; median 2.83 ms
# (bound reference_pace).
REFERENCE_PACE_SAMPLES_S: Final = (
    0.00289, 0.00293, 0.00894, 0.00395, 0.0021, 0.00304, 0.00228, 0.00212, 0.00718, 0.00395,
    0.00454, 0.00246, 0.00877, 0.00282, 0.00346, 0.0046, 0.00237, 0.00229, 0.00226, 0.00268,
    0.00401, 0.00205, 0.00346, 0.00202, 0.00337, 0.00327, 0.00378, 0.00314, 0.00252, 0.00227,
    0.0032, 0.00258, 0.00237, 0.00211, 0.00245, 0.00206, 0.01024, 0.00337, 0.00283, 0.00207,
    0.00208, 0.00214, 0.00312, 0.0025, 0.00227, 0.0023, 0.00205, 0.00276, 0.00697, 0.00213,
    0.00231, 0.00309, 0.0026, 0.0021, 0.00345, 0.00208, 0.00206, 0.00389, 0.00288, 0.0022,
    0.0103, 0.00313, 0.00376, 0.00455, 0.00365, 0.00226, 0.00203, 0.00335, 0.00348, 0.00414,
    0.00327, 0.00424, 0.00284, 0.00368, 0.00207, 0.00273, 0.00406, 0.00501, 0.00449, 0.00256,
    0.00321, 0.00355, 0.00269, 0.00298, 0.00281, 0.00325, 0.00281, 0.00362, 0.00236, 0.00213,
    0.00282, 0.00402, 0.00234, 0.00289, 0.00253, 0.00219, 0.00277, 0.00328, 0.00245,
)  # fmt: skip


def _curve(max_s: float, *, reduced: bool = False) -> BackoffCurve:
    gates = ((REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY, True),) if reduced else ()
    return curve_for(
        KubeletBackoffConfig(
            feature_gates=gates, max_container_restart_period=timedelta(seconds=max_s)
        )
    )


FAST, REDUCED, DEFAULT = _curve(2), _curve(60, reduced=True), _curve(300)
# What each worker's check is told: the curve its node's kubelet config gives.
TOLD: Final = {"fast": FAST, "reduced": REDUCED, "default": DEFAULT}
WORKERS: Final = tuple(TOLD)

# The kubelet's own back-off before restart n of a worker's container.
Delay = Callable[[str, int], float]


def _sound(worker: str, n: int) -> float:
    return TOLD[worker].delay_before_restart(n).total_seconds()


def _as(curve: BackoffCurve) -> Delay:
    """A kubelet on ``curve`` whatever it is told."""
    return lambda _worker, n: curve.delay_before_restart(n).total_seconds()


def _first_waits(wait: Callable[[str], float]) -> Delay:
    """Restart 1 waits a back-off too (the fix of #133472 undone), every later one as told."""
    return lambda worker, n: wait(worker) if n == 1 else _sound(worker, n)


def _initial(worker: str) -> float:
    return TOLD[worker].initial.total_seconds()


@dataclass(frozen=True)
class Case:
    """A kubelet, sound or wrong in one way, on the workers (each its own node) it is run on."""

    name: str
    workers: tuple[str, ...]
    delay: Delay = _sound
    messages: bool = True  # the kubelet's back-off messages reach the watch
    # A restart 1 that waits posts its level as every later one does (the real
    # first-restart-backoff mutant did); False: a kubelet that waits without saying so.
    first_message: bool = True
    # Added to every container's creation (the kubelet's decision, late by this).
    create_late_s: float = 0.0
    # Added between each container's creation and its start.
    start_late_s: float = 0.0
    # The back-off counted from the PLEG's sight of the exit, not from the exit.
    from_sight: bool = False

    @property
    def control(self) -> bool:
        return self.name.startswith("control")


ONE = {w: (w,) for w in WORKERS}
CASES: Final = (
    Case("control: fast as told", ONE["fast"]),
    # A sound kubelet must pass on every worker: at a 60 s or 300 s cap the requeue's
    # jitter spans 30 s, which a bound measured on the fast worker alone once failed.
    Case("control: reduced as told", ONE["reduced"]),
    Case("control: default as told", ONE["default"]),
    Case("control: a check, every worker as told", WORKERS),
    Case("control: fast, messages hidden", ONE["fast"], messages=False),
    Case("fast at 3s", ONE["fast"], _as(_curve(3))),
    Case("fast at 3s, messages hidden", ONE["fast"], _as(_curve(3)), messages=False),
    Case("fast at 1s, messages hidden", ONE["fast"], _as(_curve(1)), messages=False),
    Case("fast: restart 1 waits, messages hidden", ONE["fast"], _first_waits(_initial), False),
    Case("reduced max 30s", ONE["reduced"], _as(_curve(30, reduced=True))),
    Case(
        "reduced max 30s, messages hidden",
        ONE["reduced"],
        _as(_curve(30, reduced=True)),
        messages=False,
    ),
    Case("reduced: restart 1 waits", ONE["reduced"], _first_waits(_initial)),
    Case(
        "reduced: restart 1 waits, saying nothing",
        ONE["reduced"],
        _first_waits(_initial),
        first_message=False,
    ),
    Case("fast: restart 1 waits", ONE["fast"], _first_waits(_initial)),
    Case(
        "fast: restart 1 waits, saying nothing",
        ONE["fast"],
        _first_waits(_initial),
        first_message=False,
    ),
    Case("default max 150s", ONE["default"], _as(_curve(150))),
    Case(
        "default max 600s (the 300s cap ignored)",
        ONE["default"],
        lambda _worker, n: min(10.0 * 2 ** max(n - 2, 0), 600.0) if n > 1 else 0.0,
    ),
    # Kubelets wrong in their own code, on every node alike.
    Case("every creation 0.5s late", WORKERS, create_late_s=0.5),
    Case("every creation 1s late", WORKERS, create_late_s=1.0),
    Case("every start 1s after its creation", WORKERS, start_late_s=1.0),
    Case(
        "every creation 1s late, its start 1s after", WORKERS, create_late_s=1.0, start_late_s=1.0
    ),
    Case(
        "restart 1 waits 1s, saying nothing",
        WORKERS,
        _first_waits(lambda _worker: 1.0),
        first_message=False,
    ),
    Case(
        "restart 1 waits 2s, saying nothing",
        WORKERS,
        _first_waits(lambda _worker: 2.0),
        first_message=False,
    ),
    Case(
        "restart 1 waits its initial back-off, saying nothing",
        WORKERS,
        _first_waits(_initial),
        first_message=False,
    ),
    Case("back-off counted from the exit's sight", WORKERS, from_sight=True),
)

LIVE = ROOT / "tests" / "data" / "traces" / "v1.35.8-quick-check" / "live.json"


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
    """worker -> the restart's own cost (the tick's wait, the sync, the creation) as measured:
    its overshoots at small levels less their jitter's mean (a quarter of the level); a worker
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


def work_of(cost_s: float) -> float:
    """The work in a measured cost: the cost less the whole ticks it waited (see the doc)."""
    return max(cost_s % SYNC_TICK_S, WORK_FLOOR_S)


# worker -> (measured cost, its work) of each draw.
SPLIT_COSTS: Final = {w: [(c, work_of(c)) for c in costs] for w, costs in COSTS.items()}


@dataclass(frozen=True)
class Host:
    """A host ``cost`` times as slow as the reference at a restart's work, under ``model``."""

    model: str = "project"
    cost: float = 1.0

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise ValueError(f"no timing model {self.model!r}; the models: {', '.join(MODELS)}")

    def pleg_wait(self, rng: random.Random) -> float:
        """How long an exit goes unseen: up to one PLEG relist (a timer but in ``project``)."""
        wait = rng.uniform(0.0, PLEG_RELIST_S)
        return self.cost * wait if self.model == "project" else wait

    def first_restart(self, rng: random.Random) -> float:
        """A restart that waits no back-off (restart 1): from the exit to the creation, the
        PLEG's wait then the work a waited restart does (the fast worker's measured work).
        Its law matches the 90 restart 1s of three quiet quick checks (bound
        reference_first_restart): median 0.69 s, 0.06-1.29 s, against 0.68 s and 0.08-1.31 s."""
        _, work = rng.choice(SPLIT_COSTS["fast"])
        return self.pleg_wait(rng) + self.cost * work

    def overshoot(self, worker: str, level: float, rng: random.Random) -> float:
        """How far past its back-off a waited restart is created: the requeue's jitter, drawn
        as the kubelet draws it (uniform up to half the level, at most 30 s: wait.Jitter; the
        bounds' requeue_fraction and requeue_cap), then the tick and the work."""
        jitter = rng.uniform(0.0, REQUEUE_FRACTION * min(level, REQUEUE_CAP_S))
        cost, work = rng.choice(SPLIT_COSTS[worker])
        if self.model == "timers-unscaled":
            return jitter + rng.uniform(0.0, SYNC_TICK_S) + self.cost * work
        return jitter + self.cost * cost

    def start_latency(self, rng: random.Random) -> float:
        """The runtime's creation-to-start: the reference host's, times ``cost``."""
        return self.cost * reference_start_at(rng.random())

    def pace(self, rng: random.Random) -> float:
        """One pace probe on the node: the reference host's, times ``cost``."""
        return self.cost * rng.choice(REFERENCE_PACE_SAMPLES_S)


def _attempt(
    worker: str,
    pod: str,
    attempt: int,
    created: int,
    started: int,
    *,
    reported: float | None = None,
    runs: bool = False,
) -> AttemptRecord:
    """One attempt on the worker's node; it exits at once unless it ``runs``."""
    return AttemptRecord(
        run_id="sim",
        worker=worker,
        node=f"node-{worker}",
        namespace="sim",
        pod=pod,
        pod_uid=f"{pod}-uid",
        container="main",
        attempt=attempt,
        container_id=f"{pod}-{attempt}",
        started_at_ns=started,
        created_at_ns=created,
        finished_at_ns=None if runs else started + round(RUN_S * NS),
        exit_code=None if runs else 1,
        reported_backoff_s=reported,
    )


def _restart_s(case: Case, worker: str, n: int, host: Host, rng: random.Random) -> float:
    """From attempt n-1's exit to restart n's creation, as the case's kubelet makes it."""
    level = case.delay(worker, n)
    if not level:
        late = host.first_restart(rng)
    else:
        late = host.overshoot(worker, level, rng)
        if case.from_sight:
            late += host.pleg_wait(rng)
    return level + late + case.create_late_s


def _records(
    case: Case,
    worker: str,
    restarts: int,
    rng: random.Random,
    *,
    horizon_s: float,
    host: Host,
) -> list[AttemptRecord]:
    """One worker's attempts: until it has its restarts and the profile stops observing."""
    records: list[AttemptRecord] = []
    started = T0
    attempt = -1
    while True:
        attempt += 1
        if attempt > restarts and (started - T0) / NS >= horizon_s:
            break
        start_s = host.start_latency(rng) + case.start_late_s
        if attempt:
            previous_exit = records[-1].finished_at_ns or 0
            restart_s = _restart_s(case, worker, attempt, host, rng)
            started = previous_exit + round((restart_s + start_s) * NS)
        level = case.delay(worker, attempt) if attempt else 0.0
        says = case.messages and (attempt >= 2 or case.first_message)
        created = started - round(start_s * NS)
        reported = level if level and says else None
        records.append(
            _attempt(worker, f"crash-{worker}", attempt, created, started, reported=reported)
        )
    return records


def _probe(
    case: Case, worker: str, rng: random.Random, host: Host, index: int
) -> list[AttemptRecord]:
    """A restart-cost probe on the worker's node: one run, one restart with no back-off
    (crashloop_harness.runs.check), made by the case's kubelet."""
    pod = f"probe-{worker}-{index}"
    first_start = host.start_latency(rng) + case.start_late_s
    first = _attempt(worker, pod, 0, T0, T0 + round(first_start * NS))
    restart_s = _restart_s(case, worker, 1, host, rng)
    start_s = host.start_latency(rng) + case.start_late_s
    created = (first.finished_at_ns or 0) + round(restart_s * NS)
    return [first, _attempt(worker, pod, 1, created, created + round(start_s * NS), runs=True)]


@functools.cache
def _horizon_s(profile: str) -> float:
    """How long the profile observes: until its slowest worker has its restarts (a worker
    decided early keeps restarting meanwhile, as on a real cluster)."""
    longest = 0.0
    for worker, curve in TOLD.items():
        need = CHECK_PROFILES[profile].need_for(worker, curve)
        required = restarts_needed(curve, need.min_restarts, need.until_delay)
        longest = max(longest, sum(d.total_seconds() for d in curve.delays(required)))
    return longest


def _required(profile: str, worker: str) -> int:
    curve = TOLD[worker]
    need = CHECK_PROFILES[profile].need_for(worker, curve)
    return restarts_needed(curve, need.min_restarts, need.until_delay)


def _pace_samples(
    records: list[AttemptRecord], rng: random.Random, host: Host
) -> tuple[float, ...]:
    """The node's pace probes: one at the start, then one every PACE_EVERY_S it is observed."""
    observed_s = (records[-1].started_at_ns - T0) / NS
    return tuple(host.pace(rng) for _ in range(1 + int(observed_s // PACE_EVERY_S)))


def judge_run(
    case: Case, profile: str, rng: random.Random, host: Host
) -> dict[str, dict[str, WorkerVerdict]]:
    """One run of the case: judging -> worker -> its verdict."""
    horizon_s = _horizon_s(profile)
    verdicts: dict[str, dict[str, WorkerVerdict]] = {judging: {} for judging in JUDGINGS}
    for worker in case.workers:
        required = _required(profile, worker)
        node = f"node-{worker}"
        records = _records(case, worker, required, rng, horizon_s=horizon_s, host=host)
        probes = [_probe(case, worker, rng, host, index) for index in range(PROBES_PER_NODE)]
        measured = cost_of(node, [records, *probes])
        costs: dict[str, NodeCost] = {
            "paced": dataclasses.replace(measured, pace_s=_pace_samples(records, rng, host)),
            "restart-measured": measured,
        }
        for judging, cost in costs.items():
            verdicts[judging][worker] = judge_worker(
                records,
                TOLD[worker],
                worker=worker,
                node=node,
                observation=Observation(required_restarts=required, cost=cost),
            )
    return verdicts


@dataclass
class Tally:
    """How the runs of one case ended under one judging, and which rules fired."""

    runs: int = 0
    failed: int = 0
    errors: int = 0
    rules: Counter[str] = field(default_factory=Counter)

    def add(self, verdicts: Mapping[str, WorkerVerdict]) -> None:
        """One run: failed when a worker failed, in error when none did and one is in error."""
        self.runs += 1
        judged = [v for v in verdicts.values() if not v.passed]
        if not judged:
            return
        if all(v.in_error for v in judged):
            self.errors += 1
        else:
            self.failed += 1
        # Every rule that fired, once per run: which ones a case relies on.
        named = len(verdicts) > 1
        self.rules.update(
            {
                f"{worker} {failure.code}" if named else failure.code
                for worker, verdict in verdicts.items()
                for failure in verdict.failures
            }
        )

    @property
    def caught(self) -> int:
        return self.failed + self.errors

    def by(self) -> str:
        return _by(self.rules)


def _by(rules: Counter[str]) -> str:
    return ", ".join(f"{rule} {n}" for rule, n in rules.most_common(3)) or "-"


def _judge(
    case: Case, profile: str, runs: int, rng: random.Random, host: Host | None = None
) -> dict[str, Tally]:
    """The case's runs on ``host``, judging -> how they ended."""
    tallies = {judging: Tally() for judging in JUDGINGS}
    for _ in range(runs):
        for judging, verdicts in judge_run(case, profile, rng, host or Host()).items():
            tallies[judging].add(verdicts)
    return tallies


def _cell(seed: int, case: Case, profile: str, runs: int, host: Host) -> dict[str, Tally]:
    """One cell of a table, on a generator of its own: a cell's numbers do not depend on
    which others were asked for."""
    rng = random.Random(f"{seed}:{host.model}:{host.cost:g}:{profile}:{case.name}")
    return _judge(case, profile, runs, rng, host)


def _share(count: int, runs: int) -> str:
    return f"{100 * count / runs:.1f} %"


@dataclass
class Findings:
    """The cells off the targets: (model, case) -> each cell's words."""

    cells: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    def add(self, model: str, case: str, words: str) -> None:
        self.cells.setdefault((model, case), []).append(words)

    def table(self) -> str:
        """The cells off the targets, one row per model and case."""
        if not self.cells:
            return "None.\n"
        lines = ["| model | case | cells off the target (paced) |", "|---|---|---|"]
        lines += [
            f"| {model} | {case} | {'; '.join(words)} |"
            for (model, case), words in self.cells.items()
        ]
        return "\n".join(lines) + "\n"


# The targets the tables are read against.
SOUND_FAILED_MAX: Final = 0.002  # from 0.5x to 3x
SOUND_ERROR_MAX: Final = 0.05  # up to 2x
CAUGHT_FAILED_MIN: Final = 0.95  # every wrong kubelet, at each mutation cost


def _control_table(model: str, runs: int, costs: list[float], seed: int, findings: Findings) -> str:
    lines = [
        f"Sound kubelets, {runs} runs per profile and cost: the share that ended failed and "
        "in error, judged paced (each node's pace probes, as a check judges now) and "
        "restart-measured (each node's restarts that wait no back-off, as it judged before "
        "the probes).\n",
        "| control | cost | quick: failed | error | restart-measured: failed | error | "
        "full: failed | error | restart-measured: failed | error | by (paced) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for case in (c for c in CASES if c.control):
        name = case.name.removeprefix("control: ")
        for cost in costs:
            host = Host(model, cost)
            cells: list[str] = []
            rules: Counter[str] = Counter()
            for profile in PROFILES:
                tallies = _cell(seed, case, profile, runs, host)
                for judging in JUDGINGS:
                    tally = tallies[judging]
                    cells += [_share(tally.failed, runs), _share(tally.errors, runs)]
                rules += tallies["paced"].rules
                where = (model, name, f"x{cost:g} {profile}")
                _control_findings(findings, where, case, cost, tallies["paced"])
            lines.append(f"| {name} | x{cost:g} | {' | '.join(cells)} | {_by(rules)} |")
    return "\n".join(lines) + "\n"


def _control_findings(
    findings: Findings, where: tuple[str, str, str], case: Case, cost: float, tally: Tally
) -> None:
    """A sound kubelet's cell off its targets (a watch that misses the levels fails it by
    design, or is the node's error: not held to them)."""
    model, name, cell = where
    if not case.messages:
        return
    if 0.5 <= cost <= 3 and tally.failed > SOUND_FAILED_MAX * tally.runs:
        findings.add(model, name, f"{cell} failed {_share(tally.failed, tally.runs)}")
    if cost <= 2 and tally.errors > SOUND_ERROR_MAX * tally.runs:
        findings.add(model, name, f"{cell} in error {_share(tally.errors, tally.runs)}")


def _mutation_table(
    model: str, runs: int, costs: list[float], seed: int, findings: Findings
) -> str:
    header = " | ".join(f"x{c:g} quick | x{c:g} full" for c in costs)
    by = " | ".join(f"by (paced, x{c:g})" for c in costs)
    lines = [
        f"Wrong kubelets, {runs} runs per profile and cost: judged paced, failed / in error; "
        "restart-measured, failed (quick, full); the rules over quick and full.\n",
        f"| case | workers | {header} | restart-measured | {by} |",
        "|---|---|" + "---|---|" * len(costs) + "---|" + "---|" * len(costs),
    ]
    for case in (c for c in CASES if not c.control):
        cells: list[str] = []
        before: list[str] = []
        rules: list[str] = []
        for cost in costs:
            host = Host(model, cost)
            rules_here: Counter[str] = Counter()
            before_here: list[str] = []
            for profile in PROFILES:
                tallies = _cell(seed, case, profile, runs, host)
                paced = tallies["paced"]
                cells.append(f"{paced.failed} / {paced.errors}")
                before_here.append(str(tallies["restart-measured"].failed))
                rules_here += paced.rules
                if paced.failed < CAUGHT_FAILED_MIN * paced.runs:
                    findings.add(
                        model,
                        case.name,
                        f"x{cost:g} {profile} {paced.failed} / {paced.errors}",
                    )
            before.append(f"x{cost:g} {', '.join(before_here)}")
            rules.append(_by(rules_here))
        workers = "all" if len(case.workers) > 1 else case.workers[0]
        lines.append(
            f"| {case.name} | {workers} | {' | '.join(cells)} | {'; '.join(before)} | "
            f"{' | '.join(rules)} |"
        )
    return "\n".join(lines) + "\n"


def _with_tables(page: Path, command: str, tables: str) -> str:
    """The page with its command line and tables written again, the prose after them kept."""
    head = (
        "# The verdict on simulated kubelets\n\n"
        f"`{command}`: each case run with the v1.35 kubelet's timing and judged by the "
        "harness's own `judge_worker` on the quick and full profiles' needs, under each "
        'timing model (see the script\'s doc). "by" counts every rule that fired, once per '
        "run (the three most frequent; on a case run on every worker, the rule's worker "
        "first). [What it says](#what-it-says) is at the end.\n\n"
    )
    old = page.read_text() if page.exists() else ""
    marker = "## What it says"
    return head + tables + ("\n" + old[old.index(marker) :] if marker in old else "")


def _floats(text: str) -> list[float]:
    return [float(part) for part in text.split(",") if part.strip()]


def _models(text: str) -> list[str]:
    chosen = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [m for m in chosen if m not in MODELS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"models are {', '.join(MODELS)}; got {text!r}")
    return chosen


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=100, help="runs per wrong kubelet")
    parser.add_argument("--control-runs", type=int, default=500, help="runs per sound kubelet")
    parser.add_argument("--costs", type=_floats, default=[0.5, 1.0, 1.5, 2.0, 3.0, 4.0])
    parser.add_argument("--mutation-costs", type=_floats, default=[1.0, 2.0])
    parser.add_argument("--models", type=_models, default=list(MODELS))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--markdown", type=Path, help="write the tables there as well")
    args = parser.parse_args()
    findings = Findings()
    parts: list[str] = []
    for model in args.models:
        parts.append(
            f"## Model {model}\n\n"
            + _control_table(model, args.control_runs, args.costs, args.seed, findings)
            + "\n"
            + _mutation_table(model, args.runs, args.mutation_costs, args.seed, findings)
        )
        print(parts[-1], flush=True)
    tables = (
        "\n".join(parts)
        + "\n## Cells off the targets\n\n"
        + "Judged paced: sound kubelets (their messages seen) failed in more than "
        f"{SOUND_FAILED_MAX:.1%} of checks at 0.5x-3x or in error in more than "
        f"{SOUND_ERROR_MAX:.0%} up to 2x; wrong kubelets failed (failed / in error) in "
        f"fewer than {CAUGHT_FAILED_MIN:.0%} of their runs at a cost they were run at.\n\n"
        + findings.table()
    )
    print(tables[tables.index("## Cells off") :], end="")
    if args.markdown:
        command = (
            f"scripts/simulate-verdict.py --runs {args.runs} --control-runs {args.control_runs} "
            f"--costs {','.join(f'{c:g}' for c in args.costs)} "
            f"--mutation-costs {','.join(f'{c:g}' for c in args.mutation_costs)} "
            f"--models {','.join(args.models)} --seed {args.seed}"
        )
        args.markdown.write_text(_with_tables(args.markdown, command, tables))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
