"""A group's verdict from its checks: an outlier is not a group, and a group is not one node.

A group is checked on a few of its nodes (:mod:`crashloop_harness.fleet.plan`).
When some of them fail while others pass, the failure may be the node's (a
broken disk, a swapped binary) rather than the curve's: the group is checked
again on up to as many of its other nodes before anything is believed. Then

- every checked node that failed, failed alone: "node N: failed (others in its
  group sound)"; the group's curve is sound, the node is its outlier;
- more than one round saw failures, or every checked node failed: "group G:
  failed (m of n nodes)" (a single node checked alone is re-run first: one
  node never condemns its group);
- a node that could not be judged (its kubelet stopped, the API went) is an
  error, never a pass; a group with an error and no failure is in error, and so
  is a group whose one failing node's re-run judged no other node.

Pure: each round comes in as a :class:`Round`, read from a check's summary by
:func:`round_of`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from crashloop_harness.model.subject import is_bare
from crashloop_harness.outputs.summary import RunSummary, WorkerSummary

NodeOutcome = Literal["passed", "failed", "error"]
GroupVerdict = Literal["passed", "outlier", "failed", "error"]


@dataclass(frozen=True)
class Round:
    """One check of some of a group's nodes: its run and what each node came to."""

    nodes: tuple[str, ...]  # the nodes asked for, in the plan's order
    run_id: str  # "" when the check could not start (its reason says why)
    run_dir: str
    status: str  # the check's own status: passed, failed, error, interrupted ...
    reason: str
    outcomes: Mapping[str, NodeOutcome] = field(default_factory=dict)

    def outcome(self, node: str) -> NodeOutcome:
        """A node the check has no verdict for was not judged: an error, never a pass."""
        return self.outcomes.get(node, "error")

    def with_outcome(self, wanted: NodeOutcome) -> tuple[str, ...]:
        return tuple(node for node in self.nodes if self.outcome(node) == wanted)


def worker_outcome(
    worker: WorkerSummary, run_status: str, stopped: Mapping[str, str]
) -> NodeOutcome:
    """What one node came to in its check.

    A pass counts only from a check that ended judged (passed or failed): a run
    cut short judged no completeness, so its passing nodes earned nothing. In
    such a run only a restart measured off its window is the kubelet's failure;
    what it did not get to see (no attempt recorded, a restart still to come)
    is the cut's, an error. Otherwise a failure stands, unless the node's
    kubelet stopped or every failure is the node's or the host's (an error).
    """
    if worker.node in stopped:
        return "error"
    judged = run_status in ("passed", "failed")
    if worker.passed:
        return "passed" if judged else "error"
    measured_off = [c for c in worker.checks if not c.passed and not c.error]
    problems = [p for p in worker.problem_failures if not p.error] if judged else []
    return "failed" if measured_off or problems else "error"


def round_of(nodes: Sequence[str], summary: RunSummary, run_dir: str) -> Round:
    """A round read from the check's summary: each node's outcome."""
    outcomes = {
        w.node: worker_outcome(w, summary.status, summary.stopped_kubelets)
        for w in summary.workers
        # A variant beside a worker is its node's too.
        if is_bare(w.worker)
    }
    for w in summary.workers:
        if not is_bare(w.worker) and w.node in outcomes:
            variant = worker_outcome(w, summary.status, summary.stopped_kubelets)
            outcomes[w.node] = _worse(outcomes[w.node], variant)
    return Round(tuple(nodes), summary.run_id, run_dir, summary.status, summary.reason, outcomes)


def unstarted_round(nodes: Sequence[str], reason: str) -> Round:
    """A check that raised before it wrote a summary: every node an error, with the reason."""
    return Round(tuple(nodes), "", "", "error", reason)


def _worse(a: NodeOutcome, b: NodeOutcome) -> NodeOutcome:
    order: tuple[NodeOutcome, ...] = ("passed", "error", "failed")
    return max(a, b, key=order.index)


def suspects(first: Round) -> tuple[str, ...]:
    """The nodes to doubt: failed while another node of the group passed, or the one node
    checked failed (one node alone never condemns its group). Empty when the group needs no
    second round: none failed, or two or more failed and none passed (they agree)."""
    failed, passed = first.with_outcome("failed"), first.with_outcome("passed")
    return failed if failed and (passed or len(failed) == 1) else ()


@dataclass(frozen=True)
class GroupJudgement:
    verdict: GroupVerdict
    words: str  # one line a reader acts on
    outliers: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    checked: tuple[str, ...] = ()


def judge_group(label: str, rounds: Sequence[Round]) -> GroupJudgement:
    """The group's verdict from its first round and, when it had suspects, its second."""
    if not rounds:
        return GroupJudgement("error", f"group {label}: not checked")
    seen = _Seen.of(rounds)
    if not seen.failed:
        return _without_failure(label, rounds, seen)
    first_failed = rounds[0].with_outcome("failed")
    later_failed = [node for r in rounds[1:] for node in r.with_outcome("failed")]
    # The failures are the nodes' own when the group's other nodes, the re-run's
    # included, passed: none of them failed, and at least one passed. A lone node that
    # failed with no other node to re-run on is the group's failure (1 of 1).
    if seen.passed and not later_failed:
        others = len(seen.checked) - len(first_failed)
        unconfirmed = "" if len(rounds) > 1 else "; the group has no other node to re-run on"
        words = "; ".join(
            f"node {node}: failed (others in its group sound: {len(seen.passed)} of {others} "
            f"checked passed{unconfirmed})"
            for node in first_failed
        )
        return seen.judged("outlier", words, outliers=first_failed)
    if len(seen.failed) == 1 and len(rounds) > 1:
        # One node failed alone and its re-run judged no other node: neither the node's
        # failure nor the group's is shown.
        why = _reasons(rounds[1:])
        return seen.judged(
            "error",
            f"node {seen.failed[0]}: failed, its group not judged further: its other nodes "
            f"({', '.join(seen.errors)}) could not be judged" + (f": {why}" if why else ""),
        )
    return seen.judged(
        "failed", f"group {label}: failed ({len(seen.failed)} of {len(seen.checked)} nodes)"
    )


@dataclass(frozen=True)
class _Seen:
    """Every node the group's rounds checked, by what it came to."""

    checked: tuple[str, ...]
    failed: tuple[str, ...]
    errors: tuple[str, ...]
    passed: tuple[str, ...]

    @classmethod
    def of(cls, rounds: Sequence[Round]) -> _Seen:
        def having(outcome: NodeOutcome) -> tuple[str, ...]:
            return tuple(node for r in rounds for node in r.with_outcome(outcome))

        checked = tuple(node for r in rounds for node in r.nodes)
        return cls(checked, having("failed"), having("error"), having("passed"))

    def judged(
        self, verdict: GroupVerdict, words: str, outliers: tuple[str, ...] = ()
    ) -> GroupJudgement:
        return GroupJudgement(verdict, words, outliers, self.failed, self.errors, self.checked)


def _reasons(rounds: Sequence[Round]) -> str:
    return "; ".join(sorted({r.reason for r in rounds if r.reason}))


def _without_failure(label: str, rounds: Sequence[Round], seen: _Seen) -> GroupJudgement:
    """No node failed: passed when every checked node passed, else in error."""
    if seen.errors:
        why = _reasons([r for r in rounds if r.with_outcome("error")])
        return seen.judged(
            "error",
            f"group {label}: {len(seen.errors)} of {len(seen.checked)} nodes could not be "
            f"judged ({', '.join(seen.errors)})" + (f": {why}" if why else ""),
        )
    return seen.judged(
        "passed", f"group {label}: passed ({len(seen.passed)} of {len(seen.checked)} nodes)"
    )
