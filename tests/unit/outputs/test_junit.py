"""JUnit XML for a run (crashloop_harness.outputs.junit)."""

from __future__ import annotations

import dataclasses
import os
import xml.etree.ElementTree as ET
from pathlib import Path

from crashloop_harness.outputs.junit import JUNIT_FILE, junit_bytes, write_junit
from crashloop_harness.outputs.summary import RunSummary
from crashloop_harness.outputs.summaryfile import read_summary, write_summary
from crashloop_harness.verdict import Failure
from tests.unit.factories import (
    default_verdict,
    empty_verdict,
    failing_summary,
    fast_verdict,
    make_summary,
    passing_summary,
    scenario_metric,
    scenario_summary,
)


def suite_of(summary: RunSummary) -> ET.Element:
    root = ET.fromstring(junit_bytes(summary))
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    # The root repeats the suite's counts for tools that read only the root.
    for key in ("tests", "failures", "errors", "skipped"):
        assert root.get(key) == suite.get(key)
    return suite


def properties(suite: ET.Element) -> dict[str, str]:
    return {p.get("name", ""): p.get("value", "") for p in suite.iter("property")}


def test_a_passing_run_has_one_case_per_restart_and_no_failure() -> None:
    suite = suite_of(passing_summary())
    assert suite.get("name") == "crashloop-conformance"
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [f"restart-{n}" for n in range(1, 6)]
    assert {c.get("classname") for c in cases} == {"conformance.fast"}
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("5", "0", "0")
    assert suite.findall(".//failure") == []
    assert cases[2].get("time") == "2.413"
    assert suite.get("time") == "200.250"
    assert suite.get("timestamp") == "2026-01-01T10:00:00.000Z"


def test_failures_name_worker_restart_expected_measured_and_bound() -> None:
    suite = suite_of(failing_summary())
    # fast 5 restarts, default 3, reduced 1 problem case
    assert suite.get("tests") == "9"
    assert suite.get("failures") == "2"
    failures = suite.findall("testcase/failure")
    assert len(failures) == 2
    restart = next(c for c in suite.iter("testcase") if c.find("failure") is not None)
    assert (restart.get("classname"), restart.get("name")) == ("conformance.default", "restart-3")
    message = failures[0].get("message", "")
    # The verdict's own words for the failure, as the table and summary.json give them.
    assert message == summary_failure(failing_summary(), "default")
    assert message.startswith(
        "default: restart 3: expected 20s (accepting up to 31.5s), measured 35.000s:"
    )
    assert "too late" in message
    assert "margin:    +15.000s" in (failures[0].text or "")
    problem = failures[1]
    assert (
        problem.get("message")
        == "reduced: no container attempt was recorded: the pod never ran its container"
    )
    problem_case = suite.findall("testcase")[-1]
    assert (problem_case.get("classname"), problem_case.get("name")) == (
        "conformance.reduced",
        "no-attempt",
    )


def test_properties_carry_the_live_config() -> None:
    props = properties(suite_of(failing_summary()))
    assert props["kind"] == "conformance"
    assert props["status"] == "failed"
    assert props["cluster.node_image"] == "kindest/node:v1.35.0"
    assert props["fast.maxContainerRestartPeriod"] == "2s"
    assert props["fast.featureGates.KubeletCrashLoopBackOffMax"] == "true"
    assert props["reduced.featureGates.ReduceDefaultCrashLoopBackOffDecay"] == "true"
    assert (props["default.initial_s"], props["default.max_s"]) == ("10", "300")
    assert props["fast.overshoot_max_s"] == "0.500"


def test_an_interrupted_run_is_an_error_case() -> None:
    summary = make_summary(
        fast_verdict(),
        default_verdict(),
        empty_verdict(),
        outcome="interrupted",
        reason="SIGINT during restart 4",
    )
    suite = suite_of(summary)
    assert suite.get("errors") == "1"
    (error,) = suite.findall("testcase/error")
    assert error.get("message") == "run interrupted: SIGINT during restart 4"
    assert error.get("type") == "interrupted"
    assert "10 container attempts were recorded" in (error.text or "")
    # What it did measure is still reported.
    assert suite.get("failures") == "2"


def test_a_run_that_judged_nothing_fails_in_junit_too() -> None:
    suite = suite_of(make_summary())
    (failure,) = suite.findall("testcase/failure")
    assert failure.get("message") == "run failed: no worker was judged"


def test_a_worker_without_restarts_is_skipped_not_absent() -> None:
    verdict = dataclasses.replace(empty_verdict(), problems=())
    suite = suite_of(make_summary(verdict))
    (case,) = suite.findall("testcase")
    assert case.get("classname") == "conformance.reduced"
    assert case.find("skipped") is not None
    assert suite.get("skipped") == "1"


def test_control_characters_in_messages_still_make_valid_xml() -> None:
    summary = failing_summary()
    worker = summary.workers[1]
    bad = dataclasses.replace(worker.checks[2], reason="kubelet said \x1b[31mno\x00")
    worker = dataclasses.replace(worker, checks=(*worker.checks[:2], bad))
    summary = dataclasses.replace(summary, workers=(summary.workers[0], worker))
    (failure,) = suite_of(summary).findall("testcase/failure")
    assert failure.get("message", "").endswith("kubelet said \ufffd[31mno\ufffd")


def test_write_junit_is_atomic_and_parses(tmp_path: Path) -> None:
    path = write_junit(tmp_path, failing_summary())
    assert path == tmp_path / JUNIT_FILE
    assert os.listdir(tmp_path) == [JUNIT_FILE]
    assert path.read_bytes().startswith(b"<?xml version='1.0' encoding='utf-8'?>")
    suite = ET.parse(path).getroot().find("testsuite")
    assert suite is not None
    assert suite.get("failures") == "2"


def test_a_scenario_suite_is_named_after_it() -> None:
    suite = suite_of(make_summary(fast_verdict(), kind="scenario:sidecar"))
    assert suite.get("name") == "crashloop-scenario:sidecar"
    assert suite.find("testcase") is not None
    assert {c.get("classname") for c in suite.iter("testcase")} == {"scenario:sidecar.fast"}


def test_every_scenario_metric_is_a_case_and_a_failed_one_a_failure() -> None:
    summary = scenario_summary(scenario_metric(True), scenario_metric(False, "default"))
    suite = suite_of(summary)
    cases = suite.findall("testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("scenario:fast-restart.fast", "time_to_ready_s"),
        ("scenario:fast-restart.default", "time_to_ready_s"),
    ]
    (failure,) = suite.findall("testcase/failure")
    assert failure.get("message") == "fast-restart default: time_to_ready_s: measured ..."
    assert suite.get("failures") == "1"


def test_a_restart_late_across_a_frozen_node_is_an_error_case_and_round_trips(
    tmp_path: Path,
) -> None:
    summary = make_summary(fast_verdict())
    (fast,) = summary.workers
    frozen = dataclasses.replace(
        fast.checks[1], passed=False, error=True, reason="error: ... node frozen 12.6s ..."
    )
    checks = (fast.checks[0], frozen, *fast.checks[2:])
    summary = dataclasses.replace(
        summary, status="error", workers=(dataclasses.replace(fast, checks=checks),)
    )
    suite = suite_of(summary)
    (error,) = suite.findall("testcase[@name='restart-2']/error")
    assert "node frozen" in (error.text or "")
    assert suite.findall("testcase[@name='restart-2']/failure") == []
    write_summary(tmp_path, summary)
    assert read_summary(tmp_path).workers[0].checks[1].error


def test_a_stopped_kubelet_is_the_environments_error_named_after_what_it_judged() -> None:
    summary = failing_summary()
    default = next(w for w in summary.workers if w.worker == "default")
    stopped = f"the kubelet of node {default.node} stopped during the run (pid 812 exited)"
    overdue = (
        "default: restart 4 overdue: attempt 3 exited at 10:02:01.000 UTC, so restart 4 was "
        "due by 10:03:02.500 UTC; none by 10:05:00.000 UTC, 117.500s past its bound"
    )
    failure = Failure("overdue", overdue, restart=4)
    workers = tuple(
        dataclasses.replace(w, problem_failures=(*w.problem_failures, failure))
        if w is default
        else w
        for w in summary.workers
    )
    suite = suite_of(
        dataclasses.replace(
            summary,
            status="failed",
            reason=stopped,
            workers=workers,
            stopped_kubelets={default.node: stopped},
        )
    )
    case = next(c for c in suite.iter("testcase") if c.get("name") == "restart-4-overdue")
    assert case.get("classname") == "conformance.default"
    error = case.find("error")
    assert error is not None, "a lost kubelet is the environment's error, not a failure"
    assert (error.get("message") or "").startswith(f"{stopped}: default: restart 4 overdue")
    assert (error.text or "").startswith(f"cause: {stopped}")
    # The other workers' failures stay failures: their kubelets ran.
    reduced = next(c for c in suite.iter("testcase") if c.get("name") == "no-attempt")
    assert reduced.find("failure") is not None
    assert "1796" not in junit_bytes(dataclasses.replace(summary, reason=stopped)).decode()


def test_a_restart_set_aside_is_a_skipped_case_never_a_passed_one() -> None:
    verdict = fast_verdict()
    aside = dataclasses.replace(verdict.checks[2], set_aside="set aside: the host was saturated")
    summary = make_summary(
        dataclasses.replace(verdict, checks=(*verdict.checks[:2], aside, *verdict.checks[3:]))
    )
    suite = suite_of(summary)
    (skipped,) = suite.findall("testcase/skipped")
    assert skipped.get("message") == "set aside: the host was saturated"
    assert suite.get("skipped") == "1"
    assert [c.get("name") for c in suite.findall("testcase") if c.find("skipped") is not None] == [
        "restart-3"
    ]


def summary_failure(summary: RunSummary, worker: str) -> str:
    """The worker's first failure as summary.json words it."""
    (found,) = [w for w in summary.workers if w.worker == worker]
    return found.failures[0]
