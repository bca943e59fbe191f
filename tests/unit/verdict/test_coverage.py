"""What a verdict covered of the kubelet's rules: every rule covered or said not to be."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.model.releases import EVERY_10_15S
from crashloop_harness.outputs.junit import write_junit
from crashloop_harness.outputs.summaryfile import read_summary, write_summary
from crashloop_harness.verdict import WorkerVerdict, judge_worker
from crashloop_harness.verdict.coverage import (
    RULES,
    RuleCoverage,
    coverage_of,
    curve_levels,
    uncovered,
)
from tests.unit.factories import (
    DEFAULT,
    FAST,
    REDUCED,
    attempts,
    expected_reports,
    make_summary,
)


def _verdict(
    curve: BackoffCurve, restarts: int, *, runs_s: float = 0.05, seen: bool = True
) -> WorkerVerdict:
    delays = [0.8] + [
        curve.delay_before_restart(n).total_seconds() + 0.6 for n in range(2, restarts + 1)
    ]
    reported = expected_reports(curve, restarts) if seen else None
    records = attempts(delays, runs_s=[runs_s] * (restarts + 1), reported=reported)
    return judge_worker(records, curve, worker="w", node="n")


def _by_rule(found: Sequence[RuleCoverage]) -> dict[str, RuleCoverage]:
    return {r.rule: r for r in found}


def test_every_rule_is_named_once_covered_or_not() -> None:
    found = coverage_of("w", {"w": _verdict(FAST, 10)}, FAST)
    assert [r.rule for r in found] == list(RULES)


def test_a_quick_reach_of_the_default_curve_names_the_levels_it_never_saw() -> None:
    # Quick goes up to the 80s level: restart 5.
    rules = _by_rule(coverage_of("w", {"w": _verdict(DEFAULT, 5)}, DEFAULT))
    assert not rules["levels"].covered
    assert rules["levels"].detail == "reached 10s, 20s, 40s, 1m20s; not reached: 2m40s, 5m"
    assert not rules["cap"].covered
    assert not rules["cap-median"].covered
    assert rules["restart-1"].covered
    assert rules["levels-confirmed"].covered


def test_the_fast_curve_at_its_cap_ten_times_covers_its_levels_and_median() -> None:
    rules = _by_rule(coverage_of("w", {"w": _verdict(FAST, 10)}, FAST))
    assert rules["levels"].covered
    assert rules["cap"].covered
    assert rules["cap-median"].covered
    # A count-from-exit probe and a reset were not run beside it: said so.
    assert not rules["count-from-exit"].covered
    assert rules["count-from-exit"].detail == "not run beside this worker by this profile"
    assert not rules["reset"].covered


def test_levels_not_seen_are_not_covered() -> None:
    rules = _by_rule(coverage_of("w", {"w": _verdict(FAST, 10, seen=False)}, FAST))
    assert not rules["levels-confirmed"].covered
    assert "seen before 0 of 9 restarts" in rules["levels-confirmed"].detail


def test_count_from_exit_is_covered_only_by_a_variant_that_waited() -> None:
    bare = _verdict(REDUCED, 7)
    probed = _verdict(REDUCED, 4, runs_s=5.0)
    rules = _by_rule(coverage_of("w", {"w": bare, "w/runs-5s": probed}, REDUCED))
    assert rules["count-from-exit"].covered
    assert rules["count-from-exit"].detail == "probed by w/runs-5s"
    only_restart_1 = _verdict(REDUCED, 1, runs_s=5.0)
    rules = _by_rule(coverage_of("w", {"w": bare, "w/runs-5s": only_restart_1}, REDUCED))
    assert not rules["count-from-exit"].covered
    assert "never waited a back-off" in rules["count-from-exit"].detail


def test_a_periodic_kubelet_s_cap_median_is_not_judged() -> None:
    periodic = dataclasses.replace(FAST, requeue=EVERY_10_15S)
    rules = _by_rule(coverage_of("w", {"w": _verdict(periodic, 10)}, periodic))
    assert not rules["cap-median"].covered
    assert "retries on a period" in rules["cap-median"].detail


def test_curve_levels_run_from_restart_2_to_the_cap() -> None:
    assert [lv.total_seconds() for lv in curve_levels(REDUCED)] == [1, 2, 4, 8, 16, 32, 60]


def test_the_summary_junit_and_the_pass_line_carry_what_was_not_covered(tmp_path: Path) -> None:
    verdict = _verdict(DEFAULT, 5)
    verdict = dataclasses.replace(verdict, worker="default")
    found = coverage_of("default", {"default": verdict}, DEFAULT)
    summary = make_summary(verdict, coverage={"default": found})
    write_summary(tmp_path, summary)
    again = read_summary(tmp_path)
    (worker,) = again.workers
    assert worker.coverage == found
    assert {r.rule for r in worker.not_covered} == {
        "levels",
        "cap",
        "cap-median",
        "count-from-exit",
        "reset",
        "next-level",
        "created-at",
    }
    write_junit(tmp_path, again)
    props = {
        p.get("name"): p.get("value", "") for p in ET.parse(tmp_path / "junit.xml").iter("property")
    }
    assert props["default.coverage.levels"].startswith("not covered: reached 10s")
    assert props["default.coverage.restart-1"].startswith("covered: ")
    (line,) = uncovered({w.worker: w.coverage for w in again.workers})
    assert line.startswith("default: levels (reached 10s, 20s, 40s, 1m20s; not reached: 2m40s, 5m)")


def test_the_next_level_is_covered_only_when_the_kubelet_posted_it() -> None:
    verdict = _verdict(DEFAULT, 5)
    ended = _by_rule(coverage_of("w", {"w": verdict}, DEFAULT))["next-level"]
    assert not ended.covered
    assert ended.detail == "the run ended before the kubelet posted the level of restart 6"
    posted = _by_rule(coverage_of("w", {"w": verdict}, DEFAULT, pending=(6, 160.0)))
    assert posted["next-level"].covered
    assert posted["next-level"].detail == "the kubelet posted 160s for restart 6"


def test_delays_without_a_creation_time_say_too_early_is_weaker() -> None:
    started_only = _verdict(FAST, 4)
    rule = _by_rule(coverage_of("w", {"w": started_only}, FAST))["created-at"]
    assert not rule.covered
    assert rule.detail.startswith("3 delay(s) ran to the container's start")
    created = [
        dataclasses.replace(r, created_at_ns=r.started_at_ns - 300_000_000)
        for r in attempts([0.8, 2.6, 2.6, 2.6], reported=expected_reports(FAST, 4))
    ]
    with_creation = judge_worker(created, FAST, worker="w", node="n")
    assert _by_rule(coverage_of("w", {"w": with_creation}, FAST))["created-at"].covered


def test_a_restart_set_aside_covers_nothing_and_says_why() -> None:
    verdict = _verdict(FAST, 10)
    first = dataclasses.replace(verdict.checks[0], set_aside="set aside: the host was saturated")
    aside = dataclasses.replace(verdict, checks=(first, *verdict.checks[1:]))
    rules = _by_rule(coverage_of("w", {"w": aside}, FAST))
    assert not rules["restart-1"].covered
    assert rules["restart-1"].detail == "restart 1 set aside: the host was saturated"
    # The same run with restart 1 judged covers it.
    assert _by_rule(coverage_of("w", {"w": verdict}, FAST))["restart-1"].covered
