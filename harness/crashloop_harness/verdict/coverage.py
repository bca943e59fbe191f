"""What each worker's verdict covered of the kubelet's rules, and what it did not (pure).

A pass says only what it checked. Per bare worker (its variants are folded
into it), each rule of the back-off is covered or not, with why:

- ``restart-1``: restart 1 came without a back-off (within its 5 s bound:
  a back-off of 5 s or more before it fails; a shorter one is not told apart);
- ``levels``: every level of the curve up to its cap was reached;
- ``cap``: the cap was reached and held;
- ``levels-confirmed``: the kubelet's own level was seen on most restarts;
- ``cap-median``: enough restarts at the cap for their median to be judged;
- ``count-from-exit``: the runs-5s variant waited its back-offs after the exit;
- ``reset``: a run past the reset threshold started a fresh curve, and its
  control did not;
- ``next-level``: the level the kubelet posted for the restart after the
  last one seen (a run may end before it is posted);
- ``created-at``: every delay ran to the container's creation; where only
  its start is known (the workload's own report, the API), each delay holds
  the runtime's start too and "too early" is weaker by that much.

The summary (JSON, table, JUnit, report) carries the list; the CLI prints
what a pass did not cover beside PASSED.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any, Final

from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.model.durations import format_duration
from crashloop_harness.model.releases import AT_EXPIRY
from crashloop_harness.model.subject import RESET_VARIANTS, RUNS_5S, Subject
from crashloop_harness.verdict import (
    CAP_MEDIAN_FROM,
    LEVEL_SHARE_FROM,
    LEVEL_SHARE_MIN,
    RestartCheck,
    WorkerVerdict,
)

RULES: Final = (
    "restart-1",
    "levels",
    "cap",
    "levels-confirmed",
    "cap-median",
    "count-from-exit",
    "reset",
    "next-level",
    "created-at",
)
# Named only where it was not covered, from the node's measure, not the verdict's rules
# (crashloop_harness.runs.check.coverage).
WINDOWS_RULE: Final = "windows"
# The variants that probe a rule beside a worker (crashloop_harness.runs.checkprofiles).
COUNT_FROM_EXIT_VARIANT: Final = RUNS_5S


@dataclass(frozen=True)
class RuleCoverage:
    """One rule of one worker: whether its verdict covered it, and what it saw."""

    rule: str
    covered: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def curve_levels(curve: BackoffCurve) -> list[timedelta]:
    """The distinct back-offs of the curve, from restart 2 up to its cap."""
    levels: list[timedelta] = []
    n = 2
    while not levels or levels[-1] < curve.maximum:
        levels.append(curve.delay_before_restart(n))
        n += 1
    return levels


def coverage_of(
    worker: str,
    verdicts: Mapping[str, WorkerVerdict],
    curve: BackoffCurve,
    *,
    variants_ran: bool = True,
    pending: tuple[int, float] | None = None,
) -> tuple[RuleCoverage, ...]:
    """What ``worker``'s verdict and its variants' covered of the curve's rules.

    ``verdicts`` holds every subject of the run (``worker`` and
    ``worker/<variant>``); ``variants_ran`` is False where the run could not
    place variants at all (then says so rather than "not run"); ``pending``
    is the restart after the last one seen and the level the kubelet posted
    for it, when it was seen.
    """
    verdict = verdicts[worker]
    # A restart set aside (late while the host was saturated) covers nothing.
    measured = [c for c in verdict.checks if c.measured_s is not None and c.set_aside is None]
    waited = [c for c in measured if c.curve_n >= 2]
    first = next((c for c in measured if c.curve_n == 1 and c.n == 1), None)
    first_aside = next((c for c in verdict.set_aside if c.n == 1), None)
    levels = curve_levels(curve)
    reached = {timedelta(seconds=c.expected_s) for c in waited}
    missing = [level for level in levels if level not in reached]
    at_cap = [c for c in waited if timedelta(seconds=c.expected_s) == curve.maximum]
    expected_levels = [c for c in waited if curve.expected_reported_backoff(c.curve_n) is not None]
    seen = sum(c.reported_s is not None for c in expected_levels)
    cap = format_duration(curve.maximum)
    found = [
        RuleCoverage(
            "restart-1",
            first is not None,
            f"restart 1 after {first.measured_s:.3f}s, within {first.upper_bound_s:g}s"
            if first is not None and first.measured_s is not None
            else f"restart 1 {first_aside.set_aside}"
            if first_aside is not None
            else "restart 1 was not measured",
        ),
        RuleCoverage(
            "levels",
            not missing,
            f"reached {_shown(sorted(reached))}"
            + (f"; not reached: {_shown(missing)}" if missing else ""),
        ),
        RuleCoverage(
            "cap",
            bool(at_cap),
            f"the {cap} cap reached {len(at_cap)} time(s)" if at_cap else f"the {cap} cap never",
        ),
        RuleCoverage(
            "levels-confirmed",
            len(expected_levels) >= LEVEL_SHARE_FROM
            and seen >= LEVEL_SHARE_MIN * len(expected_levels),
            f"the kubelet's level seen before {seen} of {len(expected_levels)} restarts"
            + (
                f" (judged from {LEVEL_SHARE_FROM})"
                if len(expected_levels) < LEVEL_SHARE_FROM
                else ""
            ),
        ),
        _cap_median(curve, len(at_cap), cap),
        _variant_rule(
            "count-from-exit",
            verdicts,
            [str(Subject(worker, COUNT_FROM_EXIT_VARIANT))],
            variants_ran=variants_ran,
        ),
        _variant_rule(
            "reset",
            verdicts,
            [str(Subject(worker, name)) for name in RESET_VARIANTS],
            variants_ran=variants_ran,
        ),
        RuleCoverage(
            "next-level",
            pending is not None,
            f"the kubelet posted {pending[1]:g}s for restart {pending[0]}"
            if pending is not None
            else f"the run ended before the kubelet posted the level of restart "
            f"{verdict.last_restart + 1}",
        ),
        _created_at(measured),
    ]
    return tuple(found)


def _created_at(measured: Sequence[RestartCheck]) -> RuleCoverage:
    without = [c.n for c in measured if c.n > 1 and c.start_latency_s is None]
    if not without:
        return RuleCoverage("created-at", True, "every delay ran to the container's creation")
    return RuleCoverage(
        "created-at",
        False,
        f"{len(without)} delay(s) ran to the container's start, no creation time recorded: "
        "each holds the runtime's start too, so 'too early' is weaker by that much",
    )


def _cap_median(curve: BackoffCurve, at_cap: int, cap: str) -> RuleCoverage:
    if curve.requeue != AT_EXPIRY:
        return RuleCoverage(
            "cap-median", False, "not judged: this kubelet retries on a period, not at the expiry"
        )
    return RuleCoverage(
        "cap-median",
        at_cap >= CAP_MEDIAN_FROM,
        f"{at_cap} restart(s) at the {cap} cap"
        + (f" (judged from {CAP_MEDIAN_FROM})" if at_cap < CAP_MEDIAN_FROM else ""),
    )


def _variant_rule(
    rule: str, verdicts: Mapping[str, WorkerVerdict], subjects: Sequence[str], *, variants_ran: bool
) -> RuleCoverage:
    if not variants_ran:
        return RuleCoverage(rule, False, "no variant can run here")
    ran = [s for s in subjects if s in verdicts]
    if len(ran) < len(subjects):
        return RuleCoverage(rule, False, "not run beside this worker by this profile")
    judged = [s for s in ran if any(c.curve_n >= 2 for c in verdicts[s].checks)]
    if len(judged) < len(subjects):
        return RuleCoverage(rule, False, f"{', '.join(ran)} ran but never waited a back-off")
    return RuleCoverage(rule, True, f"probed by {', '.join(ran)}")


def _shown(levels: Sequence[timedelta]) -> str:
    return ", ".join(format_duration(level) for level in levels) or "none"


def cut_windows(pace: float, widest: float) -> RuleCoverage:
    """A node whose pace read past the widest its windows are judged at: they were cut to
    that widest, so a pass there does not cover a kubelet whose every restart is late by
    less than the widening. A kubelet that sleeps 1 s before each container creation passed
    on a fifth of a core read at 25.80x (run 20261208T005424Z-check-quick-4eaa) and failed
    unthrottled (20261208T005742Z-check-quick-2707)."""
    return RuleCoverage(
        WINDOWS_RULE,
        False,
        f"the node's pace read up to {pace:.2f}x, past the {widest:g}x its windows are judged "
        "at: they were widened that far, and a kubelet late by less than that widening on "
        "every restart passes here",
    )


def uncovered(coverage: Mapping[str, Sequence[RuleCoverage]]) -> list[str]:
    """One line per worker naming the rules its pass did not cover, for people."""
    return [
        f"{worker}: {', '.join(f'{r.rule} ({r.detail})' for r in rules if not r.covered)}"
        for worker, rules in coverage.items()
        if any(not r.covered for r in rules)
    ]
