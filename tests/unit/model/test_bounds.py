"""The one table of tolerances: every entry sourced, every constant read from it."""

from __future__ import annotations

import ast
import dataclasses
import json
import math
import re
import sys
from datetime import timedelta
from pathlib import Path

import pytest

import tests.e2e.test_existing_cluster as existing_cluster
from crashloop_harness import verdict
from crashloop_harness.model import backoff, bounds
from crashloop_harness.model.bounds import BOUNDS, SOURCE_KINDS, Bound
from crashloop_harness.outputs.summary import SUMMARY_FILE, JudgedBound
from crashloop_harness.outputs.summaryfile import read_summary, write_summary
from crashloop_harness.recording import apirecorder, recorder
from crashloop_harness.recording.selfreport import HEARTBEAT_NS
from tests.unit.factories import failing_summary

ROOT = Path(__file__).resolve().parents[3]
RUN_ID = re.compile(r"\d{8}T\d{6}Z-[a-z-]+-[0-9a-f]{4}")
RELEASE = re.compile(r"\bv\d+\.\d+\.\d+\b")
UPSTREAM_PATH = re.compile(r"(?<![\w/])(?:pkg|staging)/[\w./-]+\.go\b")
NO_DISTRIBUTION = "no measured distribution"
ENTRIES = tuple(BOUNDS.values())


def _ids(entry: Bound) -> str:
    return entry.name


@pytest.mark.parametrize("entry", ENTRIES, ids=_ids)
def test_every_entry_says_where_its_value_comes_from_and_what_it_is_for(entry: Bound) -> None:
    assert entry.source.strip()
    assert entry.why.strip()
    assert entry.source_kind in SOURCE_KINDS
    assert BOUNDS[entry.name] is entry
    assert math.isfinite(entry.value)
    assert entry.value > 0


@pytest.mark.parametrize(
    "entry", [e for e in ENTRIES if e.source_kind == "kubelet-source"], ids=_ids
)
def test_a_kubelet_source_names_a_release_and_a_path_in_the_tree(entry: Bound) -> None:
    assert RELEASE.search(entry.source), entry.source
    assert UPSTREAM_PATH.search(entry.source), entry.source


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.source_kind == "measured"], ids=_ids)
def test_a_measured_bound_names_its_run_or_says_there_is_none(entry: Bound) -> None:
    assert RUN_ID.search(entry.source) or NO_DISTRIBUTION in entry.source, entry.source


def test_every_run_cited_is_one_the_measurements_record() -> None:
    # docs/bounds.md is rendered from the table itself, so it proves nothing here.
    pages = [
        ROOT / "README.md",
        *(p for p in (ROOT / "docs").rglob("*.md") if p.name != "bounds.md"),
    ]
    recorded = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    cited = {run for e in ENTRIES for run in RUN_ID.findall(f"{e.source} {e.why}")}
    assert cited
    assert {run for run in cited if run not in recorded} == set()


def _s(name: str) -> timedelta:
    return (
        timedelta(seconds=BOUNDS[name].value)
        if BOUNDS[name].unit == "s"
        else timedelta(milliseconds=BOUNDS[name].value)
    )


# (where the constant lives, its value, the table's value in the constant's unit)
CONSTANTS: list[tuple[str, float | timedelta, float | timedelta]] = [
    ("backoff.REQUEUE_FRACTION", backoff.REQUEUE_FRACTION, BOUNDS["requeue_fraction"].value),
    ("backoff.REQUEUE_CAP", backoff.REQUEUE_CAP, _s("requeue_cap")),
    ("backoff.RESTART_OVERHEAD", backoff.RESTART_OVERHEAD, _s("restart_overhead")),
    ("backoff.PERIODIC_RETRY_MAX", backoff.PERIODIC_RETRY_MAX, _s("periodic_retry_max")),
    (
        "backoff.FIRST_RESTART_UPPER_BOUND",
        backoff.FIRST_RESTART_UPPER_BOUND,
        _s("first_restart_upper_bound"),
    ),
    ("verdict.CLOCK_ROUNDING", verdict.CLOCK_ROUNDING, _s("clock_rounding")),
    ("verdict.RESET_LEAD", verdict.RESET_LEAD, _s("reset_lead")),
    ("verdict.CONFIRM_FROM", verdict.CONFIRM_FROM, _s("confirm_from")),
    ("verdict.API_ROUNDING", verdict.API_ROUNDING, _s("api_rounding")),
    ("verdict.SELF_REPORT_SLACK", verdict.SELF_REPORT_SLACK, _s("self_report_max")),
    ("recorder.UNOBSERVED_GAP", recorder.UNOBSERVED_GAP, BOUNDS["unobserved_gap"].value),
    ("apirecorder.WATCH_SLACK_S", apirecorder.WATCH_SLACK_S, BOUNDS["watch_slack"].value),
    (
        "e2e AGREEMENT_START_MEDIAN_MS",
        existing_cluster.AGREEMENT_START_MEDIAN_MS,
        BOUNDS["agreement_start_median"].value,
    ),
    (
        "e2e AGREEMENT_FINISH_MEDIAN_MS",
        existing_cluster.AGREEMENT_FINISH_MEDIAN_MS,
        BOUNDS["agreement_finish_median"].value,
    ),
    ("e2e AGREEMENT_MAX_MS", existing_cluster.AGREEMENT_MAX_MS, BOUNDS["self_report_max"].value),
    ("e2e KILLED_LAG_MAX_MS", existing_cluster.KILLED_LAG_MAX_MS, BOUNDS["killed_lag_max"].value),
]


@pytest.mark.parametrize(
    ("where", "constant", "in_table"), CONSTANTS, ids=[c[0] for c in CONSTANTS]
)
def test_each_constant_is_its_table_entry(
    where: str, constant: float | timedelta, in_table: float | timedelta
) -> None:
    assert constant == in_table, where


def test_the_bounds_derived_from_another_keep_to_it() -> None:
    heartbeat_ms = HEARTBEAT_NS / 1_000_000
    assert BOUNDS["agreement_start_median"].as_ms() == heartbeat_ms
    assert BOUNDS["agreement_finish_median"].as_ms() == heartbeat_ms / 2
    assert BOUNDS["killed_lag_max"].as_ms() > heartbeat_ms
    assert BOUNDS["self_report_max"].as_seconds() == BOUNDS["restart_overhead"].as_seconds() / 3


def test_units_convert_and_a_fraction_is_no_duration() -> None:
    assert BOUNDS["self_report_max"].as_seconds() == 0.5
    assert BOUNDS["restart_overhead"].as_ms() == 1500.0
    assert BOUNDS["reported_level_epsilon"].as_seconds() == 1e-6
    assert BOUNDS["requeue_fraction"].shown() == "0.5"
    assert BOUNDS["killed_lag_max"].shown() == "250 ms"
    with pytest.raises(ValueError, match="not a duration"):
        BOUNDS["requeue_fraction"].as_timedelta()
    with pytest.raises(ValueError, match="not a fraction"):
        BOUNDS["requeue_cap"].as_fraction()


def test_the_table_imports_nothing_beyond_the_standard_library_and_core() -> None:
    tree = ast.parse(Path(bounds.__file__).read_text(encoding="utf-8"))
    imported = [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    ] + [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    outside = [
        name
        for name in imported
        if name.split(".")[0] not in sys.stdlib_module_names
        and name != "__future__"
        and not (name == "crashloop_harness.core" or name.startswith("crashloop_harness.core."))
    ]
    assert outside == []


def test_a_summary_carries_the_table_it_was_judged_with_and_reads_it_back(tmp_path: Path) -> None:
    summary = failing_summary()
    assert [b.name for b in summary.bounds] == list(BOUNDS)
    raw = json.loads(write_summary(tmp_path, summary).read_text(encoding="utf-8"))
    written = {b["name"]: b for b in raw["bounds"]}
    assert written["restart_overhead"] == {
        "name": "restart_overhead",
        "value": 1.5,
        "unit": "s",
        "source_kind": "kubelet-source",
        "source": BOUNDS["restart_overhead"].source,
    }
    assert read_summary(tmp_path) == summary


def test_a_summary_keeps_the_bounds_it_was_written_with(tmp_path: Path) -> None:
    older = (
        JudgedBound(name="restart_overhead", value=1.0, unit="s", source_kind="design", source="x"),
    )
    summary = dataclasses.replace(failing_summary(), bounds=older)
    assert read_summary(write_summary(tmp_path, summary)).bounds == older


def test_a_summary_written_before_the_bounds_were_carried_still_reads(tmp_path: Path) -> None:
    raw = failing_summary().to_dict()
    del raw["bounds"]
    (tmp_path / SUMMARY_FILE).write_text(json.dumps(raw), encoding="utf-8")
    assert read_summary(tmp_path).bounds == ()
