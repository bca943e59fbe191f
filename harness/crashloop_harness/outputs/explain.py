"""One line a human reads first on a CI failure page: what a failure means.

:func:`explain` takes a run's summary, or the text of a failure (a verdict's
failures, a JUnit message, a pytest assertion), and says in words what went
wrong, the most telling problem first; the CLI prints it under a run that did
not pass.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from crashloop_harness.outputs.summary import RunSummary

# The two spellings of a restart failure: WorkerVerdict.failures
# ("expected 2s (accepting up to 3.5s), measured 6.200s: ...") and the JUnit
# message ("expected 2s, measured 6.200s, bound 3.5s: ..."). Worker names are
# plain words, which keeps a pytest "E   " prefix out of the name.
_RESTART: Final = re.compile(
    r"(?P<worker>[\w.-]+): restart (?P<n>\d+): expected (?P<expected>[\d.]+)s"
    r"(?: \(accepting up to (?P<bound_a>[\d.]+)s\))?, "
    r"(?:measured (?P<measured>[\d.]+)s|not measured)"
    r"(?:, bound (?P<bound_b>[\d.]+)s)?: (?P<reason>[^\n]*)"
)
_RUN: Final = re.compile(r"^run (?P<status>interrupted|error|failed)(?:: (?P<reason>.*))?$")
_NOTHING_RECORDED: Final = re.compile(r"(?P<worker>[\w.-]+): no container attempt")
_STOPPED: Final = re.compile(r"the kubelet of node \S+ stopped")


@dataclass(frozen=True)
class _Rule:
    """A reason fragment and what it means for a reader."""

    pattern: re.Pattern[str]
    meaning: str


# Checked in order against a restart failure's reason; the verdict lists its
# problems with the most telling first, so the first match is the headline.
_RESTART_RULES: Final = (
    _Rule(re.compile(r"^too late"), "the kubelet restarted later than its backoff allows"),
    _Rule(
        re.compile(r"^too early"),
        "the kubelet restarted before its backoff had passed (a shorter curve than the "
        "live config implies)",
    ),
    _Rule(
        re.compile(r"never recorded|no recorded finish"),
        "an attempt was not recorded, so the delay could not be measured: a recorder "
        "problem, not a kubelet verdict",
    ),
    _Rule(
        re.compile(r"the kubelet reported a"),
        "the kubelet announced a different back-off than the model expects: its live "
        "config or the model is off",
    ),
)

# Failures that are not restart checks: setup and infrastructure.
_OTHER_RULES: Final = (
    _Rule(
        re.compile(r"too slow to judge|fall behind its restarts"),
        "a node restarts containers so much slower than the reference host that its "
        "windows cannot tell the curve from its neighbour's, or its status writes miss "
        "the levels: the node's, not the kubelet's (see each node's restart cost in the report)",
    ),
    _Rule(
        _STOPPED,
        "a node's kubelet stopped during the run and restarted nothing: the node failed, "
        "not the back-off curve (its kubelet log is in the evidence)",
    ),
    _Rule(
        re.compile(r"restart \d+ overdue"),
        "a restart never came within its back-off's bound: the kubelet stopped restarting the "
        "container (a stopped kubelet or runtime, or a back-off far longer than the curve)",
    ),
    _Rule(
        re.compile(r"live kubelet config differs from the profile"),
        "a worker's kubelet does not run its profile: the cluster config did not reach "
        "the node (recreate the cluster)",
    ),
    _Rule(
        re.compile(r"did not become Ready"),
        "the cluster never became Ready: an infrastructure problem, see kind-logs",
    ),
    _Rule(
        re.compile(r"not every worker showed enough restarts"),
        "the observation timed out before every worker reached the restarts it needs",
    ),
    _Rule(
        re.compile(r"ImagePullBackOff|ErrImageNeverPull|ErrImagePull"),
        "the workload image was not in the node: it must be loaded with `kind load`",
    ),
)


def explain(summary_or_failure_text: RunSummary | str) -> str:
    """A short line saying what a failure means, for a JUnit message or terminal.

    Takes a run summary or failure text (a verdict or JUnit message, a
    HarnessError, pytest's output); explains the first failure it recognises
    and says how many more there are. Pure.
    """
    if isinstance(summary_or_failure_text, RunSummary):
        return _explain_summary(summary_or_failure_text)
    lines = [line.strip() for line in summary_or_failure_text.splitlines() if line.strip()]
    explained = [e for e in (_explain_line(line) for line in lines) if e is not None]
    if explained:
        return _with_more(explained[0], len(explained) - 1)
    if not lines:
        return "no failure message"
    return _shorten(lines[0])


def _explain_summary(summary: RunSummary) -> str:
    if summary.passed:
        return f"{summary.run_id}: passed: every worker restarted on its curve"
    explained = [_explain_line(message) or message for message in summary.failures]
    if summary.status == "failed" and (node := _STOPPED.search(summary.reason)):
        # The cause before its symptoms: the node, then the restarts it left overdue.
        explained.insert(0, f"{node[0]}: {_meaning(_OTHER_RULES, node[0])}")
    if summary.status in ("interrupted", "error"):
        run_line = _explain_line(f"run {summary.status}: {summary.reason}".rstrip(": "))
        explained.insert(0, run_line or summary.reason)
    if not explained:
        return f"{summary.run_id}: {summary.status}: nothing was judged"
    return _with_more(explained[0], len(explained) - 1)


def _explain_line(line: str) -> str | None:
    restart = _RESTART.search(line)
    if restart:
        return _explain_restart(restart)
    nothing = _NOTHING_RECORDED.search(line)
    if nothing:
        return (
            f"{nothing['worker']}: no restart was recorded: the pod never ran or the "
            "recorder saw nothing (see the pod's events in the evidence)"
        )
    run_case = _RUN.match(line)
    if run_case:
        reason = run_case["reason"] or ""
        meaning = _meaning(_OTHER_RULES, reason)
        if run_case["status"] == "interrupted":
            headline = "the run was interrupted before every worker was observed"
        elif run_case["status"] == "error":
            headline = "the run ended in an error, not a verdict"
        else:
            headline = "the run judged nothing"
        return f"{headline}: {meaning or reason or 'no reason given'}"
    return _meaning(_OTHER_RULES, line)


def _explain_restart(match: re.Match[str]) -> str:
    expected = float(match["expected"])
    bound_text = match["bound_a"] or match["bound_b"]
    bound = f"{float(bound_text):.1f}s" if bound_text else "?"
    measured = f"measured {float(match['measured']):.1f}s" if match["measured"] else "not measured"
    reason = match["reason"]
    meaning = _meaning(_RESTART_RULES, reason) or reason
    return (
        f"{match['worker'].strip()}: restart {match['n']} {measured}, "
        f"allowed {expected:.1f}..{bound}: {meaning}"
    )


def _meaning(rules: Sequence[_Rule], text: str) -> str | None:
    return next((rule.meaning for rule in rules if rule.pattern.search(text)), None)


def _with_more(line: str, more: int) -> str:
    if more <= 0:
        return line
    return f"{line} (and {more} more failure{'s' if more > 1 else ''})"


def _shorten(line: str, limit: int = 200) -> str:
    return line if len(line) <= limit else line[: limit - 3] + "..."
