"""The restart after the last one seen: overdue, announced at a level off the curve, or not
reached before the observation ended."""

from __future__ import annotations

from datetime import timedelta

from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.model.durations import NS_PER_S, to_ns
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.verdict.failures import Failure, Rule
from crashloop_harness.verdict.lateness import (
    busy_host_reach_ns,
    machine_lateness,
    started_beside,
)
from crashloop_harness.verdict.nodecost import NodeCost
from crashloop_harness.verdict.observation import Observation, unmeasured_words
from crashloop_harness.verdict.restart import curve_positions
from crashloop_harness.verdict.slowness import ENVIRONMENT, NODE_TOO_SLOW, NODE_UNMEASURED
from crashloop_harness.verdict.tolerances import REPORTED_EPSILON_S, clock, dur, secs

OVERDUE = Rule(
    "overdue",
    "a restart never came within its back-off's bound: the kubelet stopped restarting the "
    "container (a stopped kubelet or runtime, or a back-off far longer than the curve)",
    names_restart=True,
)
PENDING_LEVEL = Rule(
    "pending-level",
    "the kubelet announced a back-off for the next restart that its curve does not have",
    names_restart=True,
)
INCOMPLETE = Rule(
    "incomplete",
    "the observation ended before the worker showed every restart its profile needs: "
    "nothing was judged wrong, but the curve was not seen far enough to pass",
)


def pending_problems(
    curve: BackoffCurve, last: AttemptRecord, curve_n: int, observation: Observation
) -> tuple[list[Failure], list[Failure]]:
    """What is wrong about the restart after the last one seen: missing, overdue, misreported.

    Problems, then errors (overdue only across a span the node was not observed).
    """
    n = last.attempt + 1
    positions, _ = curve_positions(curve, last, curve_n + 1, n)
    problems: list[Failure] = []
    reported = observation.pending_reported_s
    if reported is not None:
        levels = [curve.expected_reported_backoff(p) for p in positions]
        if not any(same_level(reported, level) for level in levels):
            expected = " or ".join("none" if lv is None else dur(lv) for lv in levels)
            problems.append(
                PENDING_LEVEL.failed(
                    f"restart {n} (pending): the kubelet reports a {reported:g}s back-off, "
                    f"the model expects {expected}",
                    restart=n,
                    numbers={"reported_s": reported},
                )
            )
    seen = (
        f"the last restart seen was {last.attempt}"
        if last.attempt
        else "only the first run was seen (no restart)"
    )
    overdue = _overdue(curve, last, positions, observation, seen)
    if overdue is not None:
        found, errors = overdue
        return [*problems, *found], errors
    if last.attempt < observation.required_restarts:
        return _incomplete(last, observation, seen, problems)
    return problems, []


def _incomplete(
    last: AttemptRecord, observation: Observation, seen: str, problems: list[Failure]
) -> tuple[list[Failure], list[Failure]]:
    """The observation ended before the restart the need asks for: the kubelet's failure to
    show it, or the machine's error when only restarts owed for those set aside are missing."""
    n = last.attempt + 1
    state = "still running" if last.finished_at_ns is None else "exited, waiting"
    if last.attempt >= observation.required_restarts - observation.set_aside:
        # Short only of the restarts owed for those set aside: the host (or the
        # node) stayed busy to the end of the longer observation, no answer.
        return problems, [
            ENVIRONMENT.failed(
                f"error: {observation.set_aside} restart(s) set aside, the first "
                f"{observation.first_set_aside}; the observation ended before restart "
                f"{n}, owed in their place "
                f"(needed up to {observation.required_restarts}); {seen}, attempt "
                f"{last.attempt} {state}",
                restart=n,
                error=True,
                numbers={
                    "required": observation.required_restarts,
                    "seen": last.attempt,
                    "set_aside": observation.set_aside,
                },
            )
        ]
    problems.append(
        INCOMPLETE.failed(
            f"incomplete: the observation ended before restart {n} "
            f"(the profile needs restarts up to {observation.required_restarts}); "
            f"{seen}, attempt {last.attempt} {state}",
            restart=n,
            numbers={"required": observation.required_restarts, "seen": last.attempt},
        )
    )
    return problems, []


def _overdue(
    curve: BackoffCurve,
    last: AttemptRecord,
    positions: tuple[int, ...],
    observation: Observation,
    seen: str,
) -> tuple[list[Failure], list[Failure]] | None:
    """The restart after ``last``, overdue on the node's clock: a failure, or an error while
    the node was not observed; None when it is not (yet) overdue."""
    n = last.attempt + 1
    if last.finished_at_ns is None or observation.now_ns is None:
        return None
    # The most lenient reading: a long run may or may not have reset the curve.
    upper_ns = max(
        to_ns(curve.upper_tolerance(curve.delay_before_restart(p), observation.allowance))
        for p in positions
    )
    due_ns = last.finished_at_ns + upper_ns
    created = observation.pending_created_ns
    # Created in time, not started yet: the runtime is slow to start it, which is
    # not the kubelet's lateness; its own check judges it once it has started.
    if observation.now_ns <= due_ns or (created is not None and created <= due_ns):
        return None
    nominal_ns = min(to_ns(curve.delay_before_restart(p)) for p in positions)
    reach_ns = busy_host_reach_ns(observation.allowance, first=nominal_ns == 0)
    gap = _machine_s_overdue(
        observation,
        last.finished_at_ns,
        observation.now_ns,
        due_ns=due_ns,
        nominal_ns=nominal_ns,
        reach_ns=reach_ns,
    )
    past = {"past_bound_s": (observation.now_ns - due_ns) / NS_PER_S}
    cost = observation.cost
    # Judged at the reference host's cost for want of a measure: a node at the slowest
    # pace judged could hold a sound kubelet's restart this long.
    unmeasured = cost is not None and not cost.measured and observation.now_ns - due_ns <= reach_ns
    if (gap is not None or unmeasured) and not observation.final:
        # Not decided while the check observes on: the restart, when it comes, is judged
        # (or set aside) as any late restart is.
        return None
    if gap is not None:
        unobserved = f"error: restart {n} overdue, but {gap}"
        return [], [ENVIRONMENT.failed(unobserved, restart=n, error=True, numbers=past)]
    overdue = (
        f"restart {n} overdue: attempt {last.attempt} exited at "
        f"{clock(last.finished_at_ns)}, so restart {n} was due by {clock(due_ns)}; none by "
        f"{clock(observation.now_ns)}, {secs(observation.now_ns - due_ns)} past its bound "
        f"({seen})"
    )
    node_s = _node_s_overdue(cost, curve, overdue, unmeasured=unmeasured, reach_ns=reach_ns)
    if node_s is not None:
        rule, words = node_s
        return [], [rule.failed(words, restart=n, error=True, numbers=past)]
    return [OVERDUE.failed(overdue, restart=n, numbers=past)], []


def _machine_s_overdue(
    observation: Observation,
    exited_ns: int,
    now_ns: int,
    *,
    due_ns: int,
    nominal_ns: int,
    reach_ns: int,
) -> str | None:
    """Why the machine, not the kubelet, may hold an overdue restart back by ``now_ns``;
    None when nothing says so (crashloop_harness.verdict.lateness)."""
    excess_ns = now_ns - due_ns
    return machine_lateness(
        observation.unobserved,
        observation.saturated,
        exited_ns,
        now_ns,
        busy_from_ns=exited_ns + nominal_ns,
        excess_ns=excess_ns,
        busy_reach_ns=reach_ns,
    ) or started_beside(
        observation.startups,
        exited_ns + nominal_ns,
        now_ns,
        excess_ns=excess_ns,
        reach_ns=reach_ns,
    )


def _node_s_overdue(
    cost: NodeCost | None, curve: BackoffCurve, overdue: str, *, unmeasured: bool, reach_ns: int
) -> tuple[Rule, str] | None:
    """Why an overdue restart is no verdict on its kubelet for its node's sake (the rule and
    its words), None when the node can be judged."""
    if cost is not None and cost.measured and cost.too_slow:
        # The node is too slow for its windows: its overdue restart is no verdict either.
        return NODE_TOO_SLOW, f"error: {overdue}. But {cost.too_slow_message(curve)}"
    if unmeasured and cost is not None:
        return NODE_UNMEASURED, (
            f"error: {overdue}. But {unmeasured_words(cost.node)}, and a node at the slowest "
            f"pace judged may take {secs(reach_ns)} longer"
        )
    return None


def same_level(reported: float, level: timedelta | None) -> bool:
    return level is not None and abs(reported - level.total_seconds()) <= REPORTED_EPSILON_S
