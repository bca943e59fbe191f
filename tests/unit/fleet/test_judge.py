"""A group's verdict: an outlier node is not its group, a group is not one node."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from crashloop_harness.fleet.judge import NodeOutcome, Round, judge_group, round_of, suspects
from crashloop_harness.outputs.summaryfile import read_summary


def checked(**outcomes: NodeOutcome) -> Round:
    return Round(tuple(outcomes), "run", "runs/run", "failed", "", outcomes)


def test_all_passed_is_a_passed_group() -> None:
    judged = judge_group("one/g1", [checked(a="passed", b="passed", c="passed")])
    assert judged.verdict == "passed"
    assert judged.words == "group one/g1: passed (3 of 3 nodes)"


def test_one_failed_among_passing_nodes_is_doubted_then_its_own_when_the_rerun_passes() -> None:
    first = checked(a="passed", b="failed", c="passed")
    assert suspects(first) == ("b",)
    judged = judge_group("one/g1", [first, checked(d="passed", e="passed")])
    assert judged.verdict == "outlier"
    assert judged.outliers == ("b",)
    assert judged.words == "node b: failed (others in its group sound: 4 of 4 checked passed)"


def test_a_rerun_that_fails_too_makes_it_the_groups_failure() -> None:
    judged = judge_group(
        "one/g1", [checked(a="passed", b="failed"), checked(c="failed", d="passed")]
    )
    assert judged.verdict == "failed"
    assert judged.outliers == ()
    assert judged.words == "group one/g1: failed (2 of 4 nodes)"


def test_every_checked_node_failing_needs_no_rerun_and_fails_the_group() -> None:
    first = checked(a="failed", b="failed", c="failed")  # they agree
    assert suspects(first) == ()
    assert judge_group("one/g1", [first]).words == "group one/g1: failed (3 of 3 nodes)"


def test_a_group_with_no_other_node_says_its_outlier_was_not_rerun() -> None:
    judged = judge_group("one/g1", [checked(a="passed", b="failed")])
    assert judged.verdict == "outlier"
    assert "no other node to re-run on" in judged.words


def test_a_node_not_judged_is_an_error_never_a_pass() -> None:
    first = Round(("a", "b"), "run", "runs/run", "error", "API gone", {"a": "passed"})
    judged = judge_group("two/g1", [first])
    assert judged.verdict == "error"
    assert judged.errors == ("b",)
    assert "API gone" in judged.words


@pytest.mark.parametrize("outcome", ["error", "passed"])
def test_errors_alone_are_not_doubted_as_outliers(outcome: NodeOutcome) -> None:
    assert suspects(checked(a=outcome, b="error")) == ()


def test_no_round_is_an_error() -> None:
    assert judge_group("one/g1", []).verdict == "error"


def test_a_lone_node_failing_is_doubted_and_its_rerun_decides() -> None:
    first = checked(a="failed")
    assert suspects(first) == ("a",)
    assert judge_group("one/g1", [first, checked(b="passed")]).verdict == "outlier"
    assert judge_group("one/g1", [first, checked(b="failed")]).words == (
        "group one/g1: failed (2 of 2 nodes)"
    )
    assert judge_group("one/g1", [first]).verdict == "failed"


def test_a_lone_failure_whose_rerun_judged_nothing_is_an_error_not_the_groups_failure() -> None:
    rerun = Round(("b",), "", "", "error", "ConnectionRefused", {})
    judged = judge_group("two/g1", [checked(a="failed"), rerun])
    assert judged.verdict == "error"
    assert judged.words == (
        "node a: failed, its group not judged further: its other nodes (b) could not be "
        "judged: ConnectionRefused"
    )


KEPT = Path(__file__).parents[2] / "data" / "fleet" / "v1.35.8-fleet-api-stopped" / "summaries"


def test_what_a_run_cut_short_did_not_see_is_an_error_not_the_kubelets_failure() -> None:
    """Cluster two's check of a kept fleet: its API server stopped before any attempt was
    recorded. The run ended an error, its node with nothing recorded: not the kubelet's."""
    summary = read_summary(KEPT / "v1.35.8-fleet-api-stopped-fleet-two-g1-r1.json")
    assert summary.status == "error"
    checked = round_of(("crashloop-e2e-fleet-two-worker",), summary, "runs/r")
    assert checked.outcomes == {"crashloop-e2e-fleet-two-worker": "error"}
    # The same nothing-recorded in a run that ended judged is the node's failure.
    judged = dataclasses.replace(summary, status="failed")
    assert round_of(("crashloop-e2e-fleet-two-worker",), judged, "runs/r").outcomes == {
        "crashloop-e2e-fleet-two-worker": "failed"
    }
