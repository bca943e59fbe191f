"""The pod status's whole-second times against the runtime's (or the workload's own)."""

from __future__ import annotations

from collections.abc import Iterable

from crashloop_harness.model.durations import NS_PER_S, to_ns
from crashloop_harness.recording.cri import CriFormatError, parse_rfc3339_nano
from crashloop_harness.recording.records import SOURCE_SELF, AttemptRecord
from crashloop_harness.verdict.failures import Failure, Rule
from crashloop_harness.verdict.tolerances import API_ROUNDING, SELF_REPORT_SLACK, ZERO, clock, dur

STATUS_DISAGREES = Rule(
    "status-disagrees",
    "the pod status contradicts the runtime (or the workload's own report) beyond the API's "
    "rounding: the record mixes up two attempts, and nothing it measures can be trusted",
)
STATUS_UNREADABLE = Rule(
    "status-unreadable",
    "a time in the pod status could not be read: the API returned what the recorder "
    "cannot parse, so the record cannot be cross-checked",
)


def api_cross_check(records: Iterable[AttemptRecord]) -> tuple[list[Failure], list[str]]:
    """Problems and notes where the pod status's whole seconds disagree with the runtime.

    The kubelet copies the runtime's times into pod status truncated to the
    second, so the two agree on the whole second. Within :data:`API_ROUNDING`
    a difference is a note; beyond it the record mixes up two attempts (or a
    source changed), the evidence is contradictory, and that is a failure.
    """
    problems: list[Failure] = []
    notes: list[str] = []
    for record in records:
        pairs = (
            ("startedAt", record.started_at_ns, record.api_started_at),
            ("finishedAt", record.finished_at_ns, record.api_finished_at),
        )
        for name, cri_ns, api_text in pairs:
            if cri_ns is None or api_text is None:
                continue
            try:
                api_ns = parse_rfc3339_nano(api_text)
            except CriFormatError as error:
                unreadable = f"attempt {record.attempt}: pod status {name} unreadable: {error}"
                problems.append(STATUS_UNREADABLE.failed(unreadable, restart=record.attempt))
                continue
            if api_ns is not None and api_ns // NS_PER_S == cri_ns // NS_PER_S:
                continue
            source = "workload's report" if record.source == SOURCE_SELF else "runtime's"
            text = (
                f"attempt {record.attempt}: pod status {name} {api_text} disagrees with the "
                f"{source} {clock(cri_ns)}"
            )
            # The workload reports its own start a little after the runtime's (its
            # main runs later) and its exit a little before: the API, which copies
            # the runtime's, may then be a second off.
            allowed = API_ROUNDING + (SELF_REPORT_SLACK if record.source == SOURCE_SELF else ZERO)
            if api_ns is not None and abs(api_ns - cri_ns) <= to_ns(allowed):
                notes.append(f"{text}, within the API's {dur(API_ROUNDING)} rounding")
            else:
                beyond = f"{text} beyond the API's {dur(API_ROUNDING)} rounding"
                problems.append(STATUS_DISAGREES.failed(beyond, restart=record.attempt))
    return problems, notes
