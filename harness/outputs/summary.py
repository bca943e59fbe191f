"""The run summary: what one run measured and concluded, as ``summary.json``.

The attempt log (:mod:`harness.recording.records`) is the raw evidence; the summary is
the conclusion drawn from it: per worker the live kubelet config, the curve
it implies, every restart check and the overshoot statistics the README
quotes. It is written once, at the end of a run (also an interrupted or
failed one), atomically, so a reader never sees half of it.

Pure apart from :func:`write_summary` / :func:`read_summary`; the JSON keeps
the Python field names except ``maxContainerRestartPeriod`` and
``featureGates``, which keep the kubelet's spelling so a reader can grep for
them.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal, cast, get_args

from harness.cluster.liveconfig import NodeConfigRow
from harness.core.atomicfile import write_atomically
from harness.core.errors import HarnessError
from harness.recording.observercost import ObserverCost
from harness.verdict import RestartCheck, WorkerVerdict, waited_restarts

SUMMARY_FILE: Final = "summary.json"
# Bumped on any incompatible change, so an old reader refuses a new file
# instead of misreading it.
SCHEMA_VERSION: Final = 1

# "scenarios": a scenario run, judged by its metrics rather than a check profile.
RunProfile = Literal["quick", "full", "scenarios"]
RunStatus = Literal["passed", "failed", "interrupted", "error"]
# How the run ended, as the caller knows it; the verdicts decide the rest.
# "failed" is for a run that failed beyond its verdicts (a kubelet stopped).
RunOutcome = Literal["completed", "failed", "interrupted", "error"]

KIND_CONFORMANCE: Final = "conformance"
KIND_SCENARIO_PREFIX: Final = "scenario:"

# The runtime's nanoseconds are far finer than anything a reader compares;
# milliseconds are what the README and the tables show.
_MS_DIGITS: Final = 3


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
class ClusterInfo:
    """Which cluster ran the measurements."""

    name: str
    node_image: str
    kubernetes_version: str


@dataclass(frozen=True, kw_only=True)
class LiveConfig:
    """A worker's live kubelet backoff settings (a :class:`NodeConfigRow`, as data).

    ``mismatches`` says where the live kubelet differs from the worker's
    profile; the verdicts are against the live curve either way.
    """

    max_container_restart_period: str
    feature_gates: dict[str, bool]
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
class WorkerSummary:
    """One worker's result.

    ``expected_s`` and ``measured_s`` are per restart, restart 1 first;
    a restart that could not be measured is None. ``overshoot_*_s`` are over
    restarts that waited (see :func:`overshoot`); None when there were none.
    ``failures`` hold every failure message, ``problems`` the subset that
    belongs to no single restart (nothing recorded, ...).
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

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["live_config"] = self.live_config.to_dict() if self.live_config else None
        return data


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
class RunSummary:
    """Everything one run concluded; ``passed`` only when status is "passed"."""

    run_id: str
    kind: str
    profile: RunProfile
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
    schema_version: int = field(default=SCHEMA_VERSION)

    def __post_init__(self) -> None:
        check_kind(self.kind)
        if self.profile not in get_args(RunProfile):
            raise ValueError(f"profile must be one of {get_args(RunProfile)}, got {self.profile!r}")
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
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2) + "\n"


def outcome_of(status: str) -> RunOutcome:
    """How a run ended, from its own status ("observed", "timeout", ...), for :func:`summarize`.

    A run that failed (a stopped kubelet, an incomplete observation) stays
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


def summarize_worker(
    verdict: WorkerVerdict, config: NodeConfigRow | None, attempts_recorded: int
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
        failures=tuple(verdict.failures),
        problems=tuple(f"{verdict.worker}: {p}" for p in verdict.problems),
        notes=tuple(notes),
        attempts_recorded=attempts_recorded,
        reported_seen=verdict.reported_seen,
        reported_expected=verdict.reported_expected,
        overshoot_median_s=median,
        overshoot_max_s=worst,
        start_latency_median_s=statistics.median(latencies) if latencies else None,
        start_latency_max_s=max(latencies) if latencies else None,
    )


def summarize(
    *,
    run_id: str,
    kind: str,
    profile: RunProfile,
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
) -> RunSummary:
    """The run's summary.

    ``configs`` are matched to verdicts by worker name, else by node;
    ``attempts_recorded`` is keyed by worker name. An interrupted or errored
    run keeps that status whatever its verdicts say: what it measured is in
    the workers, but it did not measure everything it meant to.
    """
    workers = tuple(
        summarize_worker(v, _config_for(v, configs), attempts_recorded.get(v.worker, 0))
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
    )


def _config_for(verdict: WorkerVerdict, configs: Sequence[NodeConfigRow]) -> NodeConfigRow | None:
    by_worker = next((c for c in configs if c.worker == verdict.worker), None)
    return by_worker or next((c for c in configs if c.node == verdict.node), None)


# --- files ---------------------------------------------------------------------------------


def write_summary(run_dir: Path, summary: RunSummary) -> Path:
    """Write ``<run_dir>/summary.json`` atomically; returns its path."""
    return write_atomically(Path(run_dir) / SUMMARY_FILE, summary.to_json().encode("utf-8"))


def read_summary(path: Path) -> RunSummary:
    """Read a summary.json (or the one in a run directory), checking every field."""
    path = Path(path)
    if path.is_dir():
        path = path / SUMMARY_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise SummaryError(
            f"no run summary at {path}",
            "the run may still be going or was killed before it finished; "
            "its attempts.jsonl holds what it measured",
        ) from error
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SummaryError(f"{path} is not readable JSON: {error}") from error
    try:
        return _run_from(_Obj(raw, "summary"))
    except SummaryError as error:
        raise SummaryError(f"{path}: {error.problem}", error.fix) from error
    except ValueError as error:
        # RunSummary's own checks (kind, profile, status).
        raise SummaryError(f"{path}: {error}") from error


def _run_from(obj: _Obj) -> RunSummary:
    version = obj.integer("schema_version")
    if version != SCHEMA_VERSION:
        raise SummaryError(
            f"schema_version {version}, this harness reads {SCHEMA_VERSION}",
            "read it with the harness version that wrote it",
        )
    cluster = obj.obj("cluster")
    return RunSummary(
        run_id=obj.string("run_id"),
        kind=obj.string("kind"),
        # RunSummary.__post_init__ checks both against their Literals.
        profile=cast(RunProfile, obj.string("profile")),
        started_at=obj.string("started_at"),
        finished_at=obj.string("finished_at"),
        status=cast(RunStatus, obj.string("status")),
        reason=obj.string("reason"),
        cluster=ClusterInfo(
            name=cluster.string("name"),
            node_image=cluster.string("node_image"),
            kubernetes_version=cluster.string("kubernetes_version"),
        ),
        workers=tuple(_worker_from(w) for w in obj.objs("workers")),
        # Absent from summaries written before scenario runs shared this model.
        metrics=tuple(_metric_from(m) for m in obj.objs("metrics")) if obj.has("metrics") else (),
        # Absent from summaries written before the observer measured itself.
        observer=_observer_from(found) if (found := _opt_new_obj(obj, "observer")) else None,
        schema_version=version,
    )


def _opt_new_obj(obj: _Obj, key: str) -> _Obj | None:
    """An optional object that older summaries lack altogether."""
    return obj.opt_obj(key) if obj.has(key) else None


def _observer_from(obj: _Obj) -> ObserverCost:
    return ObserverCost(
        observer=obj.string("observer"),
        wall_s=obj.number("wall_s"),
        harness_cpu_s=obj.number("harness_cpu_s"),
        engine_cpu_s=obj.opt_number("engine_cpu_s"),
        attempts_seen=obj.integer("attempts_seen"),
        latency_median_ms=obj.opt_number("latency_median_ms"),
        latency_p95_ms=obj.opt_number("latency_p95_ms"),
        latency_max_ms=obj.opt_number("latency_max_ms"),
        reconciled=obj.integer("reconciled"),
        reconnects=obj.integer("reconnects"),
    )


def _metric_from(obj: _Obj) -> MetricSummary:
    return MetricSummary(
        scenario=obj.string("scenario"),
        worker=obj.string("worker"),
        node=obj.string("node"),
        name=obj.string("name"),
        unit=obj.string("unit"),
        expected=obj.opt_number("expected"),
        measured=obj.opt_number("measured"),
        lower=obj.opt_number("lower"),
        upper=obj.opt_number("upper"),
        passed=obj.boolean("passed"),
        detail=obj.string("detail"),
        message=obj.string("message"),
    )


def _worker_from(obj: _Obj) -> WorkerSummary:
    live = obj.opt_obj("live_config")
    return WorkerSummary(
        worker=obj.string("worker"),
        node=obj.string("node"),
        profile=obj.opt_string("profile"),
        live_config=None if live is None else _live_from(live),
        expected_s=tuple(e.number() for e in obj.items("expected_s")),
        measured_s=tuple(m.opt_number() for m in obj.items("measured_s")),
        checks=tuple(_check_from(c) for c in obj.objs("checks")),
        passed=obj.boolean("passed"),
        failures=obj.strings("failures"),
        problems=obj.strings("problems"),
        notes=obj.strings("notes"),
        attempts_recorded=obj.integer("attempts_recorded"),
        reported_seen=obj.integer("reported_seen"),
        reported_expected=obj.integer("reported_expected"),
        overshoot_median_s=obj.opt_number("overshoot_median_s"),
        overshoot_max_s=obj.opt_number("overshoot_max_s"),
        start_latency_median_s=_opt_new_number(obj, "start_latency_median_s"),
        start_latency_max_s=_opt_new_number(obj, "start_latency_max_s"),
    )


def _opt_new_number(obj: _Obj, key: str) -> float | None:
    """A number field newer than some summaries on disk: absent reads as None."""
    return obj.opt_number(key) if obj.has(key) else None


def _live_from(obj: _Obj) -> LiveConfig:
    return LiveConfig(
        max_container_restart_period=obj.string("maxContainerRestartPeriod"),
        feature_gates=obj.gates("featureGates"),
        initial_s=obj.number("initial_s"),
        max_s=obj.number("max_s"),
        mismatches=obj.strings("mismatches"),
    )


def _check_from(obj: _Obj) -> RestartCheck:
    return RestartCheck(
        n=obj.integer("n"),
        expected_s=obj.number("expected_s"),
        measured_s=obj.opt_number("measured_s"),
        margin_s=obj.opt_number("margin_s"),
        upper_bound_s=obj.number("upper_bound_s"),
        reported_s=obj.opt_number("reported_s"),
        passed=obj.boolean("passed"),
        reason=obj.string("reason"),
        curve_n=obj.integer("curve_n"),
        # Absent from summaries written before creation times were recorded.
        start_latency_s=_opt_new_number(obj, "start_latency_s"),
        # Absent from summaries written before node freezes were told apart.
        error=obj.boolean("error") if obj.has("error") else False,
    )


class _Obj:
    """A JSON value with a path, read with type checks that name the path.

    Used as an object (``obj.string("key")``) or, for list items, as a scalar
    (``item.number()``).
    """

    def __init__(self, raw: object, where: str) -> None:
        self.raw = raw
        self.where = where

    def _get(self, key: str) -> _Obj:
        if not isinstance(self.raw, dict):
            raise SummaryError(f"{self.where}: expected an object, got {_type(self.raw)}")
        if key not in self.raw:
            raise SummaryError(f"{self.where}.{key}: missing")
        return _Obj(self.raw[key], f"{self.where}.{key}")

    def _fail(self, expected: str) -> SummaryError:
        return SummaryError(f"{self.where}: expected {expected}, got {self.raw!r}")

    def has(self, key: str) -> bool:
        return isinstance(self.raw, dict) and key in self.raw

    def string(self, key: str | None = None) -> str:
        value = self._get(key) if key is not None else self
        if not isinstance(value.raw, str):
            raise value._fail("a string")
        return value.raw

    def opt_string(self, key: str) -> str | None:
        value = self._get(key)
        return None if value.raw is None else value.string()

    def integer(self, key: str) -> int:
        value = self._get(key)
        # bool is an int in Python but never one in these files.
        if isinstance(value.raw, bool) or not isinstance(value.raw, int):
            raise value._fail("an integer")
        return value.raw

    def number(self, key: str | None = None) -> float:
        value = self._get(key) if key is not None else self
        if isinstance(value.raw, bool) or not isinstance(value.raw, int | float):
            raise value._fail("a number")
        return float(value.raw)

    def opt_number(self, key: str | None = None) -> float | None:
        value = self._get(key) if key is not None else self
        return None if value.raw is None else value.number()

    def boolean(self, key: str) -> bool:
        value = self._get(key)
        if not isinstance(value.raw, bool):
            raise value._fail("true or false")
        return value.raw

    def items(self, key: str) -> list[_Obj]:
        value = self._get(key)
        if not isinstance(value.raw, list):
            raise value._fail("a list")
        return [_Obj(item, f"{value.where}[{i}]") for i, item in enumerate(value.raw)]

    def strings(self, key: str) -> tuple[str, ...]:
        return tuple(item.string() for item in self.items(key))

    def obj(self, key: str) -> _Obj:
        value = self._get(key)
        if not isinstance(value.raw, dict):
            raise value._fail("an object")
        return value

    def opt_obj(self, key: str) -> _Obj | None:
        value = self._get(key)
        return None if value.raw is None else self.obj(key)

    def objs(self, key: str) -> list[_Obj]:
        items = self.items(key)
        for item in items:
            if not isinstance(item.raw, dict):
                raise item._fail("an object")
        return items

    def gates(self, key: str) -> dict[str, bool]:
        value = self.obj(key)
        raw = cast(dict[str, object], value.raw)
        return {name: value.boolean(name) for name in raw}


def _type(raw: object) -> str:
    return "null" if raw is None else type(raw).__name__
