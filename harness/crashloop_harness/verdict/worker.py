"""The verdict on one worker's container: every restart, completeness, overdue, evidence."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.model.durations import format_duration
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.verdict.apicheck import api_cross_check
from crashloop_harness.verdict.evidence import evidence_problems
from crashloop_harness.verdict.failures import OTHER, Failure, Rule
from crashloop_harness.verdict.firstrestart import first_restarts_judged
from crashloop_harness.verdict.nodecost import NodeCost
from crashloop_harness.verdict.observation import AS_RECORDED, Observation
from crashloop_harness.verdict.pending import pending_problems
from crashloop_harness.verdict.restart import RestartCheck, check_restart, curve_positions
from crashloop_harness.verdict.slowness import NODE_TOO_SLOW

POD_NOT_RUN = Rule(
    "pod-not-run",
    "the pod never ran its container for a reason its status names (the scheduler or the "
    "node refused it, its image could not be pulled): not the kubelet's back-off, an error",
)
NO_ATTEMPT = Rule(
    "no-attempt",
    "no restart was recorded: the pod never ran or the recorder saw nothing (see the pod's "
    "events in the evidence)",
)


@dataclass(frozen=True, kw_only=True)
class WorkerVerdict:
    """Every restart check of one worker's container, and what they add up to.

    ``problems`` are failures that belong to no single restart (nothing
    recorded, an incomplete observation, an overdue restart, a pending
    restart's reported level, the pod status contradicting the runtime);
    ``notes`` explain without failing (curve resets, sub-second rounding).
    ``last_restart`` is the highest restart seen (0: only the first run).
    """

    worker: str
    node: str
    checks: tuple[RestartCheck, ...]
    reported_seen: int
    reported_expected: int
    problems: tuple[Failure, ...] = ()
    notes: tuple[str, ...] = ()
    last_restart: int = 0
    # Like problems, but the node's fault, not the kubelet's (an overdue
    # restart while the node was not observed): the verdict is an error.
    errors: tuple[Failure, ...] = ()
    # What a restart cost the node in the run, the bounds were made from (None:
    # the reference host's cost was assumed).
    cost: NodeCost | None = None

    @property
    def passed(self) -> bool:
        return not self.problems and not self.errors and all(c.passed for c in self.checks)

    @property
    def in_error(self) -> bool:
        """Not passed, yet nothing the kubelet can be blamed for: every failure is an error."""
        return (
            not self.passed and not self.problems and all(c.passed or c.error for c in self.checks)
        )

    @property
    def failures(self) -> list[Failure]:
        """Every failure, its words naming the worker (and the restart, where one)."""
        found = [p.of(self.worker) for p in (*self.problems, *self.errors)]
        found += [check_failure(self.worker, c) for c in self.checks if not c.passed]
        return found

    @property
    def set_aside(self) -> tuple[RestartCheck, ...]:
        """The restarts not judged: late while the node was not observed or the host saturated."""
        return tuple(c for c in self.checks if c.set_aside is not None)

    @property
    def messages(self) -> list[str]:
        """The words of every failure, naming the worker: what a person reads."""
        return [failure.words for failure in self.failures]


def judge_worker(
    attempts: Sequence[AttemptRecord],
    curve: BackoffCurve,
    *,
    worker: str | None = None,
    node: str | None = None,
    observation: Observation = AS_RECORDED,
    confirm_levels: bool = True,
    together: bool = True,
) -> WorkerVerdict:
    """Check every restart of one container against ``curve``.

    ``worker`` and ``node`` default to the records' own. With
    ``confirm_levels`` a restart whose back-off is :data:`CONFIRM_FROM` or more
    fails when its reported level was not seen. With ``together``, the rules on
    the restarts taken together apply too (:mod:`crashloop_harness.verdict.evidence`: the
    share of levels seen, the cap's median); without, only what no later restart
    can undo is judged, as an early decision must be. Raises ValueError when the
    records mix containers or pods, or repeat an attempt: that is a caller's
    mistake (read them through :func:`crashloop_harness.recording.records.read_attempts`), not
    something the kubelet did.
    """
    by_attempt = _index(attempts)
    first = next(iter(by_attempt.values()), None)
    worker = worker if worker is not None else (first.worker if first else "")
    node = node if node is not None else (first.node if first else "")
    if first is None:
        return _not_attempted(worker, node, observation)

    checks: list[RestartCheck] = []
    problems, notes = api_cross_check(by_attempt.values())
    curve_n = 0
    slowness = observation.slowness(curve)
    for n in range(1, max(by_attempt) + 1):
        previous, current = by_attempt.get(n - 1), by_attempt.get(n)
        positions, note = curve_positions(curve, previous, curve_n + 1, n)
        if note:
            notes.append(note)
        check = check_restart(
            curve,
            n,
            positions,
            previous,
            current,
            confirm_levels=confirm_levels,
            unobserved=observation.unobserved,
            saturated=observation.saturated,
            startups=observation.startups,
            allowance=observation.allowance,
            node_slow=slowness,
            levels_until_ns=observation.levels_until_ns,
        )
        curve_n = check.curve_n
        checks.append(check)

    last = max(by_attempt)
    set_aside = [f"restart {c.n}: {c.set_aside}" for c in checks if c.set_aside is not None]
    owed = owed_restarts(checks, observation.cost)
    if owed and observation.required_restarts:
        # Each restart not judged is owed: the profile's need grows by one for it.
        observation = dataclasses.replace(
            observation,
            required_restarts=observation.required_restarts + owed,
            set_aside=owed,
            first_set_aside=set_aside[0],
        )
    pending_found, errors = pending_problems(curve, by_attempt[last], curve_n, observation)
    problems += pending_found
    if slowness.too_slow is not None:
        errors.append(NODE_TOO_SLOW.failed(f"error: {slowness.too_slow}", error=True))
    if together:
        found, found_errors = evidence_problems(
            curve,
            checks,
            by_attempt,
            confirm_levels=confirm_levels,
            saturated=observation.saturated,
            cost=observation.cost,
            node_slow=slowness,
        )
        problems += found
        errors += found_errors
    expected_reports = [c for c in checks if curve.expected_reported_backoff(c.curve_n) is not None]
    return WorkerVerdict(
        worker=worker,
        node=node,
        checks=tuple(checks),
        reported_seen=sum(c.reported_s is not None for c in expected_reports),
        reported_expected=len(expected_reports),
        problems=tuple(problems),
        notes=tuple(notes),
        last_restart=last,
        errors=tuple(errors),
        cost=observation.cost,
    )


def owed_restarts(checks: Sequence[RestartCheck], cost: NodeCost | None) -> int:
    """How many more restarts a worker owes for those set aside: one each, but none for a
    restart 1 whose node's restarts with no back-off were judged together (``first-late``,
    crashloop_harness.verdict.firstrestart): they show what it would have. Owed instead, a
    default worker's restart 1 costs a 160 s level."""
    judged_together = first_restarts_judged(cost)
    return sum(1 for c in checks if c.set_aside is not None and not (c.n == 1 and judged_together))


def _not_attempted(worker: str, node: str, observation: Observation) -> WorkerVerdict:
    """No attempt recorded: the kubelet's failure, or an error where the pod's status says
    why its container could not run (a refusal, an image pull)."""
    never_ran = "the pod never ran its container"
    errors: tuple[Failure, ...] = ()
    problems: tuple[Failure, ...] = ()
    if observation.not_running is not None:
        # Stopped before any restart could happen: nothing of the back-off to judge.
        errors = (POD_NOT_RUN.failed(f"error: {never_ran}: {observation.not_running}", error=True),)
    else:
        problems = (NO_ATTEMPT.failed(f"no container attempt was recorded: {never_ran}"),)
    return WorkerVerdict(
        worker=worker,
        node=node,
        checks=(),
        reported_seen=0,
        reported_expected=0,
        problems=problems,
        errors=errors,
    )


def restarts_needed(
    curve: BackoffCurve,
    min_restarts: int | None = None,
    until_delay: timedelta | None = None,
) -> int:
    """The highest restart a worker must show before it can be judged.

    At least ``min_restarts`` restarts and, with ``until_delay``, the first
    restart whose nominal wait reaches that delay. With neither, the default
    is to see the curve reach its cap once. Resets are not modelled here: a
    container that keeps resetting never gets there and fails as incomplete.
    """
    if min_restarts is None and until_delay is None:
        until_delay = curve.maximum
    needed = min_restarts or 0
    if until_delay is not None:
        if until_delay > curve.maximum:
            raise ValueError(
                f"the curve never waits {format_duration(until_delay)}: its maximum is "
                f"{format_duration(curve.maximum)}"
            )
        n = 1
        while curve.delay_before_restart(n) < until_delay:
            n += 1
        needed = max(needed, n)
    return needed


def observed_enough(
    attempts: Sequence[AttemptRecord],
    curve: BackoffCurve,
    min_restarts: int | None = None,
    until_delay: timedelta | None = None,
    set_aside: int = 0,
) -> bool:
    """Whether a worker has been watched long enough to judge it: restart :func:`restarts_needed`.

    The level of the restart after it is judged when it was seen, not waited
    for: the v1.35 kubelet requeues a pod in back-off at the expiry and often
    posts the pending level only in the sync that restarts the container, so
    waiting for it could add a whole back-off to every check.
    """
    # One more restart owed for each set aside (see judge_worker).
    needed = restarts_needed(curve, min_restarts, until_delay) + set_aside
    # Attempt n exists only once restart n has happened.
    return max((a.attempt for a in attempts), default=-1) >= needed


def _index(attempts: Sequence[AttemptRecord]) -> dict[int, AttemptRecord]:
    by_attempt: dict[int, AttemptRecord] = {}
    for record in attempts:
        first = next(iter(by_attempt.values()), record)
        if (record.pod_uid, record.container) != (first.pod_uid, first.container):
            raise ValueError(
                "judge one container at a time: got "
                f"{first.pod}/{first.container} (uid {first.pod_uid}) and "
                f"{record.pod}/{record.container} (uid {record.pod_uid})"
            )
        if record.attempt in by_attempt:
            raise ValueError(
                f"attempt {record.attempt} of {record.pod}/{record.container} appears twice; "
                "read records with crashloop_harness.recording.records.read_attempts, which keeps "
                "the latest"
            )
        by_attempt[record.attempt] = record
    return dict(sorted(by_attempt.items()))


def failure_message(worker: str, check: RestartCheck) -> str:
    measured = "not measured" if check.measured_s is None else f"measured {check.measured_s:.3f}s"
    return (
        f"{worker}: restart {check.n}: expected {check.expected_s:g}s "
        f"(accepting up to {check.upper_bound_s:g}s), {measured}: {check.reason}"
    )


def check_failure(worker: str, check: RestartCheck) -> Failure:
    """A failed restart check as one failure: its headline rule, its numbers, all its words."""
    numbers = {"expected_s": check.expected_s, "upper_bound_s": check.upper_bound_s}
    if check.measured_s is not None:
        numbers["measured_s"] = check.measured_s
    return Failure(
        check.code or OTHER, failure_message(worker, check), check.n, check.error, numbers
    )
