"""One long-lived reader per node: the runtime's event stream and a slow pulse.

A single ``docker exec -i`` per node runs a small bash program inside the
kind node (:data:`NODE_PROGRAM`) that writes two streams:

- stdout: ``crictl events -o json``, every container event the runtime
  produces, each with the status (nanosecond times) of every container of the
  pod. crictl writes into a file in the node's /run that ``tail -f`` follows,
  so a reader on the host that stalls can never hold up the runtime: containerd
  blocks its event queue, and with it container starts, when a subscriber stops
  reading;
- stderr: the pulse, one short line each: ``tick`` every PULSE_PERIOD (the
  node is alive and running), and every LISTING_EVERY ticks a listing of the
  run's containers (``list <node ns> <crictl ps json>``, the safety net for
  anything an event stream drops) and the kubelet's process
  (``kubelet MainPID=... ActiveEnterTimestampMonotonic=...``).

The program ends itself, killing what it started and removing its file, when
its stdin closes (the reader stopped or died; the harness never writes to it),
when its pulse can no longer be written, or when crictl or tail ended (a
subscription that broke). A stream that breaks is started again after RECONNECT_DELAY;
containerd holds events for five minutes while nobody subscribes and replays
them to the next subscriber, and the first listing of the new stream
reconciles whatever is still missing.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Final, Protocol

from crashloop_harness.cluster.kubeletstate import KubeletProcess, parse_systemctl_show
from crashloop_harness.cluster.nodecommand import node_argv
from crashloop_harness.core import timeouts
from crashloop_harness.core.conventions import POD_NAMESPACE_LABEL
from crashloop_harness.recording.cri import (
    CriContainer,
    CriEvent,
    CriFormatError,
    EventSplitter,
    parse_event,
    parse_ps,
)
from crashloop_harness.recording.trace import NoTrace, Tap, trimmed_event

PULSE_PERIOD: Final = 0.5
# A listing (one crictl and one systemctl process in the node) every 10s: the
# events carry the timing; the listing only proves that nothing was missed, and
# bounds how late an overdue restart is noticed. Between listings the pulse
# forks nothing (bash builtins only; `read -t` is both the wait and the watch
# for the harness going away).
LISTING_EVERY: Final = 20
RECONNECT_DELAY: Final = 1.0

NODE_PROGRAM: Final = f"""
set -u
trap '' PIPE
out=/run/crashloop-observer-$$.json
subscriber= follower=
cleanup() {{
  trap - EXIT
  kill $subscriber $follower 2>/dev/null
  rm -f "$out"
}}
trap cleanup EXIT
trap 'exit 0' INT TERM HUP
: > "$out"
crictl events -o json > "$out" 2>/dev/null &
subscriber=$!
tail -n +1 -f "$out" &
follower=$!
exec 3<&0
n=0
# One pid per kill: `kill -0 a b` succeeds while either lives.
while kill -0 $subscriber 2>/dev/null && kill -0 $follower 2>/dev/null; do
  if [ $((n % {LISTING_EVERY})) -eq 0 ]; then
    echo "list ${{EPOCHREALTIME//[.,]/}}000 $(crictl ps -a -o json \
      --label "{POD_NAMESPACE_LABEL}=$NAMESPACE" 2>&1 | tr -d '\n')" >&2 || break
    echo "kubelet $(systemctl show kubelet -p MainPID -p ActiveEnterTimestampMonotonic \
      | tr '\n' ' ')" >&2 || break
  fi
  echo tick >&2 || break
  read -r -t {PULSE_PERIOD} -u 3 _
  [ $? -gt 128 ] || break
  n=$((n + 1))
done
"""


@dataclass(frozen=True)
class Listing:
    """The run's containers as the runtime listed them, and when (node clock, ns)."""

    listed_at_ns: int
    containers: tuple[CriContainer, ...]


@dataclass(frozen=True)
class Tick:
    """The node's pulse: it ran the reader's loop just now."""


PulseLine = Tick | Listing | KubeletProcess


class ListingFailedError(CriFormatError):
    """A listing line without the run's containers: crictl printed its own error instead.

    The runtime did not answer the listing (containerd stopped, its socket
    gone); the recorder counts these apart from a malformed line.
    """


def parse_pulse_line(line: str) -> PulseLine:
    """One stderr line of :data:`NODE_PROGRAM`; CriFormatError or ValueError for anything else."""
    word, _, rest = line.strip().partition(" ")
    if word == "tick" and not rest:
        return Tick()
    if word == "list":
        stamp, _, listing = rest.partition(" ")
        if not stamp.isdigit():
            raise CriFormatError(f"pulse: a listing without its node time: {line.strip()!r:.200}")
        try:
            containers = parse_ps(listing)
        except CriFormatError as error:
            # The listing runs `crictl ps ... 2>&1`: what it printed is the runtime's own error.
            raise ListingFailedError(
                f"crictl ps failed: {listing.strip()!r:.300} ({error})"
            ) from error
        return Listing(int(stamp), tuple(containers))
    if word == "kubelet":
        return parse_systemctl_show("\n".join(rest.split()))
    raise CriFormatError(f"pulse: unexpected line {line.strip()!r:.200}")


class StreamHandler(Protocol):
    """What a node stream reports to (the recorder); called from the stream's threads."""

    def on_event(self, node: str, event: CriEvent) -> None: ...

    def on_pulse(self, node: str, pulse: PulseLine) -> None: ...

    def on_problem(self, node: str, message: str, *, unanswered: bool = False) -> None:
        """A problem reading ``node``; ``unanswered``: its runtime did not answer.

        That is, the event subscription ended or a listing failed, as when
        containerd stopped inside the node while the node itself runs on.
        """
        ...


Spawn = Callable[[Sequence[str]], "subprocess.Popen[str]"]


def docker_exec_argv(node: str, namespace: str) -> list[str]:
    return node_argv(node, ["bash", "-c", NODE_PROGRAM], stdin=True, env={"NAMESPACE": namespace})


def _spawn(argv: Sequence[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
    )


class NodeStream:
    """Keeps one node's reader running from :meth:`start` to :meth:`stop`."""

    def __init__(
        self,
        node: str,
        argv: Sequence[str],
        handler: StreamHandler,
        spawn: Spawn = _spawn,
        tap: Tap | None = None,
    ) -> None:
        self.node = node
        # Every raw line and ending goes to the run's trace before it is parsed.
        self.tap: Tap = tap or NoTrace()
        self.argv = list(argv)
        self.handler = handler
        self.spawn = spawn
        self.connects = 0
        self._stop = threading.Event()
        self._process: subprocess.Popen[str] | None = None
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=f"stream-{node}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """End the node program (its stdin closes) and wait for the reader threads."""
        self._stop.set()
        with self._lock:
            process = self._process
        if process is not None:
            _end(process)
        self._thread.join(timeout=timeouts.API_REQUEST)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                process = self.spawn(self.argv)
            except OSError as error:
                self.handler.on_problem(self.node, f"starting the reader: {error}")
                self._stop.wait(RECONNECT_DELAY)
                continue
            with self._lock:
                self._process = process
                self.connects += 1
            if self._stop.is_set():  # stop() came while this one started
                _end(process)
            pulse = threading.Thread(
                target=self._read_pulse, args=(process.stderr,), name=f"pulse-{self.node}"
            )
            pulse.daemon = True
            pulse.start()
            self._read_events(process.stdout)
            pulse.join(timeout=timeouts.API_REQUEST)
            code = _end(process)
            self.reader_ended(code, restarting=not self._stop.is_set())
            if not self._stop.is_set():
                self._stop.wait(RECONNECT_DELAY)

    def reader_ended(self, code: int | None, *, restarting: bool) -> None:
        """The node program ended; unless the run stopped it, that is a problem to report."""
        self.tap.write("ended", node=self.node, code=code, restarting=restarting)
        if restarting:
            self.handler.on_problem(
                self.node,
                f"the node's reader ended (exit code {code}); starting it again",
                unanswered=True,
            )

    def _read_events(self, stream: IO[str] | None) -> None:
        if stream is None:
            return
        splitter = EventSplitter()
        for line in stream:
            self.event_line(splitter, line)

    def event_line(self, splitter: EventSplitter, line: str) -> None:
        """One stdout line: part of a runtime event, handed on once the event is whole.

        The trace keeps each whole event (crictl indents it over dozens of
        lines) and each fragment the splitter refused.
        """
        try:
            document = splitter.feed(line)
        except CriFormatError as error:
            self.tap.write("event-error", node=self.node, error=str(error))
            self.handler.on_problem(self.node, str(error))
            return
        if document is not None:
            self.tap.write("event", node=self.node, document=trimmed_event(document))
            self.event_document(document)

    def event_document(self, document: object) -> None:
        """One whole runtime event, decoded: parsed and handed to the recorder."""
        try:
            self.handler.on_event(self.node, parse_event(document))
        except CriFormatError as error:
            self.handler.on_problem(self.node, str(error))

    def _read_pulse(self, stream: IO[str] | None) -> None:
        if stream is None:
            return
        for line in stream:
            self.pulse_line(line)

    def pulse_line(self, line: str) -> None:
        """One stderr line: a tick, a listing or the kubelet's process."""
        if not line.strip():
            return
        self.tap.write("err", node=self.node, line=line)
        try:
            self.handler.on_pulse(self.node, parse_pulse_line(line))
        except ListingFailedError as error:
            self.handler.on_problem(self.node, str(error), unanswered=True)
        except ValueError as error:  # CriFormatError included
            self.handler.on_problem(self.node, str(error))


def _end(process: subprocess.Popen[str]) -> int | None:
    """Close the program's stdin (it cleans up and exits); kill it if it does not."""
    try:
        if process.stdin is not None and not process.stdin.closed:
            process.stdin.close()
    except OSError:
        pass  # already gone
    try:
        return process.wait(timeout=timeouts.READER_EXIT)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait(timeout=timeouts.READER_EXIT)
