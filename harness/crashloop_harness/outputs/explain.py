"""One line a human reads first on a CI failure page: what a run's failure means.

:func:`explain` takes a run's summary and says in words what went wrong, the
most telling problem first; the CLI prints it under a run that did not pass.
Each failure's meaning comes from the rule that failed (its code, kept in the
summary beside the words), never read back out of the words.
"""

from __future__ import annotations

from crashloop_harness.outputs.summary import RunSummary, WorkerSummary
from crashloop_harness.verdict import Failure, RestartCheck
from crashloop_harness.verdict.failures import OTHER

_RUN_HEADLINES = {
    "interrupted": "the run was interrupted before every worker was observed",
    "error": "the run ended in an error, not a verdict",
    "failed": "the run judged nothing",
}


def explain(summary: RunSummary) -> str:
    """A short line saying what a run's failure means, for a terminal or a CI page. Pure."""
    if summary.passed:
        return f"{summary.run_id}: passed: every worker restarted on its curve"
    explained = [line for worker in summary.workers for line in _worker_lines(worker)]
    explained += [m.message for m in summary.metrics if not m.passed]
    if summary.status in ("interrupted", "error"):
        # The cause before its symptoms: a stopped kubelet, an interruption.
        headline = _RUN_HEADLINES[summary.status]
        explained.insert(0, f"{headline}: {summary.reason or 'no reason given'}")
    if not explained:
        return f"{summary.run_id}: {summary.status}: nothing was judged"
    return _with_more(explained[0], len(explained) - 1)


def _worker_lines(worker: WorkerSummary) -> list[str]:
    """One line per failure of a worker, in the verdict's order: problems, then restarts."""
    if worker.problem_failures or any(c.failures for c in worker.checks):
        lines = [_problem_line(worker.worker, p) for p in worker.problem_failures]
        return lines + [_restart_line(worker.worker, c) for c in worker.checks if not c.passed]
    # A summary written before failures were kept as values: its codes, beside the words.
    codes = worker.failure_codes or (OTHER,) * len(worker.failures)
    return [
        _with_meaning(words, Failure(code, words).meaning)
        for words, code in zip(worker.failures, codes, strict=False)
    ]


def _problem_line(worker: str, problem: Failure) -> str:
    meaning = problem.meaning
    return f"{worker}: {meaning}" if meaning else problem.words


def _restart_line(worker: str, check: RestartCheck) -> str:
    measured = "not measured" if check.measured_s is None else f"measured {check.measured_s:.1f}s"
    meaning = check.failures[0].meaning if check.failures else None
    return (
        f"{worker}: restart {check.n} {measured}, allowed "
        f"{check.expected_s:.1f}..{check.upper_bound_s:.1f}s: {meaning or check.reason}"
    )


def _with_meaning(words: str, meaning: str | None) -> str:
    return f"{words}: {meaning}" if meaning else words


def _with_more(line: str, more: int) -> str:
    if more <= 0:
        return line
    return f"{line} (and {more} more failure{'s' if more > 1 else ''})"
