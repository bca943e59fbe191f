"""What the curve predicts for a run of one container's restarts, as a scenario metric (pure).

A scenario's headline is often the time from a container's first exit to
some later moment (its restart N started, it turned Ready): the nominal
back-offs of restarts 1..N plus the work the attempts between them did, and
at most each back-off at the verdict's tolerance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.scenarios.common import Metric, bounded, run_ns, seconds, unmeasured
from crashloop_harness.verdict import CLOCK_ROUNDING


@dataclass(frozen=True)
class CurveSpan:
    """What the model predicts from attempt 0's exit to the start of attempt ``restarts``.

    The nominal back-offs of restarts 1..n plus the work attempts 1..n-1
    measurably did in between; ``upper_s`` takes each back-off at the
    verdict's tolerance instead.
    """

    restarts: int
    first_exit_ns: int  # attempt 0's finish (runtime ns), where the span starts
    delays_s: tuple[float, ...]
    work_s: float

    @property
    def expected_s(self) -> float:
        return sum(self.delays_s) + self.work_s


def curve_span(
    curve: BackoffCurve, ordered: Sequence[AttemptRecord], restarts: int
) -> CurveSpan | str:
    """The model of one container's first ``restarts`` restarts; a str says why there is none.

    ``ordered`` is the container's attempts by number (:func:`by_attempt`).
    """
    numbered = {r.attempt: r for r in ordered}
    first = numbered.get(0)
    if first is None or first.finished_at_ns is None:
        return "the first exit (attempt 0's finish) was not recorded"
    runs = [run_ns(numbered[n]) if n in numbered else None for n in range(1, restarts)]
    known = [run for run in runs if run is not None]
    if len(known) != len(runs):
        return f"the run time of an attempt between 1 and {restarts - 1} was not recorded"
    delays = tuple(curve.delay_before_restart(n).total_seconds() for n in range(1, restarts + 1))
    return CurveSpan(restarts, first.finished_at_ns, delays, sum(seconds(run) for run in known))


def span_upper_s(curve: BackoffCurve, span: CurveSpan) -> float:
    """The longest the span may take: every back-off at the verdict's tolerance."""
    tolerated = (curve.upper_tolerance(timedelta(seconds=d)) for d in span.delays_s)
    return sum(t.total_seconds() for t in tolerated) + span.work_s


def span_metric(
    name: str,
    curve: BackoffCurve,
    ordered: Sequence[AttemptRecord],
    restarts: int,
    *,
    end_ns: int | None,
    end: str,
    slack: timedelta = timedelta(0),
) -> Metric:
    """From one container's first exit to ``end`` (at ``end_ns``), against the curve's span.

    ``slack`` is what ``end`` may add after the start of attempt ``restarts``
    (a probe's period, later pods' starts); it widens the upper bound only.
    """
    span = curve_span(curve, ordered, restarts)
    if isinstance(span, str):
        return unmeasured(name, span)
    if end_ns is None:
        return unmeasured(name, f"{end} was not seen")
    return bounded(
        name,
        "s",
        expected=span.expected_s,
        measured=seconds(end_ns - span.first_exit_ns),
        lower=span.expected_s - CLOCK_ROUNDING.total_seconds(),
        upper=span_upper_s(curve, span) + slack.total_seconds(),
        detail=(
            f"back-offs {list(span.delays_s)}s plus {span.work_s:.3f}s of work in attempts "
            f"1..{restarts - 1}, then {end}"
            + (f" within {slack.total_seconds():g}s" if slack else "")
        ),
        restarts=restarts,
    )
