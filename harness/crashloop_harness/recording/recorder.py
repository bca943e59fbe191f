"""Record every container attempt of a run, as it happens.

Two sources feed one append-only log:

- per node, one long-lived reader (:mod:`crashloop_harness.recording.nodestream`) follows the
  container runtime's own event stream inside the kind node: every start and
  exit arrives within milliseconds, with nanosecond start and finish times
  from the same clock the kubelet uses. Its pulse proves the node alive
  (node silence, frozen spans), lists the run's containers every few seconds
  as a safety net (anything an event did not deliver is inspected then) and
  reports the kubelet's process (a restart mid-run ends the run). Nothing
  else polls the nodes. The ``poll`` observer instead lists and inspects
  every node each SAMPLE_PERIOD through `docker exec`: the way attempts were
  recorded before, kept to compare both on the same runs;
- a pod watch reads the kubelet's own decision (`state.waiting.message`, the
  back-off before the next attempt) and the API's whole-second times as a
  cross-check. It resumes from its resourceVersion after a dropped stream and
  relists after 410 Gone; a relist loses nothing, since the runtime is the
  source of attempts.

Each node's clock is read once at the start (``date +%s%N`` in the node). A
listing's time on the node's clock is what an overdue restart is judged
against, and a listing counts only once every container it shows is in the
records: a reader that falls behind can never make a restart look overdue.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

from crashloop_harness.cluster.kubeletstate import KubeletChanges, KubeletProcess, changes_between
from crashloop_harness.cluster.nodecommand import run_in_node
from crashloop_harness.core import timeouts
from crashloop_harness.core.conventions import POD_NAMESPACE_LABEL
from crashloop_harness.core.errors import HarnessError, first_line
from crashloop_harness.model.bounds import BOUNDS
from crashloop_harness.recording.closing import ClosesItsLog, RecorderErrors
from crashloop_harness.recording.cri import (
    STATE_CREATED,
    STATE_EXITED,
    STATE_RUNNING,
    CriContainer,
    CriEvent,
    parse_inspect_all,
    parse_ps,
)
from crashloop_harness.recording.hostcpu import (
    SAMPLE_EVERY_S,
    CpuSample,
    CpuTimes,
    SaturatedSpan,
    busy_between,
    read_cpu_times,
    saturated_spans,
)
from crashloop_harness.recording.nodepods import NodeStartups, PodStartup
from crashloop_harness.recording.nodestream import (
    Listing,
    NodeStream,
    PulseLine,
    Spawn,
    Tick,
    docker_exec_argv,
)
from crashloop_harness.recording.observercost import CpuReading, ObserverCost, read_cpu
from crashloop_harness.recording.pace import (
    BURST_ITERATIONS,
    PACE_EVERY_S,
    PaceSample,
    pace_argv,
    parse_pace,
)
from crashloop_harness.recording.podwatch import Ended, PodNote, PodWatch
from crashloop_harness.recording.records import AttemptKey, AttemptLog, AttemptRecord
from crashloop_harness.recording.scope import RecordingScope
from crashloop_harness.recording.trace import TRACE_FILE, Tap, TraceWriter

Observer = Literal["events", "poll", "selfreport"]
OBSERVERS: Final[tuple[Observer, ...]] = ("events", "poll", "selfreport")
# The poll observer's period.
SAMPLE_PERIOD: Final = 0.5
# A node normally speaks every PULSE_PERIOD (0.5s; the poll observer every
# SAMPLE_PERIOD plus one `docker exec`). A longer silence means the node
# (paused, frozen) or the host (overloaded) did not run as it should: a
# restart late across such a gap is not the kubelet's fault to judge.
UNOBSERVED_GAP: Final = BOUNDS["unobserved_gap"].as_seconds()
# A listing that shows a container the events have not delivered yet waits
# this long for the event before the container is inspected directly.
EVENT_GRACE: Final = 1.0
# A node whose runtime failed this many times in a row (its event subscription
# ended, a listing came back as crictl's error) with no complete listing
# between, while the node itself kept answering, is broken: containerd stopped
# inside it. Its reader would start again forever and its pulse keep the node
# from ever looking silent. One dropped subscription recovers with one
# reconnect and a good listing (a single failure); a third failure in a row
# leaves no doubt, a few seconds after the runtime stopped.
BROKEN_AFTER: Final = 3


@dataclass
class ApiView:
    """What the pod status told about one attempt (noted by the pod watch)."""

    reported_backoff_s: float | None = None
    api_started_at: str | None = None
    api_finished_at: str | None = None
    ended: Ended | None = None


@dataclass(frozen=True)
class PaceProbe:
    """What a node's pace probe runs (crashloop_harness.recording.pace): a burst this long."""

    iterations: int = BURST_ITERATIONS


class AttemptRecorder(Protocol):
    """What a run asks of whatever records its attempts (the node readers or the API alone)."""

    errors: RecorderErrors
    cost: ObserverCost | None

    @property
    def observer(self) -> str:
        """How it records: "events", "poll" (the nodes' runtimes), "selfreport" (the API)."""
        ...

    @property
    def trace(self) -> Tap: ...

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def attempts(self) -> list[AttemptRecord]: ...
    def silent_nodes(self, longer_than: float) -> list[str]: ...
    def broken_nodes(self) -> list[str]: ...
    def deleted_pods(self) -> dict[str, str]: ...
    def not_running(self) -> dict[str, str]: ...
    def ended_pod_uids(self) -> frozenset[str]: ...
    def kubelet_changes(
        self, made: Mapping[str, KubeletProcess] | None = None
    ) -> KubeletChanges: ...
    def listed_at_ns(self, node: str) -> int | None: ...
    def levels_until_ns(self, node: str) -> int | None: ...
    def unobserved(self, node: str) -> list[tuple[int, int]]: ...
    def pending_backoffs(self) -> dict[tuple[str, str], tuple[int, float]]: ...
    def created_unstarted(self) -> dict[tuple[str, str], tuple[int, int]]: ...
    def api_view(self, key: AttemptKey) -> ApiView | None: ...
    def saturated(self) -> tuple[SaturatedSpan, ...]: ...
    def pace_samples(self) -> dict[str, list[PaceSample]]: ...
    def pod_startups(self) -> dict[str, list[PodStartup]]: ...
    def wait_for_change(self, timeout: float) -> None: ...


class Recorder(ClosesItsLog):
    """Records the attempts of every pod in ``namespace`` into ``run_dir``."""

    def __init__(
        self,
        scope: RecordingScope,
        *,
        exec_in_node: Callable[[str, list[str]], str] | None = None,
        observer: Observer = "events",
        spawn: Spawn | None = None,
        read_host: Callable[[], CpuTimes | None] = read_cpu_times,
        pace: PaceProbe | None = None,
    ) -> None:
        api, namespace, run_id, run_dir = scope.api, scope.namespace, scope.run_id, scope.run_dir
        node_workers = scope.node_workers
        self.api = api
        self.namespace = namespace
        self.run_id = run_id
        self.node_workers = dict(node_workers)
        self.observer = observer
        self.log = AttemptLog(run_dir)
        self.errors = RecorderErrors()
        # node -> when it was heard (node clock, ns) as its last complete listing came, or
        # first heard while none has: where a wait for a complete listing starts.
        self._complete_heard_ns: dict[str, int] = {}
        # node -> (pod UID, container) -> (attempt, created): created, not started yet.
        self._created: dict[str, dict[tuple[str, str], tuple[int, int]]] = {}
        # Every raw input, for a replay of this run (see crashloop_harness.recording.trace).
        self.trace = TraceWriter(run_dir / TRACE_FILE)
        self._exec_raw = exec_in_node or _docker_exec
        self._spawn = spawn
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._stop = threading.Event()
        self._watch_stopped_ns: int | None = None
        self._api_view: dict[AttemptKey, ApiView] = {}
        self._threads: list[threading.Thread] = []
        self._streams: list[NodeStream] = []
        self.watch = PodWatch(
            api, namespace, self._note, self.errors.add, self._stop, tap=self.trace
        )
        # Other pods' start-ups on each node, read while it observes and as it ends.
        self.startups = NodeStartups(api, run_id, self.trace, self.errors.add)
        # Containers a listing showed before any event did, then inspected.
        self.reconciled = 0
        # Per node: when it last spoke (monotonic), and how it last failed.
        self._answered_at = dict.fromkeys(self.node_workers, time.monotonic())
        self._last_failure: dict[str, str] = {}
        # Per node: how often its runtime failed since its last complete listing,
        # the latest failure, and whether the node itself answered meanwhile.
        self._runtime_failures: dict[str, int] = {}
        self._runtime_failure: dict[str, str] = {}
        self._answered_while_failing: set[str] = set()
        # Per node: node clock minus host clock, and the node-clock time of its
        # last complete listing (taken just before the listing was asked for).
        self._clock_offset_ns: dict[str, int] = {}
        self._listed_at_ns: dict[str, int] = {}
        self._heard_ns: dict[str, int] = {}
        # Per node: (from, to) node-clock ns between two signs of life UNOBSERVED_GAP apart.
        self._unobserved: dict[str, list[tuple[int, int]]] = {}
        # Per node: the kubelet process its first and latest pulse reported.
        self._kubelet_first: dict[str, KubeletProcess] = {}
        self._kubelet_last: dict[str, KubeletProcess] = {}
        # What observing cost, known once stopped.
        self._cpu_before: CpuReading | None = None
        self.cost: ObserverCost | None = None
        self._closed = False
        # This host's CPU, read once a second while the nodes speak: a late
        # restart while it was saturated is the machine's lateness.
        self._read_host = read_host
        self._host_read_at: float | None = None
        self._host_last: CpuTimes | None = None
        self._host_samples: list[CpuSample] = []
        # Each node's pace, probed beside the kubelet (crashloop_harness.recording.pace).
        self._pace = pace
        self._pace_samples: dict[str, list[PaceSample]] = {}

    # lifecycle -----------------------------------------------------------
    def start(self) -> None:
        self.prepare()
        self._threads = [threading.Thread(target=self.watch.run, name="watch-pods", daemon=True)]
        if self.observer == "poll":
            self._threads += [
                threading.Thread(
                    target=self._sample_node, args=(node,), name=f"cri-{node}", daemon=True
                )
                for node in self.node_workers
            ]
        else:
            self._streams = [
                NodeStream(
                    node,
                    docker_exec_argv(node, self.namespace),
                    self,
                    tap=self.trace,
                    **self._spawn_arg(),
                )
                for node in self.node_workers
            ]
        if self._pace is not None:
            pace = threading.Thread(target=self._probe_pace, name="pace", daemon=True)
            self._threads.append(pace)
        startups = threading.Thread(
            target=self.startups.run,
            args=(list(self.node_workers), self._stop),
            name="read-node-pods",
            daemon=True,
        )
        self._threads.append(startups)
        for thread in self._threads:
            thread.start()
        for stream in self._streams:
            stream.start()

    def prepare(self) -> None:
        """Before any reader runs: the CPU used so far, each node's clock; every node heard now.

        A replay of a trace calls this alone and feeds the readers' lines itself.
        """
        self._cpu_before = read_cpu()
        for node in self.node_workers:
            self._clock_offset_ns[node] = self._read_clock_offset(node)
        self._answered_at = dict.fromkeys(self.node_workers, time.monotonic())

    def _exec(self, node: str, argv: list[str]) -> str:
        """A command in the node, its output (or error) kept in the trace."""
        try:
            output = self._exec_raw(node, argv)
        except HarnessError as error:
            self.trace.write("exec", node=node, argv=argv, error=error.problem, fix=error.fix)
            raise
        self.trace.write("exec", node=node, argv=argv, output=output)
        return output

    def _spawn_arg(self) -> dict[str, Spawn]:
        return {} if self._spawn is None else {"spawn": self._spawn}

    def stop(self) -> None:
        """Stop reading, take one last listing of every node, close the log."""
        # From now on no level is read: a restart the last listing finds after this
        # moment cannot have shown its level (levels_until_ns).
        self._watch_stopped_ns = time.time_ns()
        self._stop.set()
        for stream in self._streams:
            stream.stop()
        for thread in self._threads:
            thread.join(timeout=timeouts.API_REQUEST)
        for node in self.node_workers:
            self.sample_once(node)
        if self._threads:  # a replay never starts the readers: it feeds what they read
            self.startups.read(self.node_workers)
        self.close_log(
            self.observer,
            reconciled=self.reconciled,
            reconnects=sum(max(0, s.connects - 1) for s in self._streams),
        )

    def __enter__(self) -> Recorder:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    # reading -------------------------------------------------------------
    def attempts(self) -> list[AttemptRecord]:
        with self._lock:
            return self.log.latest()

    def silent_nodes(self, longer_than: float) -> list[str]:
        """Nodes not heard from for ``longer_than`` seconds, with their last error.

        A node that stops answering (its container stopped, the Docker engine
        gone) records nothing more: waiting out the whole window for it would
        only end in a timeout that names the wrong cause.
        """
        now = time.monotonic()
        with self._lock:
            return [
                f"node {node} has not answered for {now - answered:.0f}s "
                f"({self._last_failure.get(node, 'no error recorded')})"
                for node, answered in self._answered_at.items()
                if now - answered > longer_than
            ]

    def broken_nodes(self) -> list[str]:
        """Nodes whose container runtime stopped answering, with its last failure.

        Broken: BROKEN_AFTER failures of the runtime in a row, and the node
        itself heard meanwhile. A node that answers nothing at all (its
        container stopped, the Docker engine gone) is silent instead, and
        :meth:`silent_nodes` names that cause.
        """
        with self._lock:
            stopped = [
                f"the container runtime of node {node} stopped answering: "
                f"{self._runtime_failure[node]}"
                for node, failures in self._runtime_failures.items()
                if failures >= BROKEN_AFTER and node in self._answered_while_failing
            ]
            stale = [
                f"node {node} gave no complete listing for {(heard - since) / 1e9:.0f}s (bound "
                f"LISTING_STALE): no 'now' on its clock to judge an overdue restart by; "
                f"last: {self._last_failure.get(node, 'a container it listed, not inspected')}"
                for node, heard in self._heard_ns.items()
                # On the node's clock: from its last complete listing (or first sign of life)
                # to its latest; a node not heard lately is silent, and says so itself.
                if (since := self._complete_heard_ns.get(node)) is not None
                and heard - since > timeouts.LISTING_STALE * 1e9
                and time.monotonic() - self._answered_at.get(node, 0.0) <= UNOBSERVED_GAP
            ]
            return stopped + stale

    def deleted_pods(self) -> dict[str, str]:
        """Pod name -> when (UTC, ISO 8601) the pod watch saw it deleted, evicted or replaced."""
        return self.watch.deleted_pods()

    def not_running(self) -> dict[str, str]:
        """Pod name -> why its containers cannot run, as its status last said."""
        return self.watch.not_running()

    def ended_pod_uids(self) -> frozenset[str]:
        """UIDs of the pods the watch saw end (every container stopped) or go."""
        return frozenset(self.watch.ended_pods)

    def kubelet_changes(self, made: Mapping[str, KubeletProcess] | None = None) -> KubeletChanges:
        """What happened to each node's kubelet between its first and latest pulse; ``made``:
        the processes the run's own restarts started, by node (see ``changes_between``)."""
        with self._lock:
            first, last = dict(self._kubelet_first), dict(self._kubelet_last)
        return changes_between(first, {node: last.get(node) for node in first}, made)

    def listed_at_ns(self, node: str) -> int | None:
        """The node-clock time of the node's last complete listing, None before the first.

        Everything that had happened on the node by then is in the records.
        """
        with self._lock:
            return self._listed_at_ns.get(node)

    def levels_until_ns(self, node: str) -> int | None:
        """The node-clock time the pod watch, which reads the kubelet's levels, stopped;
        None while it runs. The last listing may still find restarts made after it."""
        if self._watch_stopped_ns is None:
            return None
        return self._watch_stopped_ns + self._clock_offset_ns.get(node, 0)

    def unobserved(self, node: str) -> list[tuple[int, int]]:
        """Node-clock spans (ns) in which the node was silent for over UNOBSERVED_GAP seconds."""
        with self._lock:
            return list(self._unobserved.get(node, []))

    def created_unstarted(self) -> dict[tuple[str, str], tuple[int, int]]:
        """(pod UID, container) -> (attempt, created) of each container the runtime has
        created and not started yet, as the nodes' last listings show them: a restart the
        kubelet made in time is not overdue while the runtime is slow to start it."""
        with self._lock:
            recorded = {r.key for r in self.log.latest()}
            return {
                (uid, name): found
                for created in self._created.values()
                for (uid, name), found in created.items()
                if (uid, name, found[0]) not in recorded
            }

    def pending_backoffs(self) -> dict[tuple[str, str], tuple[int, float]]:
        """(pod uid, container) -> (attempt, back-off) reported for an attempt not yet run.

        The back-off message is posted while the container waits for its
        next attempt; until that attempt runs there is no record to carry it,
        yet it already confirms (or contradicts) the level.
        """
        with self._lock:
            return pending_from(self._api_view, {r.key for r in self.log.latest()})

    def api_view(self, key: AttemptKey) -> ApiView | None:
        """What the pod status has said about one attempt so far; None when nothing."""
        with self._lock:
            return self._api_view.get(key)

    def saturated(self) -> tuple[SaturatedSpan, ...]:
        """Spans (host clock, ns) in which this host's CPUs were saturated, the busiest share."""
        with self._lock:
            return saturated_spans(self._host_samples)

    def on_host_times(self, times: CpuTimes) -> None:
        """A reading of this host's CPU times (a replay feeds the recorded ones)."""
        with self._lock:
            before, self._host_last = self._host_last, times
            busy = None if before is None else busy_between(before, times)
            if busy is not None:
                self._host_samples.append(CpuSample(time.time_ns(), busy))

    def _sample_host(self) -> None:
        now = time.monotonic()
        with self._lock:
            if self._host_read_at is not None and now - self._host_read_at < SAMPLE_EVERY_S:
                return
            self._host_read_at = now
        times = self._read_host()
        if times is not None:
            self.trace.write("host", busy=times.busy, total=times.total)
            self.on_host_times(times)

    def pod_startups(self) -> dict[str, list[PodStartup]]:
        """node -> other pods' start-ups its kubelet listed at its latest read."""
        return self.startups.by_node()

    def pace_samples(self) -> dict[str, list[PaceSample]]:
        """node -> every pace probe it ran so far (crashloop_harness.recording.pace)."""
        with self._lock:
            return {node: list(samples) for node, samples in self._pace_samples.items()}

    def on_pace(self, sample: PaceSample) -> None:
        """One pace probe's sample (a replay feeds the recorded ones)."""
        with self._lock:
            self._pace_samples.setdefault(sample.node, []).append(sample)

    def _probe_pace(self) -> None:
        """Every node's pace probe, each PACE_EVERY_S, until the recorder stops."""
        assert self._pace is not None
        argv = pace_argv(self._pace.iterations)
        while not self._stop.is_set():
            for node in self.node_workers:
                try:
                    found = parse_pace(node, self._exec_raw(node, argv))
                except HarnessError as error:
                    found = error.problem
                if isinstance(found, str):
                    self.errors.add(f"pace of {node}: {found}")
                    continue
                self.trace.write(
                    "pace",
                    node=node,
                    started_ns=found.started_ns,
                    s=found.seconds,
                    probe=found.probe,
                )
                self.on_pace(found)
            self._stop.wait(PACE_EVERY_S)

    def wait_for_change(self, timeout: float) -> None:
        """Block until a record is written or ``timeout`` passes (a condition, not a sleep)."""
        with self._changed:
            self._changed.wait(timeout)

    # the node streams (called from their threads) -------------------------
    def on_event(self, node: str, event: CriEvent) -> None:
        self._heard(node)
        for container in event.containers:
            if container.pod_namespace == self.namespace and container.started_at_ns is not None:
                self._write(self._record(node, container))

    def on_pulse(self, node: str, pulse: PulseLine) -> None:
        self._heard(node)
        self._sample_host()
        if isinstance(pulse, Tick):
            return
        if isinstance(pulse, KubeletProcess):
            with self._lock:
                self._kubelet_first.setdefault(node, pulse)
                self._kubelet_last[node] = pulse
            return
        with self._lock:
            # A listing that parsed: the runtime answered, whatever failed before
            # (it need not be complete: a container removed meanwhile is no fault).
            self._runtime_failures.pop(node, None)
            self._runtime_failure.pop(node, None)
            self._answered_while_failing.discard(node)
        self._check_listing(node, pulse)

    def on_problem(self, node: str, message: str, *, unanswered: bool = False) -> None:
        self.errors.add(f"reading {node}: {message}")
        with self._lock:
            self._last_failure[node] = message
            if unanswered:
                self._runtime_failures[node] = self._runtime_failures.get(node, 0) + 1
                self._runtime_failure[node] = message

    def _check_listing(self, node: str, listing: Listing) -> None:
        """Count the listing once every container it shows is recorded.

        A container the events have not delivered (yet) gets EVENT_GRACE to
        arrive, then is inspected directly, off the pulse's thread so that a
        slow inspect cannot look like a silent node.
        """
        ours = [c for c in listing.containers if c.pod_namespace == self.namespace]
        self._note_created(node, ours)
        if not any(self._unrecorded(c) for c in ours):
            self._set_listed(node, listing.listed_at_ns)
            return
        threading.Thread(
            target=self._reconcile,
            args=(node, listing, ours),
            name=f"reconcile-{node}",
            daemon=True,
        ).start()

    def _reconcile(self, node: str, listing: Listing, ours: list[CriContainer]) -> None:
        deadline = time.monotonic() + EVENT_GRACE
        missing = [c for c in ours if self._unrecorded(c)]
        while missing and time.monotonic() < deadline:
            self.wait_for_change(timeout=deadline - time.monotonic())
            missing = [c for c in missing if self._unrecorded(c)]
        if not missing:
            self._set_listed(node, listing.listed_at_ns)
            return
        found = self._inspect(node, [c.id for c in missing])
        for container in found:
            if container.started_at_ns is not None:
                self._write(self._record(node, container))
        with self._lock:
            self.reconciled += len(found)
        if len(found) == len(missing):
            self._set_listed(node, listing.listed_at_ns)

    def _note_created(self, node: str, listed: list[CriContainer]) -> None:
        """The node's containers created and not started yet, as this listing shows them."""
        created = {
            (c.pod_uid, c.name): (c.attempt, c.created_at_ns)
            for c in listed
            if c.state == STATE_CREATED
            and c.created_at_ns is not None
            and c.pod_namespace == self.namespace
        }
        with self._lock:
            self._created[node] = created

    def _unrecorded(self, container: CriContainer) -> bool:
        """The listing shows more than the records: an attempt unseen, or its exit unseen."""
        if container.state not in (STATE_RUNNING, STATE_EXITED):
            return False
        with self._lock:
            known = {r.key: r for r in self.log.latest()}.get(container.key)
        if known is None:
            return True
        return container.state == STATE_EXITED and known.finished_at_ns is None

    def _heard(self, node: str) -> None:
        """The node spoke: it is alive now; a long silence before is an unobserved span."""
        now_ns = time.time_ns() + self._clock_offset_ns.get(node, 0)
        now = time.monotonic()
        with self._lock:
            previous_mono, previous_ns = self._answered_at.get(node), self._heard_ns.get(node)
            if (
                previous_mono is not None
                and previous_ns is not None
                and now - previous_mono > UNOBSERVED_GAP
            ):
                self._unobserved.setdefault(node, []).append((previous_ns, now_ns))
            self._answered_at[node] = now
            self._heard_ns[node] = now_ns
            self._complete_heard_ns.setdefault(node, now_ns)
            self._last_failure.pop(node, None)
            if self._runtime_failures.get(node):
                self._answered_while_failing.add(node)

    def _set_listed(self, node: str, listed_ns: int) -> None:
        with self._changed:
            if node in self._heard_ns:
                self._complete_heard_ns[node] = self._heard_ns[node]
            # A complete listing: the runtime answers, whatever failed before.
            self._runtime_failures.pop(node, None)
            self._runtime_failure.pop(node, None)
            self._answered_while_failing.discard(node)
            if listed_ns > self._listed_at_ns.get(node, 0):
                self._listed_at_ns[node] = listed_ns
                self._changed.notify_all()

    # the container runtime, asked directly --------------------------------
    def _sample_node(self, node: str) -> None:
        while not self._stop.is_set():
            self.sample_once(node)
            self._stop.wait(SAMPLE_PERIOD)

    def _read_clock_offset(self, node: str) -> int:
        """Node clock minus host clock, from one `date` in the node (0 where it cannot be read).

        A kind node shares the host's kernel clock, so this is about 0 there;
        reading it keeps "now on the node" honest without assuming that.
        """
        before = time.time_ns()
        try:
            node_ns = int(self._exec(node, ["date", "+%s%N"]).strip())
        except (HarnessError, ValueError) as error:
            self.errors.add(f"reading the clock of {node}: {first_line(error)}; using the host's")
            return 0
        after = time.time_ns()
        return node_ns - (before + after) // 2

    def sample_once(self, node: str) -> None:
        """List the node's run containers and inspect what the records lack (`docker exec`)."""
        asked_ns = time.time_ns() + self._clock_offset_ns.get(node, 0)
        try:
            listed = parse_ps(
                self._exec(
                    node,
                    [
                        "crictl",
                        "ps",
                        "-a",
                        "-o",
                        "json",
                        "--label",
                        f"{POD_NAMESPACE_LABEL}={self.namespace}",
                    ],
                )
            )
            wanted = [c.id for c in listed if self._needs_inspect(c)]
        except (HarnessError, ValueError) as error:
            # The node busy or restarting: the next sample sees everything again.
            self.on_problem(node, f"sampling: {first_line(error)}")
            return
        self._heard(node)
        self._note_created(node, listed)
        for container in self._inspect(node, wanted):
            if container.started_at_ns is not None:
                self._write(self._record(node, container))
        self._set_listed(node, asked_ns)

    def _inspect(self, node: str, ids: list[str]) -> list[CriContainer]:
        """`crictl inspect` of all at once; one by one when that fails.

        crictl fails the whole call when one container of the batch was removed
        meanwhile (a deleted pod, the kubelet's garbage collection); one such
        container must not hide the others, whose dead instances may be gone
        by the next sample.
        """
        if not ids:
            return []
        try:
            return parse_inspect_all(self._exec(node, ["crictl", "inspect", *ids]))
        except (HarnessError, ValueError) as error:
            if len(ids) == 1:
                self.errors.add(f"inspecting on {node}: {first_line(error)}")
                return []
        found: list[CriContainer] = []
        for container_id in ids:
            found += self._inspect(node, [container_id])
        return found

    def _needs_inspect(self, container: CriContainer) -> bool:
        if container.state not in (STATE_RUNNING, STATE_EXITED):
            return False
        with self._lock:
            known = {r.key: r for r in self.log.latest()}.get(container.key)
        return known is None or known.finished_at_ns is None

    def _record(self, node: str, container: CriContainer) -> AttemptRecord:
        """The attempt as ``container`` shows it, stamped now (the log keeps the first stamp)."""
        seen_ns = time.time_ns() + self._clock_offset_ns.get(node, 0)
        with self._lock:
            view = self._api_view.get(container.key, ApiView())
        return AttemptRecord.from_cri(
            container,
            run_id=self.run_id,
            worker=self.node_workers[node],
            node=node,
            reported_backoff_s=view.reported_backoff_s,
            api_started_at=view.api_started_at,
            api_finished_at=view.api_finished_at,
            seen_at_ns=seen_ns,
        )

    def _write(self, record: AttemptRecord) -> None:
        with self._changed:
            # A reconciling inspect that returns after the log closed: the
            # final listing of stop() recorded the attempt already.
            replaced = len(self.log.replaced)
            if not self._closed and self.log.append(record):
                self._changed.notify_all()
            for message in self.log.replaced[replaced:]:
                self.errors.add(message)

    # the pod watch's notes (called from its thread) ------------------------
    def _note(self, key: AttemptKey, note: PodNote) -> None:
        with self._changed:
            view = note_into(self._api_view, key, note)
            known = {r.key: r for r in self.log.latest()}.get(key)
            if known is None or self._closed:
                return
            report = view.ended.report if view.ended else None
            changes: dict[str, Any] = {
                "reported_backoff_s": view.reported_backoff_s,
                "api_started_at": view.api_started_at,
                "api_finished_at": view.api_finished_at,
            }
            if report is not None:
                # The workload's own report: a third source on the same attempt. A
                # later status without it keeps what an earlier one said.
                changes["self_started_at_ns"] = report.started_ns
                changes["self_finished_at_ns"] = report.finished_ns
                changes["self_finish_is_heartbeat"] = not report.exited
            updated = dataclasses.replace(known, **changes)
            if self.log.append(known.merged_with(updated)):
                self._changed.notify_all()


def note_into(views: dict[AttemptKey, ApiView], key: AttemptKey, note: PodNote) -> ApiView:
    """Add what the pod watch read about one attempt to its view; a later None keeps the known."""
    view = views.setdefault(key, ApiView())
    if note.reported is not None:
        view.reported_backoff_s = note.reported
    view.api_started_at = note.started or view.api_started_at
    view.api_finished_at = note.finished or view.api_finished_at
    view.ended = note.ended or view.ended
    return view


def pending_from(
    views: Mapping[AttemptKey, ApiView], recorded: set[AttemptKey]
) -> dict[tuple[str, str], tuple[int, float]]:
    """(pod uid, container) -> the latest (attempt, back-off) reported for an unrecorded attempt."""
    pending: dict[tuple[str, str], tuple[int, float]] = {}
    for key, view in views.items():
        if key in recorded or view.reported_backoff_s is None:
            continue
        uid, container, attempt = key
        known = pending.get((uid, container))
        if known is None or known[0] < attempt:
            pending[(uid, container)] = (attempt, view.reported_backoff_s)
    return pending


def _docker_exec(node: str, argv: list[str]) -> str:
    return run_in_node(node, argv, timeout=timeouts.API_REQUEST)
