"""The check's summary as the terminal shows it: whole at 80 columns piped and at 100."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest

from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.outputs.summary import RestartCost, RunSummary, WorkerSummary
from crashloop_harness.outputs.summaryview import cost_text, summary_view
from crashloop_harness.recording.pace import POD_BURST
from crashloop_harness.verdict import Observation, WorkerVerdict, judge_worker
from crashloop_harness.verdict.coverage import coverage_of
from crashloop_harness.verdict.nodecost import NodeCost, node_costs
from tests.unit.factories import (
    DEFAULT,
    DEFAULT_DELAYS,
    FAST,
    FAST_DELAYS,
    attempts,
    expected_reports,
    failing_summary,
    fast_verdict,
    make_summary,
)
from tests.unit.narrowtext import WIDTHS, not_whole, rendered, too_wide_or_cut

# An existing cluster's nodes, as `crashloop check --kubeconfig` names its workers.
NODES = ("plain-worker", "plain-worker2")
# A cloud's node name: with a variant's suffix, too long for the table at 80 or 100 columns.
CLOUD_NODE = "ip-10-0-12-34.eu-west-1.compute.internal"


def _judged(node: str, subject: str, curve: BackoffCurve, delays: Sequence[float]) -> WorkerVerdict:
    records = attempts(delays, reported=expected_reports(curve, len(delays)))
    verdict = judge_worker(records, curve, worker=subject, node=node)
    # What a restart cost the node, as the run measured it (about 1.4x the reference host).
    cost = NodeCost(node=node, start_latencies_s=(0.67,) * 20, first_restarts_s=(0.93,) * 9)
    return dataclasses.replace(verdict, cost=cost)


def existing_cluster_summary(nodes: Sequence[str] = NODES) -> RunSummary:
    """A quick check through a kubeconfig: each node a worker with runs-5s beside it, the
    first on the fast curve and passing, the second on the default curve, late at restart 3."""
    verdicts: dict[str, WorkerVerdict] = {}
    curves = dict(zip(nodes, (FAST, DEFAULT), strict=True))
    for node, delays in zip(nodes, (FAST_DELAYS, DEFAULT_DELAYS), strict=True):
        for subject in (node, f"{node}/runs-5s"):
            verdicts[subject] = _judged(node, subject, curves[node], delays)
    coverage = {node: coverage_of(node, verdicts, curves[node]) for node in nodes}
    return make_summary(
        *verdicts.values(),
        profile="quick",
        configs=(),
        attempts_recorded=dict.fromkeys(verdicts, 6),
        coverage=coverage,
    )


def _row(worker: WorkerSummary) -> list[str]:
    """A worker's cells as the table shows them."""
    cost = worker.restart_cost
    assert cost is not None
    return [
        worker.worker,
        str(len(worker.checks)),
        f"{worker.overshoot_median_s:+.3f}s",
        f"{worker.overshoot_max_s:+.3f}s",
        "PASS" if worker.passed else "ERROR" if worker.in_error else "FAIL",
        f"{cost.slowdown:.2f}x",
    ]


def _numbers(summary: RunSummary) -> list[str]:
    """Every number with its unit the summary shows: overshoots, slowdowns, each node's cost."""
    tokens = [cell for worker in summary.workers for cell in _row(worker)[2:4]]
    for worker in summary.workers:
        cost = worker.restart_cost
        assert cost is not None
        tokens += [f"{cost.slowdown:.2f}x", f"+{cost.after_requeue_s:.2f}s"]
        tokens += [f"{cost.first_restart_bound_s:.2f}s", f"{cost.first_restart_median_s:.2f}s"]
    return tokens


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("nodes", [NODES, (CLOUD_NODE, f"{CLOUD_NODE}-2")])
def test_every_node_rule_and_number_reads_whole(width: int, nodes: tuple[str, str]) -> None:
    summary = existing_cluster_summary(nodes)
    lines = rendered(summary_view(summary), width)
    assert too_wide_or_cut(lines, width) == []
    names = [w.worker for w in summary.workers]
    assert len(names) == 4
    assert not_whole(names, lines) == []
    rules = [r.rule for w in summary.workers for r in w.not_covered]
    assert {"next-level", "cap-median", "reset"} <= set(rules)
    assert not_whole(rules, lines) == []
    assert not_whole(_numbers(summary), lines) == []
    # Each worker's rules stay with its name.
    words = " ".join(" ".join(lines).split())
    for worker in summary.workers:
        if worker.not_covered:
            assert f"{worker.worker}: {', '.join(r.rule for r in worker.not_covered)}" in words


@pytest.mark.parametrize("width", WIDTHS)
def test_an_existing_cluster_s_nodes_get_a_row_each_that_tells_them_apart(width: int) -> None:
    summary = existing_cluster_summary()
    lines = rendered(summary_view(summary), width)
    for worker in summary.workers:
        assert _row(worker) in [line.split() for line in lines], worker.worker
    passed = {w.worker for w in summary.workers if w.passed}
    assert passed == {"plain-worker", "plain-worker/runs-5s"}


def test_names_too_long_for_the_table_become_a_line_per_worker() -> None:
    summary = existing_cluster_summary((CLOUD_NODE, f"{CLOUD_NODE}-2"))
    words = " ".join(" ".join(rendered(summary_view(summary), 80)).split())
    for worker in summary.workers:
        name, restarts, median, most, verdict, slowdown = _row(worker)
        line = f"{name}: {verdict}; restarts {restarts}, median {median}, max {most}"
        assert f"{line}, slowdown {slowdown}" in words


def test_the_summary_has_a_row_per_worker_and_says_why_it_failed() -> None:
    lines = rendered(summary_view(failing_summary()), 80)
    assert lines[0] == "conformance (quick): FAILED"
    assert lines[1].split() == ["worker", "restarts", "median", "max", "verdict"]
    rows = [line.split() for line in lines]
    assert ["fast", "5", "+0.362s", "+0.500s", "PASS"] in rows
    assert ["default", "3", "+7.800s", "+15.000s", "FAIL"] in rows
    assert ["reduced", "0", "-", "-", "FAIL"] in rows
    # No worker has its node's cost or coverage: no column, no list for them.
    assert not any("slowdown" in line or "not covered" in line for line in lines)


def test_a_worker_whose_pod_its_node_refused_reads_error_not_fail() -> None:
    """The environment's, never the kubelet's: the table's word says so, as the run does."""
    refused = judge_worker(
        [],
        FAST,
        worker="tainted",
        node="crashloop-worker2",
        observation=Observation(
            required_restarts=3, not_running="the node refused the pod: TaintToleration"
        ),
    )
    assert refused.in_error
    summary = make_summary(fast_verdict(), refused)
    rows = [line.split() for line in rendered(summary_view(summary), 80)]
    verdicts = {row[0]: row[-1] for row in rows if row and row[0] in ("tainted", "fast")}
    assert verdicts == {"tainted": "ERROR", "fast": "PASS"}


def test_a_profile_column_only_where_it_says_more_than_the_worker_s_name() -> None:
    named = make_summary(fast_verdict())  # worker fast, profile fast
    assert rendered(summary_view(named), 80)[1].split()[:2] == ["worker", "restarts"]
    renamed = dataclasses.replace(
        named, workers=(dataclasses.replace(named.workers[0], worker="w1"),)
    )
    lines = rendered(summary_view(renamed), 80)
    assert lines[1].split()[:3] == ["worker", "profile", "restarts"]
    assert lines[3].split()[:3] == ["w1", "fast", "5"]


def test_the_title_carries_an_interruption() -> None:
    summary = make_summary(fast_verdict(), outcome="interrupted", reason="SIGINT")
    lines = rendered(summary_view(summary), 80)
    assert lines[0] == "conformance (quick): INTERRUPTED - SIGINT"
    assert ["fast", "5", "+0.362s", "+0.500s", "PASS"] in [line.split() for line in lines]


def test_names_with_brackets_print_literally() -> None:
    summary = make_summary(dataclasses.replace(fast_verdict(), worker="[bold]w[/bold]"))
    assert "[bold]w[/bold]" in rendered(summary_view(summary), 80)[3]


def test_a_node_read_through_the_api_alone_shows_its_pod_pace_not_the_reference_s() -> None:
    (cost,) = node_costs(
        {}, {"w": "plain-worker"}, pace={"plain-worker": [0.0031] * 12}, pace_probe=POD_BURST
    ).values()
    text = cost_text(RestartCost.of(cost))
    # Twice the reference pod burst: measured, with no start of its own to show.
    assert text.startswith("2.")
    assert "(pace 3.1ms over 12 probes)" in text
    assert "; start" not in text
    assert "not measured" not in text
    assert cost_text(
        RestartCost.of(NodeCost(node="n", start_latencies_s=(), first_restarts_s=()))
    ) == ("not measured: the reference host's")
