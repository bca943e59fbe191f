"""explain(): the line under a failed run, each failure's meaning taken from its rule's code."""

from __future__ import annotations

import dataclasses

from crashloop_harness.outputs.explain import explain
from crashloop_harness.verdict import judge_worker
from tests.unit.factories import (
    FAST,
    attempts,
    expected_reports,
    failing_summary,
    fast_verdict,
    make_summary,
    passing_summary,
)


def _fast_with(delays: list[float], reported: list[float | None] | None = None) -> str:
    records = attempts(delays, reported=reported or expected_reports(FAST, len(delays)))
    return explain(make_summary(judge_worker(records, FAST, worker="fast", node="n1")))


def test_a_late_restart_is_explained_with_its_numbers_and_meaning() -> None:
    line = _fast_with([0.3, 2.3, 6.2, 2.3])
    assert line == (
        "fast: restart 3 measured 6.2s, allowed 2.0..4.5s: the kubelet restarted later than "
        "its backoff allows"
    )


def test_an_early_restart_is_explained() -> None:
    line = _fast_with([0.3, 2.3, 1.1, 2.3])
    assert line.startswith("fast: restart 3 measured 1.1s, allowed 2.0..4.5s: the kubelet ")
    assert "before its backoff had passed" in line


def test_a_reported_level_off_the_curve_is_explained() -> None:
    reported = expected_reports(FAST, 4)
    reported[1] = 10.0
    line = _fast_with([0.3, 2.3, 2.3, 2.3], reported)
    assert "announced a different back-off" in line


def test_a_failing_summary_is_explained_by_its_first_failure_and_counts_the_rest() -> None:
    line = explain(failing_summary())
    assert line.startswith("default: restart 3 measured 35.0s, allowed 20.0..31.5s")
    assert line.endswith("(and 1 more failure)")


def test_a_worker_without_records_is_explained() -> None:
    empty = judge_worker([], FAST, worker="reduced", node="n3")
    assert explain(make_summary(empty)).startswith(
        "reduced: no restart was recorded: the pod never ran"
    )


def test_a_passing_and_an_interrupted_summary_are_explained() -> None:
    assert "passed" in explain(passing_summary())
    interrupted = make_summary(fast_verdict(), outcome="interrupted", reason="SIGINT")
    assert (
        explain(interrupted) == "the run was interrupted before every worker was observed: SIGINT"
    )


def test_a_run_in_error_is_said_first_in_its_own_words() -> None:
    summary = dataclasses.replace(
        failing_summary(),
        status="error",
        reason="the kubelet of node crashloop-worker2 stopped answering",
    )
    assert explain(summary).startswith(
        "the run ended in an error, not a verdict: the kubelet of node crashloop-worker2 stopped"
    )


def test_a_summary_from_before_failures_were_values_is_explained_by_its_codes() -> None:
    """Version 3 files kept each failure's code beside its words, but no failure as a value."""
    summary = failing_summary()
    old = [
        dataclasses.replace(
            worker,
            checks=tuple(dataclasses.replace(c, failures=()) for c in worker.checks),
            problem_failures=(),
        )
        for worker in summary.workers
    ]
    line = explain(dataclasses.replace(summary, workers=tuple(old)))
    assert line.startswith("default: restart 3: expected 20s")
    assert line.endswith("the kubelet restarted later than its backoff allows (and 1 more failure)")
