"""The trace: every raw input of a recorder kept in arrival order, and read back as written."""

from __future__ import annotations

import gzip
import json
import threading
from pathlib import Path

import pytest

from crashloop_harness.recording.cri import CriEvent, EventSplitter, parse_event
from crashloop_harness.recording.nodestream import NodeStream, PulseLine, Tick
from crashloop_harness.recording.trace import (
    TRACE_FILE,
    TraceFormatError,
    TraceWriter,
    read_trace,
    trimmed_event,
    trimmed_pod,
)

EVENTS = Path(__file__).parents[1] / "data" / "crictl_events.json"


class _Handler:
    def __init__(self) -> None:
        self.events: list[CriEvent] = []
        self.pulses: list[PulseLine] = []
        self.problems: list[str] = []

    def on_event(self, node: str, event: CriEvent) -> None:
        self.events.append(event)

    def on_pulse(self, node: str, pulse: PulseLine) -> None:
        self.pulses.append(pulse)

    def on_problem(self, node: str, message: str, *, unanswered: bool = False) -> None:
        self.problems.append(message)


def test_entries_from_many_threads_read_back_whole_and_the_plain_file_goes(
    tmp_path: Path,
) -> None:
    writer = TraceWriter(tmp_path / TRACE_FILE)

    def write_lines(node: str) -> None:
        for i in range(200):
            writer.write("err", node=node, line=f"{i}")

    threads = [threading.Thread(target=write_lines, args=(f"n{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    writer.close()
    writer.write("late", node="n0")  # after close: kept out, not an error
    entries = list(read_trace(tmp_path / TRACE_FILE))
    assert len(entries) == 800
    assert {e.kind for e in entries} == {"err"}
    for node in ("n0", "n1", "n2", "n3"):
        assert [e.fields["line"] for e in entries if e.node == node] == [str(i) for i in range(200)]
    assert not (tmp_path / "trace.jsonl").exists()


def test_a_run_that_died_leaves_a_plain_trace_that_reads(tmp_path: Path) -> None:
    writer = TraceWriter(tmp_path / TRACE_FILE)
    writer.write("out", node="a", line="{")
    # No close: the process died. Every line written is on disk already.
    (entry,) = read_trace(tmp_path / "trace.jsonl")
    assert (entry.kind, entry.node, entry.fields["line"]) == ("out", "a", "{")
    assert entry.wall_ns > 0
    assert entry.monotonic_ns > 0


def test_a_file_that_is_not_a_trace_is_refused_with_its_name(tmp_path: Path) -> None:
    path = tmp_path / TRACE_FILE
    with gzip.open(path, "wt") as file:
        file.write('{"kind": "attempt"}\n')
    with pytest.raises(TraceFormatError, match=str(path)):
        list(read_trace(path))


def test_a_node_stream_traces_each_raw_line_before_parsing_it(tmp_path: Path) -> None:
    writer = TraceWriter(tmp_path / TRACE_FILE)
    handler = _Handler()
    stream = NodeStream("node-a", ["true"], handler, tap=writer)
    splitter = EventSplitter()
    raw = EVENTS.read_text().splitlines(keepends=True)
    for line in raw:
        stream.event_line(splitter, line)
    stream.pulse_line("tick\n")
    stream.pulse_line("garbage\n")
    stream.reader_ended(1, restarting=True)
    writer.close()
    entries = list(read_trace(tmp_path / TRACE_FILE))
    # Each whole event once (crictl indents one over dozens of lines), decoded.
    documents = [e.fields["document"] for e in entries if e.kind == "event"]
    assert len(documents) == 3
    assert all(isinstance(d, dict) and "containersStatuses" in d for d in documents)
    assert [e.fields["line"] for e in entries if e.kind == "err"] == ["tick\n", "garbage\n"]
    assert [(e.fields["code"], e.fields["restarting"]) for e in entries if e.kind == "ended"] == [
        (1, True)
    ]
    # The handler got the same as without a trace: parsed events, a tick, two problems.
    assert len(handler.events) == 3
    assert handler.pulses == [Tick()]
    assert len(handler.problems) == 2


def test_a_pod_keeps_only_what_the_watch_reads() -> None:
    pod = {
        "metadata": {
            "name": "p",
            "uid": "u",
            "resourceVersion": "7",
            "managedFields": [{"big": "x" * 1000}],
            "labels": {"a": "b"},
        },
        "spec": {"nodeName": "n", "containers": [{"name": "main"}]},
        "status": {
            "phase": "Failed",
            "reason": "TaintToleration",
            "message": "Pod was rejected",
            "conditions": [{"type": "Ready"}],
            "hostIP": "172.20.0.3",
            "containerStatuses": [{"name": "main", "restartCount": 3}],
        },
    }
    # What says why a pod never ran (pods.notrunning) is kept, the rest of it dropped.
    assert trimmed_pod(pod) == {
        "metadata": {"name": "p", "uid": "u", "resourceVersion": "7", "labels": {"a": "b"}},
        "spec": {"nodeName": "n"},
        "status": {
            "phase": "Failed",
            "reason": "TaintToleration",
            "message": "Pod was rejected",
            "conditions": [{"type": "Ready"}],
            "containerStatuses": [{"name": "main", "restartCount": 3}],
        },
    }


def test_a_trimmed_event_parses_to_the_same_attempts_as_the_whole_one() -> None:
    splitter = EventSplitter()
    documents = [d for d in map(splitter.feed, EVENTS.read_text().splitlines(keepends=True)) if d]
    assert len(documents) == 3
    for document in documents:
        trimmed = trimmed_event(document)
        assert parse_event(trimmed) == parse_event(document)
        assert len(json.dumps(trimmed)) < len(json.dumps(document)) / 2


def test_a_trace_that_cannot_be_written_stops_and_says_why_never_raising(
    tmp_path: Path,
) -> None:
    writer = TraceWriter(tmp_path / "gone" / TRACE_FILE)  # no such directory
    writer.write("err", node="a", line="tick\n")
    writer.write("err", node="a", line="tick\n")
    writer.close()
    assert writer.problem is not None
    assert "the trace stops here" in writer.problem
