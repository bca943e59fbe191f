"""The run summary: what one run measured and concluded, as ``summary.json``.

The attempt log (:mod:`crashloop_harness.recording.records`) is the raw evidence; the summary is
the conclusion drawn from it: per worker the live kubelet config, the curve
it implies, every restart check and the overshoot statistics the docs
quote, and the table of tolerances (:mod:`crashloop_harness.model.bounds`) it was judged
with, so a run read later says which bounds it passed or failed against. It is
written once, at the end of a run (also an interrupted or failed one),
atomically, so a reader never sees half of it.

Pure: :mod:`crashloop_harness.outputs.summaryfile` writes and reads the file. The JSON
keeps the Python field names except ``maxContainerRestartPeriod`` and
``featureGates``, which keep the kubelet's spelling so a reader can grep for
them.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Final, Literal, cast, get_args

from pydantic import Field

from crashloop_harness.cluster.info import ClusterInfo
from crashloop_harness.cluster.liveconfig import NodeConfigRow
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.version import harness_version
from crashloop_harness.model.bounds import BOUNDS, Bound
from crashloop_harness.model.subject import is_bare
from crashloop_harness.recording.observercost import ObserverCost
from crashloop_harness.verdict import Failure, RestartCheck, WorkerVerdict, waited_restarts
from crashloop_harness.verdict.coverage import RuleCoverage
from crashloop_harness.verdict.nodecost import NodeCost

SUMMARY_FILE: Final = "summary.json"
# Bumped on any incompatible change, so an old reader refuses a new file
# instead of misreading it. An added optional field is no such change: an
# older reader ignores it and this one reads its absence from older files
# (``bounds`` came that way).
# 2: ``profile`` names what ran (demo, a drill's own name), not quick or full
# alone; ``recorder_notes`` beside the reason. Version 1 files still read.
SCHEMA_VERSION: Final = 3
READABLE_SCHEMA_VERSIONS: Final = (1, 2, 3)

# A run's profile is the name of what it ran: a check profile ("quick",
# "full", "demo", a drill's own), or "scenarios" for a scenario run, judged by
# its metrics rather than a check profile.
PROFILE_SCENARIOS: Final = "scenarios"
# The check profiles whose runs may be pooled (a matrix, a flakiness series):
# the ones `crashloop check` runs, each judged to the end of its needs. A demo
# watches a fixed window and a drill its own needs; their numbers are no
# sample of the same thing.
POOLED_PROFILES: Final = ("quick", "full")
# How a check's run id names its profile (crashloop_harness.runs.lifecycle.new_run_dir).
_CHECK_RUN_ID: Final = re.compile(r"^\d{8}T\d{6}Z-check-(?P<profile>.+)-[0-9a-f]{4}$")
RunStatus = Literal["passed", "failed", "interrupted", "error"]
# How the run ended, as the caller knows it; the verdicts decide the rest.
# "failed" is for a run that failed beyond its verdicts (an incomplete observation).
RunOutcome = Literal["completed", "failed", "interrupted", "error"]

KIND_CONFORMANCE: Final = "conformance"
KIND_SCENARIO_PREFIX: Final = "scenario:"

# The runtime's nanoseconds are far finer than anything a reader compares;
# milliseconds are what the docs and the tables show.
_MS_DIGITS: Final = 3
# How many of the recorder's notes a failed or errored run's reason quotes
# (every one stays in ``recorder_notes``).
REASON_NOTES: Final = 3


class SummaryError(HarnessError):
    """summary.json is missing, not JSON, or not a summary this harness writes."""


def check_kind(kind: str) -> str:
    """``kind`` itself if it is "conformance" or "scenario:<name>", else ValueError."""
    if kind == KIND_CONFORMANCE:
        return kind
    if kind.startswith(KIND_SCENARIO_PREFIX) and kind[len(KIND_SCENARIO_PREFIX) :].strip():
        return kind
    raise ValueError(
        f"run kind must be {KIND_CONFORMANCE!r} or '{KIND_SCENARIO_PREFIX}<name>', got {kind!r}"
    )


def utc_iso(moment: datetime) -> str:
    """ISO 8601 in UTC with milliseconds and a Z, e.g. 2026-01-01T10:00:00.000Z.

    Naive datetimes are refused: their zone is a guess, and a summary read on
    another machine must not shift by hours.
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"expected a timezone-aware datetime, got naive {moment.isoformat()}")
    text = moment.astimezone(UTC).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


@dataclass(frozen=True, kw_only=True)
class LiveConfig:
    """A worker's live kubelet backoff settings (a :class:`NodeConfigRow`, as data).

    ``mismatches`` says where the live kubelet differs from the worker's
    profile; the verdicts are against the live curve either way.
    """

    # Named as the kubelet's config names them in summary.json (to_dict).
    max_container_restart_period: Annotated[
        str, Field(validation_alias="maxContainerRestartPeriod")
    ]
    feature_gates: Annotated[dict[str, bool], Field(validation_alias="featureGates")]
    initial_s: float
    max_s: float
    mismatches: tuple[str, ...] = ()

    @classmethod
    def from_row(cls, row: NodeConfigRow) -> LiveConfig:
        return cls(
            max_container_restart_period=row.max_container_restart_period,
            feature_gates=dict(row.feature_gates),
            initial_s=row.curve.initial.total_seconds(),
            max_s=row.curve.maximum.total_seconds(),
            mismatches=row.mismatches,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "maxContainerRestartPeriod": self.max_container_restart_period,
            "featureGates": dict(self.feature_gates),
            "initial_s": self.initial_s,
            "max_s": self.max_s,
            "mismatches": list(self.mismatches),
        }


@dataclass(frozen=True, kw_only=True)
class RestartCost:
    """What a restart cost a worker's node in the run, and the bounds it gave.

    From crashloop_harness.verdict.nodecost: the restarts that waited no back-off (the
    subjects' restart 1 and the probes') and the runtime's start latency
    (started - created) of every attempt on the node, each with its count,
    median and 95th percentile; the runtime's slowdown (the cap) and the node's
    against the reference host; what a restart could then cost after its
    requeue, and restart 1's bound.
    """

    node: str
    measured: bool
    start_latency_samples: int
    start_latency_median_s: float | None
    start_latency_p95_s: float | None
    first_restart_samples: int
    first_restart_median_s: float | None
    first_restart_p95_s: float | None
    runtime_slowdown: float
    slowdown: float
    after_requeue_s: float
    first_restart_bound_s: float
    too_slow: bool
    levels_fall_behind: bool
    # The node's pace probes, beside the kubelet (none in summaries written before them).
    pace_samples: int = 0
    pace_median_s: float | None = None
    pace_p95_s: float | None = None
    pace: float = 1.0

    @classmethod
    def of(cls, cost: NodeCost) -> RestartCost:
        return cls(**cost.to_dict())


@dataclass(frozen=True, kw_only=True)
class WorkerSummary:
    """One worker's result.

    ``expected_s`` and ``measured_s`` are per restart, restart 1 first;
    a restart that could not be measured is None. ``overshoot_*_s`` are over
    restarts that waited (see :func:`overshoot`); None when there were none.
    ``failures`` hold every failure message, ``failure_codes`` the code of each
    (from the rule that failed, never from the words), ``problems`` the subset
    that belongs to no single restart (nothing recorded, ...), and
    ``problem_failures`` those and the worker's errors as values.
    """

    worker: str
    node: str
    profile: str | None
    live_config: LiveConfig | None
    expected_s: tuple[float, ...]
    measured_s: tuple[float | None, ...]
    checks: tuple[RestartCheck, ...]
    passed: bool
    failures: tuple[str, ...]
    problems: tuple[str, ...]
    notes: tuple[str, ...]
    attempts_recorded: int
    reported_seen: int
    reported_expected: int
    overshoot_median_s: float | None
    overshoot_max_s: float | None
    # started - created of every recorded restart: the runtime's share, kept
    # out of the delays the kubelet is judged on. None when none was recorded.
    start_latency_median_s: float | None = None
    start_latency_max_s: float | None = None
    # What the verdict covered of the kubelet's rules, and what not (a bare
    # worker of a check; empty for its variants and older summaries).
    coverage: tuple[RuleCoverage, ...] = ()
    # The node's restart cost measured in the run (None: not measured, as in
    # summaries written before it was).
    restart_cost: RestartCost | None = None
    # Empty in summaries written before codes were kept (version 1 and 2 files).
    failure_codes: tuple[str, ...] = ()
    # Every failure that belongs to no single restart, errors too, as values
    # (empty in summaries written before they were kept).
    problem_failures: tuple[Failure, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["live_config"] = self.live_config.to_dict() if self.live_config else None
        return data

    @property
    def not_covered(self) -> tuple[RuleCoverage, ...]:
        return tuple(r for r in self.coverage if not r.covered)

    @property
    def in_error(self) -> bool:
        """Not passed, and every failure an error (the environment's), none the kubelet's."""
        found = [*(f for c in self.checks for f in c.failures), *self.problem_failures]
        return not self.passed and bool(found) and all(f.error for f in found)


@dataclass(frozen=True, kw_only=True)
class MetricSummary:
    """One scenario metric of one worker: what was measured, what passes, and why not.

    ``lower``/``upper`` bound what passes (None: unbounded); ``expected`` is
    None for a measurement with no model. ``message`` is the one-line failure
    text, kept whether or not it failed so a reader sees the numbers.
    """

    scenario: str
    worker: str
    node: str
    name: str
    unit: str
    expected: float | None
    measured: float | None
    lower: float | None
    upper: float | None
    passed: bool
    detail: str
    message: str


@dataclass(frozen=True, kw_only=True)
class JudgedBound:
    """One tolerance a run was judged with: an entry of
    :data:`crashloop_harness.model.bounds.BOUNDS`.

    Its ``why`` stays in the table and docs/bounds.md; the summary keeps what
    a reader needs to tell two runs' bounds apart and where each came from.
    """

    name: str
    value: float
    unit: str
    source_kind: str
    source: str

    @classmethod
    def from_bound(cls, bound: Bound) -> JudgedBound:
        return cls(
            name=bound.name,
            value=bound.value,
            unit=bound.unit,
            source_kind=bound.source_kind,
            source=bound.source,
        )


def bounds_in_force() -> tuple[JudgedBound, ...]:
    """The table this harness judges with, as a summary carries it."""
    return tuple(JudgedBound.from_bound(bound) for bound in BOUNDS.values())


@dataclass(frozen=True, kw_only=True)
class RunSummary:
    """Everything one run concluded; ``passed`` only when status is "passed"."""

    run_id: str
    kind: str
    profile: str
    started_at: str
    finished_at: str
    status: RunStatus
    reason: str
    cluster: ClusterInfo
    workers: tuple[WorkerSummary, ...]
    # Scenario runs: every metric of every scenario on every worker.
    metrics: tuple[MetricSummary, ...] = ()
    # What observing the run cost (None where the recorder never ran).
    observer: ObserverCost | None = None
    # What the recorder met on the way (a reader started again, a dropped
    # watch): kept apart from ``reason``, which a passed run leaves free of
    # failures. Empty in summaries written before they were kept apart.
    recorder_notes: tuple[str, ...] = ()
    # node -> what was said of its kubelet, which stopped or froze during the run (its
    # workers' failures are then the environment's errors). Empty in summaries written
    # before it was kept.
    stopped_kubelets: dict[str, str] = field(default_factory=dict)
    # The tolerances the verdicts used; empty in summaries written before
    # they were carried.
    bounds: tuple[JudgedBound, ...] = field(default_factory=bounds_in_force)
    schema_version: int = field(default=SCHEMA_VERSION)
    # The harness that wrote it ("unknown" in summaries written before it was kept).
    harness_version: str = "unknown"

    def __post_init__(self) -> None:
        check_kind(self.kind)
        if not self.profile.strip():
            raise ValueError("profile must name what the run ran, got an empty name")
        if self.status not in get_args(RunStatus):
            raise ValueError(f"status must be one of {get_args(RunStatus)}, got {self.status!r}")

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def failures(self) -> list[str]:
        restarts = [message for worker in self.workers for message in worker.failures]
        return restarts + [m.message for m in self.metrics if not m.passed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "harness_version": self.harness_version,
            "run_id": self.run_id,
            "kind": self.kind,
            "profile": self.profile,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "status": self.status,
            "reason": self.reason,
            # Stored although derived: a reader of the JSON should not have
            # to know the rule.
            "passed": self.passed,
            "cluster": asdict(self.cluster),
            "workers": [worker.to_dict() for worker in self.workers],
            "metrics": [asdict(metric) for metric in self.metrics],
            "observer": None if self.observer is None else self.observer.to_dict(),
            "recorder_notes": list(self.recorder_notes),
            "stopped_kubelets": dict(self.stopped_kubelets),
            "bounds": [asdict(bound) for bound in self.bounds],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"


def check_profile_of(summary: RunSummary) -> str:
    """The profile a run ran, as its summary names it or, where that cannot be right, its run id.

    Summaries written before they carried every profile's own name read
    "quick" for any check that was not "full" (a demo, a drill); the run id
    of a check (``<time>-check-<profile>-<hex>``) names the profile it ran.
    """
    if summary.kind == KIND_CONFORMANCE and summary.profile in POOLED_PROFILES:
        named = _CHECK_RUN_ID.match(summary.run_id)
        if named is not None:
            return named["profile"]
    return summary.profile


def require_pooled_check(summary: RunSummary, run_dir: Path) -> None:
    """HarnessError unless ``summary`` is a quick or full check, which may be pooled with others."""
    profile = check_profile_of(summary)
    if summary.kind == KIND_CONFORMANCE and profile in POOLED_PROFILES:
        return
    what = (
        f"a check with profile {profile}"
        if summary.kind == KIND_CONFORMANCE
        else f"a {summary.kind} run (profile {profile})"
    )
    raise HarnessError(
        f"{run_dir}: run {summary.run_id} is {what}, not a quick or full check",
        f"only {' and '.join(POOLED_PROFILES)} check runs (`crashloop check --profile "
        f"{'|'.join(POOLED_PROFILES)}`) can be pooled; leave this run out",
    )


def outcome_of(status: str) -> RunOutcome:
    """How a run ended, from its own status ("observed", "timeout", ...), for :func:`summarize`.

    A run that failed (an incomplete observation) stays
    failed whatever its verdicts say; an unknown status is an error, never a pass.
    """
    if status in ("interrupted", "failed", "error"):
        return cast(RunOutcome, status)
    if status == "timeout":
        # The window ended before what was needed: a failure, as in the verdict.
        return "failed"
    return "completed" if status in ("passed", "observed") else "error"


def overshoot(checks: Sequence[RestartCheck]) -> tuple[float | None, float | None]:
    """Median and max of measured - expected, in seconds, over the restarts that waited."""
    margins = [c.margin_s for c in waited_restarts(checks) if c.margin_s is not None]
    if not margins:
        return None, None
    return statistics.median(margins), max(margins)


def restart_cost(worker: WorkerSummary) -> float | None:
    """What one restart of this worker's bare curve took beyond its back-off, median seconds.

    The kubelet's decision after the back-off (its overshoot) plus the
    runtime's start: the fixed cost of every restart on this machine, which
    the nominal curve leaves out. None unless both were measured.
    """
    if worker.overshoot_median_s is None or worker.start_latency_median_s is None:
        return None
    return max(worker.overshoot_median_s, 0.0) + worker.start_latency_median_s


def machine_restart_cost(summary: RunSummary) -> float | None:
    """The least :func:`restart_cost` over the run's bare curves: this machine's fixed part.

    Detecting the exit, the kubelet's sync and the runtime's start cost
    every restart alike, whatever the curve; a long curve's larger overshoot
    is the kubelet's own lateness at that level (which the verdict's tolerance
    covers), not the machine's. Variants are left out; None if nothing waited.
    """
    costs = [
        cost
        for worker in summary.workers
        if is_bare(worker.worker) and (cost := restart_cost(worker)) is not None
    ]
    return min(costs, default=None)


def summarize_worker(
    verdict: WorkerVerdict,
    config: NodeConfigRow | None,
    attempts_recorded: int,
    coverage: Sequence[RuleCoverage] = (),
) -> WorkerSummary:
    """One worker's summary from its verdict, live config row and record count."""
    median, worst = overshoot(verdict.checks)
    latencies = [c.start_latency_s for c in verdict.checks if c.start_latency_s is not None]
    notes = list(verdict.notes)
    if config is None:
        notes.append("no live kubelet config was read for this worker")
    elif config.mismatches:
        notes.append("the live kubelet config differs from the profile (see live_config)")
    return WorkerSummary(
        worker=verdict.worker,
        node=verdict.node,
        profile=config.profile if config else None,
        live_config=LiveConfig.from_row(config) if config else None,
        expected_s=tuple(c.expected_s for c in verdict.checks),
        measured_s=tuple(
            None if c.measured_s is None else round(c.measured_s, _MS_DIGITS)
            for c in verdict.checks
        ),
        checks=verdict.checks,
        passed=verdict.passed,
        failures=tuple(f.words for f in verdict.failures),
        failure_codes=tuple(f.code for f in verdict.failures),
        problems=tuple(f"{verdict.worker}: {p}" for p in verdict.problems),
        problem_failures=tuple(p.of(verdict.worker) for p in (*verdict.problems, *verdict.errors)),
        notes=tuple(notes),
        attempts_recorded=attempts_recorded,
        reported_seen=verdict.reported_seen,
        reported_expected=verdict.reported_expected,
        overshoot_median_s=median,
        overshoot_max_s=worst,
        start_latency_median_s=statistics.median(latencies) if latencies else None,
        start_latency_max_s=max(latencies) if latencies else None,
        coverage=tuple(coverage),
        restart_cost=RestartCost.of(verdict.cost) if verdict.cost is not None else None,
    )


def measured_bounds(workers: Sequence[WorkerSummary]) -> tuple[JudgedBound, ...]:
    """The bounds this run measured for itself: each node's restart cost, source "this run"."""
    costs = {w.restart_cost.node: w.restart_cost for w in workers if w.restart_cost is not None}
    bounds: list[JudgedBound] = []
    for node, cost in sorted(costs.items()):
        if not cost.measured:
            continue
        measure = (
            f"this run: node {node}, restarts with no back-off median "
            f"{cost.first_restart_median_s}s, p95 {cost.first_restart_p95_s}s over "
            f"{cost.first_restart_samples}; the runtime's start latency median "
            f"{cost.start_latency_median_s}s over {cost.start_latency_samples} starts "
            f"({cost.runtime_slowdown}x, the cap); slowdown {cost.slowdown}x the reference host"
        )
        scaled = (
            ("restart_overhead", cost.after_requeue_s, "restart_overhead"),
            (
                "first_restart_bound",
                cost.first_restart_bound_s,
                "(pleg_relist_period + restart_overhead)",
            ),
        )
        if cost.pace_samples:
            # The pace scales the work alone; the timers stay as their sources say.
            measure = (
                f"this run: node {node}, pace probes median {cost.pace_median_s}s, p95 "
                f"{cost.pace_p95_s}s over {cost.pace_samples} (bound reference_pace); "
                f"pace {cost.pace}x the reference host"
            )
            scaled = (
                (
                    "restart_overhead",
                    cost.after_requeue_s,
                    "sync_tick + (restart_overhead - sync_tick)",
                ),
                (
                    "first_restart_bound",
                    cost.first_restart_bound_s,
                    "pleg_relist_period + sync_tick + (restart_overhead - sync_tick)",
                ),
            )
        bounds += [
            JudgedBound(
                name=f"{name}[{node}]",
                value=value,
                unit="s",
                source_kind="this-run",
                source=f"{terms} x {cost.slowdown}; {measure}",
            )
            for name, value, terms in scaled
        ]
    return tuple(bounds)


def summarize(
    *,
    run_id: str,
    kind: str,
    profile: str,
    started_at: datetime,
    finished_at: datetime,
    cluster: ClusterInfo,
    verdicts: Sequence[WorkerVerdict],
    configs: Sequence[NodeConfigRow],
    attempts_recorded: Mapping[str, int],
    outcome: RunOutcome = "completed",
    reason: str = "",
    metrics: Sequence[MetricSummary] = (),
    observer: ObserverCost | None = None,
    recorder_notes: Sequence[str] = (),
    coverage: Mapping[str, Sequence[RuleCoverage]] | None = None,
    stopped_kubelets: Mapping[str, str] | None = None,
) -> RunSummary:
    """The run's summary.

    ``configs`` are matched to verdicts by worker name, else by node;
    ``attempts_recorded`` is keyed by worker name. An interrupted or errored
    run keeps that status whatever its verdicts say: what it measured is in
    the workers, but it did not measure everything it meant to.
    ``recorder_notes`` are kept in the summary; only a failed or errored
    run's reason quotes the first of them, where they may be its cause.
    ``coverage`` is what each worker's verdict covered, by worker name.
    """
    covered = coverage or {}
    workers = tuple(
        summarize_worker(
            v,
            _config_for(v, configs),
            attempts_recorded.get(v.worker, 0),
            covered.get(v.worker, ()),
        )
        for v in verdicts
    )
    status: RunStatus
    if outcome == "interrupted":
        status = "interrupted"
    elif outcome == "error":
        status = "error"
    elif outcome == "failed":
        status = "failed"
    elif not workers and not metrics:
        status = "failed"
        # A run that judged nothing proves nothing; it must not pass.
        reason = reason or "no worker was judged"
    else:
        passed = all(w.passed for w in workers) and all(m.passed for m in metrics)
        status = "passed" if passed else "failed"
    if status in ("failed", "error"):
        reason = "; ".join(filter(None, [reason, *recorder_notes[:REASON_NOTES]]))
    return RunSummary(
        run_id=run_id,
        kind=check_kind(kind),
        profile=profile,
        started_at=utc_iso(started_at),
        finished_at=utc_iso(finished_at),
        status=status,
        reason=reason,
        cluster=cluster,
        workers=workers,
        metrics=tuple(metrics),
        observer=observer,
        recorder_notes=tuple(recorder_notes),
        stopped_kubelets=dict(stopped_kubelets or {}),
        bounds=bounds_in_force() + measured_bounds(workers),
        harness_version=harness_version(),
    )


def _config_for(verdict: WorkerVerdict, configs: Sequence[NodeConfigRow]) -> NodeConfigRow | None:
    by_worker = next((c for c in configs if c.worker == verdict.worker), None)
    return by_worker or next((c for c in configs if c.node == verdict.node), None)
