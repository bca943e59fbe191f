"""A fleet's checks, run on the clusters themselves: a bounded pool of groups per cluster.

The engine is the clusters: each group's check binds its pods to its chosen
nodes and watches them through the API (:func:`crashloop_harness.runs.check.run_check`
on a :class:`~crashloop_harness.cluster.remote.RemoteCluster`). Here only a
bounded worker pool: at most ``at_once[cluster]`` groups of one cluster are
checked at a time, every cluster at once. A group whose check doubts a node
(:func:`crashloop_harness.fleet.judge.suspects`) is checked again on up to as
many of its other nodes before it is judged.

Ctrl-C (or SIGTERM) in the main thread sets ``stop``: every running check ends
interrupted and deletes its pods, and no group not yet started starts.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Final

from crashloop_harness.fleet.judge import GroupJudgement, Round, judge_group, suspects
from crashloop_harness.fleet.plan import FleetPlan, Group
from crashloop_harness.model.bounds import BOUNDS
from crashloop_harness.recording.leasereader import LEASE_POLL_S
from crashloop_harness.recording.nodepods import READ_EVERY_S as STARTUPS_EVERY_S
from crashloop_harness.recording.pace import PACE_EVERY_S
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES

# A group's check: (cluster's context, its nodes, the stop) -> the round it came to.
CheckNodes = Callable[[str, tuple[str, ...], threading.Event], Round]

# The API load a group's check adds is not the harness's (a watch and a few reads) but its
# kubelets' status writes: about three per restart (the exit, the back-off's waiting
# reason, the start), 2.83 to 3.22 pod updates per restart in the four checks of the kept
# fleet v1.35.8-fleet-mutant-outlier (tests/data/fleet), the pods' creation included.
STATUS_WRITES_PER_RESTART: Final = 3
# A restart at the cap comes this long after the cap (kubelet.go's one-second requeue and
# the sync): what makes a 2 s curve restart 17 times a minute, not 30.
_RESTART_OVERHEAD_S: Final = BOUNDS["restart_overhead"].as_seconds()
# Every container that restarts on each checked node of an existing cluster, by how long
# each attempt runs: the bare crashing one, and each variant that runs beside every node
# (the same in both profiles: an existing cluster has no worker profiles for the others).
RESTARTING_RUNS_S: Final = (
    0.0,
    *(v.runs_for_s for v in CHECK_PROFILES["quick"].variants if v.profile is None),
)
# Pods each checked node gets at the start: its restarting subjects and its pace pod. Each
# creation is a create, a binding and a few status writes within seconds of the start.
PODS_PER_NODE: Final = len(RESTARTING_RUNS_S) + 1


def node_writes_per_s(cap_s: float) -> float:
    """A checked node's status writes a second on a curve capped at ``cap_s``: every
    restarting container's, each restarting every cap + its run + the overhead."""
    return sum(
        STATUS_WRITES_PER_RESTART / (cap_s + runs_s + _RESTART_OVERHEAD_S)
        for runs_s in RESTARTING_RUNS_S
    )


def status_writes_per_s(group: Group, nodes: int) -> float:
    """The status writes a second a check of ``nodes`` of ``group`` causes at its cap, where
    it restarts fastest for longest (the first few restarts of a long curve come faster,
    for a few seconds)."""
    return nodes * node_writes_per_s(group.curve.maximum.total_seconds())


def reads_per_s(nodes: int) -> float:
    """The reads a second a group's check makes besides its one watch: each node's pace pod
    log every PACE_EVERY_S and its kubelet's pod list every nodepods.READ_EVERY_S, the
    nodes' Leases every LEASE_POLL_S (one list)."""
    return nodes / PACE_EVERY_S + nodes / STARTUPS_EVERY_S + 1 / LEASE_POLL_S


# The reference group of the budget docs/existing-clusters.md sets: 3 nodes on a 2 s curve.
_REFERENCE_NODES: Final = 3
_REFERENCE_CAP_S: Final = 2.0
# What a cluster's API server is asked to take from a fleet's checks at once, in status
# writes a second: 5 reference groups, each node's bare container restarting every 2 s +
# the overhead (17 times a minute) and its runs-5s one every 8.5 s: 18.2 writes a second,
# well under what an API server serves.
STATUS_WRITE_BUDGET_PER_S: Final = 5 * _REFERENCE_NODES * node_writes_per_s(_REFERENCE_CAP_S)


def groups_at_once(
    plan: FleetPlan, budget_per_s: float = STATUS_WRITE_BUDGET_PER_S
) -> dict[str, int]:
    """cluster -> how many of its groups may be checked at once: the budget over its
    heaviest group's load (at least one, at most all of them)."""
    bound: dict[str, int] = {}
    for cluster in plan.clusters:
        groups = [g for g in plan.groups if g.cluster == cluster]
        heaviest = max(status_writes_per_s(g, plan.per_group) for g in groups)
        bound[cluster] = max(1, min(len(groups), math.floor(budget_per_s / heaviest)))
    return bound


@dataclass(frozen=True)
class GroupRun:
    """A group's rounds, its verdict, and how long its checks took."""

    group: Group
    rounds: tuple[Round, ...]
    judgement: GroupJudgement
    elapsed_s: float


def check_group(group: Group, check: CheckNodes, stop: threading.Event, per_group: int) -> GroupRun:
    """The group's chosen nodes checked; its suspects' doubt settled on up to ``per_group``
    of its other nodes."""
    started = time.monotonic()
    rounds = [check(group.cluster, group.chosen, stop)]
    others = group.reserves[:per_group]
    if suspects(rounds[0]) and others and not stop.is_set():
        rounds.append(check(group.cluster, others, stop))
    label = f"{group.cluster}/{group.name}"
    return GroupRun(group, tuple(rounds), judge_group(label, rounds), time.monotonic() - started)


def not_started(group: Group, why: str) -> GroupRun:
    return GroupRun(
        group, (), GroupJudgement("error", f"group {group.cluster}/{group.name}: {why}"), 0.0
    )


def run_fleet(
    plan: FleetPlan,
    check: CheckNodes,
    stop: threading.Event,
    *,
    at_once: Mapping[str, int],
    on_group: Callable[[GroupRun], None] = lambda run: None,
) -> list[GroupRun]:
    """Every group checked, at most ``at_once[cluster]`` of a cluster at a time; in the plan's
    order. A KeyboardInterrupt sets ``stop`` and waits for every check's clean-up: the groups
    come back interrupted (``stop`` stays set for the caller to see)."""
    gates = {cluster: threading.BoundedSemaphore(n) for cluster, n in at_once.items()}

    def job(group: Group) -> GroupRun:
        with gates[group.cluster]:
            if stop.is_set():
                return not_started(group, "not started: the fleet was stopped")
            run = check_group(group, check, stop, plan.per_group)
        on_group(run)
        return run

    workers = max(1, min(len(plan.groups), sum(at_once.values())))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="fleet") as pool:
        futures = [pool.submit(job, group) for group in plan.groups]
        _wait_all(futures, stop)
    return [future.result() for future in futures]


def _wait_all(futures: Sequence[Future[GroupRun]], stop: threading.Event) -> None:
    """Wait for every check; on Ctrl-C stop them all and wait for their clean-up.

    A check that raised (a bug: a check turns every cluster fault into its round's error)
    stops the others too, and its exception goes on once they have cleaned up.
    """
    try:
        done, _ = wait(futures, return_when="FIRST_EXCEPTION")
        if any(f.exception() is not None for f in done):
            stop.set()
            wait(futures)
    except KeyboardInterrupt:
        stop.set()
        _wait_through_interrupts(futures)


def _wait_through_interrupts(futures: Sequence[Future[GroupRun]]) -> None:
    """A second Ctrl-C must not leave pods behind: the checks are cleaning up."""
    while True:
        try:
            wait(futures)
            return
        except KeyboardInterrupt:
            continue
