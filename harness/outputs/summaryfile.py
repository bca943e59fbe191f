"""``summary.json`` on disk: written atomically, read back checking every field.

The reader is strict about types and the schema version and tolerant of
fields newer harnesses added (read as absent), so a report or a flakiness
series can read runs of older and newer versions alike.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

from harness.cluster.kubeletswap import NodeKubelet
from harness.core.atomicfile import write_atomically
from harness.outputs.coverage import RuleCoverage
from harness.outputs.summary import (
    READABLE_SCHEMA_VERSIONS,
    SUMMARY_FILE,
    ClusterInfo,
    JudgedBound,
    LiveConfig,
    MetricSummary,
    RunStatus,
    RunSummary,
    SummaryError,
    WorkerSummary,
)
from harness.recording.observercost import ObserverCost
from harness.verdict import RestartCheck


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
    if version not in READABLE_SCHEMA_VERSIONS:
        raise SummaryError(
            f"schema_version {version}, this harness reads "
            f"{', '.join(map(str, READABLE_SCHEMA_VERSIONS))}",
            "read it with the harness version that wrote it",
        )
    cluster = obj.obj("cluster")
    return RunSummary(
        run_id=obj.string("run_id"),
        kind=obj.string("kind"),
        # RunSummary.__post_init__ checks the status against its Literal.
        profile=obj.string("profile"),
        started_at=obj.string("started_at"),
        finished_at=obj.string("finished_at"),
        status=cast(RunStatus, obj.string("status")),
        reason=obj.string("reason"),
        cluster=ClusterInfo(
            name=cluster.string("name"),
            node_image=cluster.string("node_image"),
            kubernetes_version=cluster.string("kubernetes_version"),
            # Absent from summaries written before each node's kubelet was kept.
            kubelets=tuple(
                NodeKubelet(
                    node=k.string("node"),
                    version=k.string("version"),
                    sha256=k.string("sha256"),
                    swapped=k.opt_string("swapped"),
                )
                for k in cluster.objs("kubelets")
            )
            if cluster.has("kubelets")
            else (),
        ),
        workers=tuple(_worker_from(w) for w in obj.objs("workers")),
        # Absent from summaries written before scenario runs shared this model.
        metrics=tuple(_metric_from(m) for m in obj.objs("metrics")) if obj.has("metrics") else (),
        # Absent from summaries written before the observer measured itself.
        observer=_observer_from(found) if (found := _opt_new_obj(obj, "observer")) else None,
        # Absent from summaries written before the recorder's notes were kept
        # apart (they read in the reason then).
        recorder_notes=obj.strings("recorder_notes") if obj.has("recorder_notes") else (),
        # Absent from summaries written before the table of bounds was carried.
        bounds=tuple(_bound_from(b) for b in obj.objs("bounds")) if obj.has("bounds") else (),
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
        api_requests=_opt_new_int(obj, "api_requests"),
        watch_events=_opt_new_int(obj, "watch_events"),
    )


def _bound_from(obj: _Obj) -> JudgedBound:
    return JudgedBound(
        name=obj.string("name"),
        value=obj.number("value"),
        unit=obj.string("unit"),
        source_kind=obj.string("source_kind"),
        source=obj.string("source"),
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
        coverage=tuple(
            RuleCoverage(c.string("rule"), c.boolean("covered"), c.string("detail"))
            for c in (obj.objs("coverage") if obj.has("coverage") else [])
        ),
    )


def _opt_new_int(obj: _Obj, key: str) -> int | None:
    """An integer field newer than some summaries on disk: absent or null reads as None."""
    if not obj.has(key) or not isinstance(obj.raw, dict) or obj.raw.get(key) is None:
        return None
    return obj.integer(key)


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
