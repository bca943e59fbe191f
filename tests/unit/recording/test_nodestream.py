"""The node reader: crictl's events cut apart, the pulse parsed, the reader kept alive."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from crashloop_harness.cluster.kubeletstate import KubeletProcess
from crashloop_harness.recording.cri import (
    EVENT_CREATED,
    EVENT_STARTED,
    EVENT_STOPPED,
    STATE_EXITED,
    STATE_RUNNING,
    CriEvent,
    CriFormatError,
    EventSplitter,
    parse_event,
)
from crashloop_harness.recording.nodestream import (
    NODE_PROGRAM,
    Listing,
    ListingFailedError,
    NodeStream,
    PulseLine,
    Tick,
    docker_exec_argv,
    parse_pulse_line,
)

EVENTS = Path(__file__).parents[1] / "data" / "crictl_events.json"


def _events(text: str) -> list[CriEvent]:
    splitter = EventSplitter()
    found = []
    for line in text.splitlines(keepends=True):
        document = splitter.feed(line)
        if document is not None:
            found.append(parse_event(document))
    return found


def test_crictl_events_output_is_cut_into_events_with_exact_times() -> None:
    stopped, created, started = _events(EVENTS.read_text())
    assert [stopped.event_type, created.event_type, started.event_type] == [
        EVENT_STOPPED,
        EVENT_CREATED,
        EVENT_STARTED,
    ]
    (exited,) = stopped.containers
    assert exited.state == STATE_EXITED
    assert exited.attempt == 0
    assert exited.started_at_ns == 1796059449160630197
    assert exited.finished_at_ns == 1796059452268009230
    assert exited.exit_code == 0
    assert exited.pod_name == "session-fast"
    assert exited.pod_sandbox_id == stopped.sandbox_id
    # Every container of the pod comes with each event: the new attempt and the old.
    running = next(c for c in started.containers if c.attempt == 1)
    assert running.state == STATE_RUNNING
    assert running.started_at_ns is not None
    assert running.finished_at_ns is None
    assert running.exit_code is None
    assert started.created_at_ns is not None
    assert started.created_at_ns > running.started_at_ns


def test_an_object_cut_off_by_a_restart_is_reported_and_the_next_one_is_kept() -> None:
    text = EVENTS.read_text()
    first_end = text.index("\n}\n") + 3
    cut = text[: first_end // 2]  # half of the first object, then a whole one
    splitter = EventSplitter()
    errors, documents = [], []
    for line in (cut + "\n" + text[first_end:]).splitlines(keepends=True):
        try:
            document = splitter.feed(line)
        except CriFormatError as error:
            errors.append(str(error))
            continue
        if document is not None:
            documents.append(document)
    assert len(errors) == 1
    assert "cut off" in errors[0]
    assert len(documents) == 2


def test_blank_lines_between_events_are_ignored() -> None:
    splitter = EventSplitter()
    assert splitter.feed("\n") is None
    assert splitter.feed("{\n") is None
    assert splitter.feed('  "containerId": "c"\n') is None
    assert splitter.feed("}\n") == {"containerId": "c"}


def test_an_event_without_a_container_or_with_an_unknown_type_is_refused() -> None:
    with pytest.raises(CriFormatError, match="containerId"):
        parse_event({"containerEventType": EVENT_STARTED})
    with pytest.raises(CriFormatError, match="unknown event type"):
        parse_event({"containerId": "c", "containerEventType": "CONTAINER_EXPLODED"})
    # A numeric enum means the same event.
    assert parse_event({"containerId": "c", "containerEventType": 2}).event_type == EVENT_STOPPED


def test_pulse_lines_parse_to_ticks_listings_and_the_kubelet() -> None:
    assert parse_pulse_line("tick\n") == Tick()
    listing = parse_pulse_line('list 1796059452468416603 {"containers": []}')
    assert listing == Listing(1796059452468416603, ())
    kubelet = parse_pulse_line("kubelet MainPID=312 ActiveEnterTimestampMonotonic=99 ")
    assert kubelet == KubeletProcess(pid=312, active_since_us=99)


@pytest.mark.parametrize(
    "line",
    [
        "list soon {}",
        'list 17 {"containers": [',
        "kubelet MainPID=",
        "tock",
        "tick tock",
        "E1130 17:24:31.508362 failed to connect",
    ],
)
def test_anything_else_on_the_pulse_is_a_problem_not_a_guess(line: str) -> None:
    with pytest.raises(ValueError, match=r"pulse|crictl|systemctl"):  # CriFormatError is one
        parse_pulse_line(line)


# What crictl prints instead of its listing when containerd stopped in the node.
_REFUSED = (
    'time="2026-01-01T10:00:00Z" level=fatal msg="validate service connection: rpc error: '
    "code = Unavailable desc = connection error: dial unix /run/containerd/containerd.sock: "
    'connect: connection refused"'
)


def test_a_listing_that_is_crictls_error_names_what_crictl_said() -> None:
    with pytest.raises(ListingFailedError, match="connection refused"):
        parse_pulse_line(f"list 1796059452468416603 {_REFUSED}")


def test_only_the_runtime_not_answering_is_reported_as_unanswered() -> None:
    handler = _Handler()
    stream = NodeStream("node-1", [], handler)
    stream.pulse_line(f"list 17 {_REFUSED}")
    stream.reader_ended(0, restarting=True)
    stream.pulse_line("bogus")
    stream.reader_ended(0, restarting=False)  # the run stopped it: no problem at all
    assert len(handler.problems) == 3
    assert handler.unanswered == handler.problems[:2]
    assert "connection refused" in handler.unanswered[0]


def test_the_node_program_is_valid_shell_that_ends_with_its_stdin() -> None:
    assert subprocess.run(["bash", "-n", "-c", NODE_PROGRAM], check=False).returncode == 0
    argv = docker_exec_argv("crashloop-worker", "ns-1")
    assert argv[:3] == ["docker", "exec", "-i"]
    assert "NAMESPACE=ns-1" in argv
    assert argv[-1] == NODE_PROGRAM


class _Handler:
    def __init__(self) -> None:
        self.events: list[CriEvent] = []
        self.pulses: list[PulseLine] = []
        self.problems: list[str] = []
        # The problems that say the runtime did not answer.
        self.unanswered: list[str] = []
        self.changed = threading.Condition()

    def on_event(self, _node: str, event: CriEvent) -> None:
        with self.changed:
            self.events.append(event)
            self.changed.notify_all()

    def on_pulse(self, _node: str, pulse: PulseLine) -> None:
        with self.changed:
            self.pulses.append(pulse)
            self.changed.notify_all()

    def on_problem(self, _node: str, message: str, *, unanswered: bool = False) -> None:
        with self.changed:
            self.problems.append(message)
            if unanswered:
                self.unanswered.append(message)
            self.changed.notify_all()

    def wait_for(self, condition: object, timeout: float = 10.0) -> bool:
        with self.changed:
            return self.changed.wait_for(condition, timeout)  # type: ignore[arg-type]


def _fake_node(script: str) -> Sequence[str]:
    """A local process standing in for the node program: prints, then ends with stdin."""
    return [sys.executable, "-c", script]


_ONE_ROUND = f"""
import sys
sys.stdout.write(open({str(EVENTS)!r}).read()); sys.stdout.flush()
sys.stderr.write("tick\\nkubelet MainPID=7 ActiveEnterTimestampMonotonic=1\\nbogus\\n")
sys.stderr.flush()
"""


def test_a_reader_delivers_events_and_pulse_and_starts_again_when_it_ends() -> None:
    handler = _Handler()
    stream = NodeStream("node-1", _fake_node(_ONE_ROUND), handler)
    stream.start()
    try:
        # Each round ends by itself: the reader is started again after the delay.
        assert handler.wait_for(lambda: len(handler.events) >= 6)
        assert handler.wait_for(lambda: any("starting it again" in p for p in handler.problems))
    finally:
        stream.stop()
    assert stream.connects >= 2
    assert [e.event_type for e in handler.events[:3]] == [
        EVENT_STOPPED,
        EVENT_CREATED,
        EVENT_STARTED,
    ]
    assert Tick() in handler.pulses
    assert KubeletProcess(7, 1) in handler.pulses
    assert any("unexpected line" in p for p in handler.problems)


def test_stop_closes_the_readers_stdin_and_it_exits() -> None:
    handler = _Handler()
    waits_for_stdin = "import sys\nprint('tick', file=sys.stderr, flush=True)\nsys.stdin.read()"
    stream = NodeStream("node-1", _fake_node(waits_for_stdin), handler)
    stream.start()
    assert handler.wait_for(lambda: Tick() in handler.pulses)
    stream.stop()
    assert stream.connects == 1
    assert not any("starting it again" in p for p in handler.problems)
