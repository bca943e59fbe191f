"""Failures as values: each carries its rule's code, the restart it concerns and its numbers,
set where the rule is checked, so nothing downstream reads them back out of the words."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

import pytest

from crashloop_harness.outputs.explain import explain
from crashloop_harness.outputs.junit import case_name, junit_bytes
from crashloop_harness.verdict import Failure, Observation, Rule, judge_worker
from crashloop_harness.verdict.failures import OTHER, rule_codes
from tests.unit.factories import FAST, NS, attempts, make_summary, nominal


def test_a_late_restart_is_too_late_with_its_restart_and_numbers() -> None:
    delays = nominal(FAST, 4)
    delays[2] = 9.0
    verdict = judge_worker(attempts(delays), FAST)
    (late,) = [c for c in verdict.checks if not c.passed]
    assert late.code == "too-late"
    (failure,) = verdict.failures
    assert (failure.code, failure.restart) == ("too-late", 3)
    assert failure.numbers["measured_s"] == pytest.approx(9.0, abs=0.01)
    assert failure.numbers["upper_bound_s"] < 9.0
    assert failure.words.startswith("fast-1: restart 3: expected 2s")
    assert "later than its backoff allows" in (failure.meaning or "")


def test_an_early_restart_is_too_early() -> None:
    delays = nominal(FAST, 4)
    delays[3] = 0.5
    (failure,) = judge_worker(attempts(delays), FAST).failures
    assert (failure.code, failure.restart) == ("too-early", 4)


def test_an_overdue_restart_names_its_restart_and_how_far_past_its_bound() -> None:
    records = attempts(nominal(FAST, 4))
    finished = records[-1].finished_at_ns
    assert finished is not None
    past = Observation(now_ns=finished + 4_500_000_000 + 2 * NS)
    (problem,) = judge_worker(records, FAST, observation=past).problems
    assert (problem.code, problem.restart, problem.error) == ("overdue", 5, False)
    assert problem.numbers["past_bound_s"] == pytest.approx(2.0)
    assert case_name(problem) == "restart-5-overdue"


def test_nothing_recorded_and_an_incomplete_observation_have_their_codes() -> None:
    assert [p.code for p in judge_worker([], FAST).problems] == ["no-attempt"]
    short = judge_worker(
        attempts(nominal(FAST, 2)), FAST, observation=Observation(required_restarts=5)
    )
    (problem,) = short.problems
    assert (problem.code, problem.restart) == ("incomplete", 3)
    assert problem.numbers == {"required": 5, "seen": 2}
    # Its restart is the one it waited for, not one it judged: its case is the rule's own.
    assert not problem.names_restart
    assert case_name(problem) == "incomplete"


def test_a_rule_s_code_is_its_own() -> None:
    with pytest.raises(ValueError, match="two rules share the code 'too-late'"):
        Rule("too-late", "another meaning")
    assert {"too-late", "overdue", "cap-median", "node-too-slow", OTHER} <= rule_codes()


def test_a_worker_level_failure_is_a_case_named_after_its_rule() -> None:
    assert case_name(Failure("levels-unconfirmed", "levels unconfirmed: ...")) == (
        "levels-unconfirmed"
    )
    assert case_name(Failure("pending-level", "restart 6 (pending): ...", 6)) == (
        "restart-6-pending-level"
    )
    assert case_name(Failure(OTHER, "an unknown rule's words")) == "worker-check"
    assert Failure(OTHER, "x").meaning is None


def test_a_rule_added_in_one_module_reaches_junit_and_the_explained_line() -> None:
    """status-unreadable, added with failures as values: its Rule and its check are in
    verdict/apicheck.py alone; JUnit's type and the line under the run come from its code."""
    records = attempts(nominal(FAST, 3))
    records[1] = dataclasses.replace(records[1], api_started_at="not a time")
    verdict = judge_worker(records, FAST, worker="fast", node="n1")
    (problem,) = verdict.problems
    assert (problem.code, problem.restart) == ("status-unreadable", 1)
    summary = make_summary(verdict)
    suite = ET.fromstring(junit_bytes(summary)).find("testsuite")
    assert suite is not None
    (failure,) = suite.findall("testcase[@name='status-unreadable']/failure")
    assert failure.get("type") == "status-unreadable"
    assert explain(summary).startswith("fast: a time in the pod status could not be read")
