"""JUnit XML for a run, so CI shows each restart of each worker as a test.

One ``<testsuite name="crashloop-<kind>">`` holds one ``<testcase>`` per
restart check (classname ``<kind>.<worker>``, name ``restart-<n>``), one per
worker problem that belongs to no restart (named after what it judges:
``restart-<n>-overdue``, ``levels-confirmed``, ``cap-median`` ...), one per scenario metric
(classname ``scenario:<scenario>.<worker>``, name the metric's), and for an interrupted or errored
run one ``<error>`` case, because a CI page that shows only green restarts of
a run that never finished would lie. The live kubelet config goes into
``<properties>``, so a failure page says which config was measured. Where the
environment failed (a node not observed, the host saturated, a kubelet that
stopped under a worker) the case is an ``<error>``, and its body leads with
the cause, in the node's words.

Built from a :class:`~crashloop_harness.outputs.summary.RunSummary` alone: the JUnit file never
says anything summary.json does not.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path
from typing import Final

from crashloop_harness.core.atomicfile import write_atomically
from crashloop_harness.outputs.summary import MetricSummary, RunSummary, WorkerSummary
from crashloop_harness.verdict import Failure, RestartCheck
from crashloop_harness.verdict.failures import OTHER
from crashloop_harness.verdict.worker import failure_message

JUNIT_FILE: Final = "junit.xml"

# XML 1.0 cannot carry most control characters, even escaped, and
# ElementTree writes them anyway; kubelet and runtime messages end up in
# failure texts, so anything outside the legal set is replaced.
_ILLEGAL_XML: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def junit_element(summary: RunSummary) -> ET.Element:
    """The ``<testsuites>`` root with the run's one ``<testsuite>``."""
    suite = ET.Element("testsuite", name=xml_safe(f"crashloop-{summary.kind}"))
    suite.set("timestamp", summary.started_at)
    duration = _duration_s(summary.started_at, summary.finished_at)
    if duration is not None:
        suite.set("time", f"{duration:.3f}")
    _add_properties(suite, summary)

    if summary.status in ("interrupted", "error"):
        _run_case(suite, summary, "error")
    elif not summary.workers and not summary.metrics:
        _run_case(suite, summary, "failure")
    for worker in summary.workers:
        _add_worker(suite, summary.kind, worker, summary.stopped_kubelets.get(worker.node))
    for metric in summary.metrics:
        _add_metric(suite, metric)

    notes = [f"{w.worker}: {note}" for w in summary.workers for note in w.notes]
    if notes:
        ET.SubElement(suite, "system-out").text = xml_safe("\n".join(notes))

    counts = {
        "tests": len(suite.findall("testcase")),
        "failures": len(suite.findall("testcase/failure")),
        "errors": len(suite.findall("testcase/error")),
        "skipped": len(suite.findall("testcase/skipped")),
    }
    root = ET.Element("testsuites", name="crashloop")
    for key, value in counts.items():
        suite.set(key, str(value))
        root.set(key, str(value))
    root.append(suite)
    return root


def junit_bytes(summary: RunSummary) -> bytes:
    """The JUnit document, indented, UTF-8, with an XML declaration."""
    root = junit_element(summary)
    ET.indent(root)
    # Typed as Any by typeshed because the return type depends on encoding.
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data + b"\n"


def write_junit(run_dir: Path, summary: RunSummary) -> Path:
    """Write ``<run_dir>/junit.xml`` atomically; returns its path."""
    return write_atomically(Path(run_dir) / JUNIT_FILE, junit_bytes(summary))


def _add_properties(suite: ET.Element, summary: RunSummary) -> None:
    props = ET.SubElement(suite, "properties")
    values: list[tuple[str, str]] = [
        ("run_id", summary.run_id),
        ("kind", summary.kind),
        ("profile", summary.profile),
        ("status", summary.status),
        ("reason", summary.reason),
        ("cluster.name", summary.cluster.name),
        ("cluster.node_image", summary.cluster.node_image),
        ("cluster.kubernetes_version", summary.cluster.kubernetes_version),
    ]
    for w in summary.workers:
        values += [(f"{w.worker}.node", w.node), (f"{w.worker}.profile", w.profile or "-")]
        live = w.live_config
        if live is not None:
            values.append(
                (f"{w.worker}.maxContainerRestartPeriod", live.max_container_restart_period)
            )
            values += [
                (f"{w.worker}.featureGates.{gate}", "true" if on else "false")
                for gate, on in live.feature_gates.items()
            ]
            values += [(f"{w.worker}.initial_s", f"{live.initial_s:g}")]
            values += [(f"{w.worker}.max_s", f"{live.max_s:g}")]
            values += [(f"{w.worker}.mismatch", m) for m in live.mismatches]
        if w.overshoot_median_s is not None and w.overshoot_max_s is not None:
            values.append((f"{w.worker}.overshoot_median_s", f"{w.overshoot_median_s:.3f}"))
            values.append((f"{w.worker}.overshoot_max_s", f"{w.overshoot_max_s:.3f}"))
        values += [
            (
                f"{w.worker}.coverage.{r.rule}",
                f"{'covered' if r.covered else 'not covered'}: {r.detail}",
            )
            for r in w.coverage
        ]
    for name, value in values:
        ET.SubElement(props, "property", name=xml_safe(name), value=xml_safe(value))


def _run_case(suite: ET.Element, summary: RunSummary, tag: str) -> None:
    """A case for the run itself: it ended early, or judged nothing."""
    case = ET.SubElement(suite, "testcase", classname=xml_safe(summary.kind), name="run")
    message = f"run {summary.status}" + (f": {summary.reason}" if summary.reason else "")
    measured = sum(w.attempts_recorded for w in summary.workers)
    detail = (
        f"{message}\n{measured} container attempts were recorded before the end; "
        "they are in attempts.jsonl, and the restart cases below are what they show"
    )
    ET.SubElement(case, tag, message=xml_safe(message), type=summary.status).text = xml_safe(detail)


def _add_worker(
    suite: ET.Element, kind: str, worker: WorkerSummary, stopped: str | None = None
) -> None:
    """The worker's cases; ``stopped``: its node's kubelet stopped during the run (the cause
    of whatever failed there, which is then the environment's error, said first)."""
    classname = xml_safe(f"{kind}.{worker.worker}")
    cause = f"cause: {stopped} (the run's reason)\n" if stopped else ""
    for check in worker.checks:
        case = ET.SubElement(suite, "testcase", classname=classname, name=f"restart-{check.n}")
        if check.measured_s is not None:
            case.set("time", f"{check.measured_s:.3f}")
        if not check.passed:
            # The verdict's own words for it, as the table and summary.json say them.
            message = xml_safe(failure_message(worker.worker, check))
            # A restart late only across a frozen node is not the kubelet's failure.
            tag = "error" if check.error or stopped else "failure"
            failure = ET.SubElement(case, tag, message=message, type=check.code or OTHER)
            failure.text = xml_safe(cause + _check_detail(check))
        elif check.set_aside is not None:
            # Not judged (late while the host was saturated or the node unobserved): a
            # skipped case, never a passed one.
            ET.SubElement(case, "skipped", message=xml_safe(check.set_aside))
    names: set[str] = {f"restart-{check.n}" for check in worker.checks}
    for problem in worker.problem_failures:
        case = ET.SubElement(
            suite, "testcase", classname=classname, name=_unique(case_name(problem), names)
        )
        tag = "error" if problem.error or stopped is not None else "failure"
        message = f"{stopped}: {problem.words}" if stopped else problem.words
        ET.SubElement(case, tag, message=xml_safe(message), type=problem.code).text = xml_safe(
            cause + problem.words
        )
    if not worker.checks and not worker.problem_failures:
        # Without this the worker would be absent from the report, which
        # reads as "not part of the run" rather than "saw no restart".
        case = ET.SubElement(suite, "testcase", classname=classname, name="restarts")
        ET.SubElement(case, "skipped", message="no restart was observed")


def case_name(problem: Failure) -> str:
    """The test case a worker-level failure is, named after its rule and the restart it
    concerns: ``restart-4-overdue``, ``levels-unconfirmed``."""
    if problem.names_restart:
        return f"restart-{problem.restart}-{problem.code}"
    return "worker-check" if problem.code == OTHER else problem.code


def _unique(name: str, taken: set[str]) -> str:
    candidate, i = name, 2
    while candidate in taken:
        candidate, i = f"{name}-{i}", i + 1
    taken.add(candidate)
    return candidate


def _add_metric(suite: ET.Element, metric: MetricSummary) -> None:
    classname = xml_safe(f"scenario:{metric.scenario}.{metric.worker}")
    case = ET.SubElement(suite, "testcase", classname=classname, name=xml_safe(metric.name))
    if not metric.passed:
        ET.SubElement(case, "failure", message=xml_safe(metric.message), type="metric")


def _check_detail(check: RestartCheck) -> str:
    lines = [
        f"restart {check.n} (curve position {check.curve_n})",
        f"expected:  {check.expected_s:g}s",
        f"measured:  {_opt_s(check.measured_s, '.3f')}",
        f"margin:    {_opt_s(check.margin_s, '+.3f')}",
        f"bound:     {check.upper_bound_s:g}s",
        f"reported:  {_opt_s(check.reported_s, 'g')}",
        f"why:       {check.reason}",
    ]
    return "\n".join(lines)


def _opt_s(value: float | None, spec: str) -> str:
    return "-" if value is None else f"{value:{spec}}s"


def _duration_s(started_at: str, finished_at: str) -> float | None:
    try:
        delta = datetime.fromisoformat(finished_at) - datetime.fromisoformat(started_at)
    except (TypeError, ValueError):
        # A hand-edited or foreign summary: leave the time out rather than fail.
        return None
    return delta.total_seconds()


def xml_safe(text: str) -> str:
    return _ILLEGAL_XML.sub("\ufffd", text)
