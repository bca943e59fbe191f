"""Replay a recorded trace through the real recorder, check loop and verdict, on a fake clock.

A trace (:mod:`crashloop_harness.recording.trace`) holds every raw input a live run's
recorder met: node reader lines, pods from the watch, commands run in the
nodes and their output, with the time each arrived. The replay builds the
same recorder the run had (never started: no thread reads a node), and runs
the check's own :func:`~crashloop_harness.runs.check.observe` loop. Each time that loop
waits for a change, the replay moves a frozen clock (freezegun) forward and
feeds the inputs that arrived by then, through the same parsers; a command
the recorder runs in a node gets the output recorded for the same command.
Then :func:`~crashloop_harness.runs.check.finish_observation` stops the recorder and
:func:`~crashloop_harness.runs.check.conclude` judges, and the trace's own ending
(kubelets, engine) is applied as the live run applied it.

What a replay can change, to show a rule failing on the smallest wrong
behaviour: the curves the check is told (a neighbour curve), inputs left out
(the kubelet's back-off messages hidden), an interruption at a chosen time.
"""

from __future__ import annotations

import dataclasses
import json
import re
import signal
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from freezegun import freeze_time
from freezegun.api import FrozenDateTimeFactory, StepTickTimeFactory, TickingDateTimeFactory
from kubernetes import client

# Imported before any clock is frozen: pydantic builds the model classes at
# import, and must see the real datetime then.
from kubernetes.client.models.v1_pod import V1Pod

from crashloop_harness.cluster.kubeletstate import KubeletProcess
from crashloop_harness.cluster.target import RunEnding
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.model.backoff import BackoffCurve, curve_from_fields
from crashloop_harness.model.durations import NS_PER_S
from crashloop_harness.model.subject import is_bare
from crashloop_harness.recording.apirecorder import ApiRecorder
from crashloop_harness.recording.closing import RecorderErrors
from crashloop_harness.recording.hostcpu import CpuTimes, SaturatedSpan
from crashloop_harness.recording.nodepods import PodStartup
from crashloop_harness.recording.nodestream import NodeStream
from crashloop_harness.recording.observercost import ObserverCost
from crashloop_harness.recording.pace import RUNTIME_RUN, PaceSample
from crashloop_harness.recording.recorder import ApiView, Recorder
from crashloop_harness.recording.records import AttemptKey, AttemptRecord
from crashloop_harness.recording.scope import RecordingScope
from crashloop_harness.recording.trace import Tap, TraceEntry, read_trace
from crashloop_harness.runs.check import CheckResult, conclude, finish_observation, observe
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES, CheckProfile, Need, NeedRule
from crashloop_harness.runs.ending import apply_ending
from tests.fakeclock import REAL_TIME_FOR

TRACES = Path(__file__).parents[1] / "data" / "traces"
# What the replayed check loop waits for between two looks, as the live one does.
_FEED_KINDS = frozenset(
    {"event", "event-error", "err", "ended", "pod", "watch", "host", "lease", "pace", "node-pods"}
)
# How long after its loop ended a live run still read its nodes (stopping the
# readers, the final listing): inputs that late are fed before the verdict.
STOP_DRAIN_NS = 3 * NS_PER_S
Clock = FrozenDateTimeFactory | StepTickTimeFactory | TickingDateTimeFactory


class ReplayError(AssertionError):
    """The replay went where its trace cannot follow (past its end, a command never recorded)."""


class TraceEndedError(ReplayError):
    """The replayed check observed on past the moment its live run ended."""


# The reason of a replayed check that would have observed longer than its live run did.
TRACE_ENDED = "the recording ended while the check observed on (restarts set aside are owed)"


@dataclass(frozen=True)
class Trace:
    """A recorded run: its entries, the context the run wrote, its ending and outcome."""

    path: Path
    entries: tuple[TraceEntry, ...]

    @classmethod
    def load(cls, name_or_path: str | Path) -> Trace:
        path = Path(name_or_path)
        if not path.exists():
            path = TRACES / str(name_or_path) / "trace.jsonl.gz"
        return cls(path, tuple(read_trace(path)))

    def first(self, kind: str) -> TraceEntry:
        found = next((e for e in self.entries if e.kind == kind), None)
        if found is None:
            raise ReplayError(f"{self.path}: no {kind!r} entry")
        return found

    @property
    def context(self) -> Mapping[str, Any]:
        return self.first("context").fields

    @property
    def summary(self) -> Mapping[str, Any]:
        """What the live run concluded per worker (live.json, from its summary.json)."""
        loaded: Mapping[str, Any] = json.loads((self.path.parent / "live.json").read_text())
        return loaded

    @property
    def context_entry_ns(self) -> int:
        """When the run's pods had been created and its observation began."""
        return self.first("context").wall_ns

    @property
    def outcome(self) -> Mapping[str, Any]:
        return self.first("outcome").fields

    @property
    def ending(self) -> RunEnding:
        fields = self.first("ending").fields
        said = list(fields.get("stopped", ()))
        # A trace recorded before the ending kept its nodes keys each stopped kubelet by
        # its words; nothing in a replay looks the node up.
        nodes = list(fields.get("stopped_nodes", said))
        return RunEnding(
            tuple(fields.get("errors", ())),
            dict(zip(nodes, said, strict=True)),
            fields.get("engine_gone"),
        )

    def curves(self) -> dict[str, BackoffCurve]:
        return {s: curve_from_fields(f) for s, f in self.context["curves"].items()}


@dataclass
class Changes:
    """What a replay does differently from the live run."""

    # subject -> the curve the check is told instead of the recorded one.
    curves: Mapping[str, BackoffCurve] = field(default_factory=dict)
    # Inputs left out (a pod whose back-off messages are hidden, a node's pulse).
    drop: Callable[[TraceEntry], bool] | None = None
    # Inputs changed before they are fed (a pod's message rewritten).
    edit: Callable[[TraceEntry], TraceEntry] | None = None
    # Seconds after the pods were created at which this process gets ``signal``
    # (SIGINT, or SIGTERM with the CLI's handlers installed): a real signal,
    # delivered to the real handlers while the check loop waits.
    signal_after_s: float | None = None
    signal: int = signal.SIGINT
    # The ending applied instead of the recorded one.
    ending: RunEnding | None = None
    # Inputs added, fed in time order among the recorded ones (a host under load).
    add: tuple[TraceEntry, ...] = ()


def pod_from(fields: Mapping[str, Any]) -> Any:
    """A traced pod as the client model the watch delivered."""
    pod = dict(fields["pod"])
    # The trace keeps the spec's node alone; the model requires a container list.
    pod["spec"] = {"containers": [], **pod.get("spec", {})}
    return V1Pod.from_dict(pod)


class _RecordedExec:
    """Commands in a node answered from the trace, in the order the live run ran them."""

    def __init__(self, entries: tuple[TraceEntry, ...]) -> None:
        self._answers: dict[tuple[str, tuple[str, ...]], deque[TraceEntry]] = defaultdict(deque)
        for entry in entries:
            if entry.kind == "exec":
                key = (entry.node, tuple(entry.fields["argv"]))
                self._answers[key].append(entry)

    def __call__(self, node: str, argv: list[str]) -> str:
        # Only what the live run had answered by now on the frozen clock (a
        # replay interrupted early must not read the live run's last listing).
        now_ns = time.time_ns() + STOP_DRAIN_NS
        answers = self._answers.get((node, tuple(argv)))
        while answers and len(answers) > 1 and answers[1].wall_ns <= now_ns:
            answers.popleft()
        if not answers or answers[0].wall_ns > now_ns:
            raise HarnessError(f"replay: {node}: {' '.join(argv)} was not run by then live")
        entry = answers.popleft() if len(answers) > 1 else answers[0]
        if "error" in entry.fields:
            raise HarnessError(entry.fields["error"], entry.fields.get("fix", ""))
        return str(entry.fields["output"])


class Feeder:
    """The recorded inputs fed into the recorder as the frozen clock passes their time."""

    def __init__(
        self,
        trace: Trace,
        recorder: Recorder | ApiRecorder,
        clock: Clock,
        changes: Changes,
    ) -> None:
        self.trace = trace
        self.recorder = recorder
        self.clock = clock
        self.changes = changes
        self.now_ns = trace.entries[0].wall_ns
        fed = [e for e in trace.entries if e.kind in _FEED_KINDS]
        if changes.add:
            fed = sorted([*fed, *changes.add], key=lambda e: e.wall_ns)
        self._pending: Iterator[TraceEntry] = iter(fed)
        self._next: TraceEntry | None = next(self._pending, None)
        self._streams: dict[str, NodeStream] = {}
        self.started_ns = trace.context_entry_ns
        self.signalled = False
        # The live loop looked on until the run ended, inputs or none (a silent node).
        self.end_ns = trace.first("ending").wall_ns

    def feed_until(self, wall_ns: int, *, move_clock: bool = True) -> None:
        """Everything that arrived by ``wall_ns``; the clock then there, or at the last input."""
        while self._next is not None and self._next.wall_ns <= wall_ns:
            entry, self._next = self._next, next(self._pending, None)
            self._move(entry.wall_ns)
            self._feed(entry)
        if move_clock:
            self._move(wall_ns)

    @property
    def exhausted(self) -> bool:
        return self._next is None

    def advance(self, timeout_s: float) -> None:
        """Feed everything that arrived within ``timeout_s``; stop early once the log changed."""
        until_ns = self.now_ns + int(timeout_s * NS_PER_S)
        after_s = self.changes.signal_after_s
        if after_s is not None and not self.signalled:
            signal_ns = self.started_ns + int(after_s * NS_PER_S)
            if until_ns >= signal_ns:
                self._move(signal_ns)
                self.signalled = True
                signal.raise_signal(self.changes.signal)
        if self._next is None and self.now_ns >= self.end_ns:
            raise TraceEndedError("the replayed check ran past the end of its trace")
        before = len(self.recorder.attempts())
        while self._next is not None and self._next.wall_ns <= until_ns:
            entry, self._next = self._next, next(self._pending, None)
            self._move(entry.wall_ns)
            self._feed(entry)
            if len(self.recorder.attempts()) != before:
                return
        self._move(until_ns)

    def _move(self, wall_ns: int) -> None:
        self.now_ns = max(self.now_ns, wall_ns)
        self.clock.move_to(datetime.fromtimestamp(self.now_ns / NS_PER_S, UTC))

    def _feed(self, entry: TraceEntry) -> None:
        if self.changes.drop is not None and self.changes.drop(entry):
            return
        if self.changes.edit is not None:
            entry = self.changes.edit(entry)
        if entry.kind == "host":
            if isinstance(self.recorder, Recorder):
                self.recorder.on_host_times(CpuTimes(entry.fields["busy"], entry.fields["total"]))
        elif entry.kind == "pace":
            if isinstance(self.recorder, (Recorder, ApiRecorder)):
                self.recorder.on_pace(
                    PaceSample(
                        entry.node,
                        entry.fields["started_ns"],
                        entry.fields["s"],
                        # Traces from before the burst probe name no probe: the runtime's run.
                        entry.fields.get("probe", RUNTIME_RUN),
                    )
                )
        elif entry.kind == "node-pods":
            pods = [PodStartup.from_fields(fields) for fields in entry.fields["pods"]]
            self.recorder.startups.on_startups(entry.node, pods)
        elif entry.kind == "pod":
            self.recorder.watch.on_watch_event(entry.fields["type"], pod_from(entry.fields))
        elif entry.kind == "watch":
            self._feed_watch(entry)
        elif entry.kind == "lease":
            if isinstance(self.recorder, ApiRecorder):
                self.recorder.leases.on_renewed(entry.node, entry.fields["renewed_ns"])
        elif isinstance(self.recorder, Recorder):
            self._feed_reader(self.recorder, entry)

    def _feed_reader(self, recorder: Recorder, entry: TraceEntry) -> None:
        """What a node's reader delivered: runtime events, pulse lines, its end."""
        stream = self._stream(entry.node)
        if entry.kind == "event":
            stream.event_document(entry.fields["document"])
        elif entry.kind == "event-error":
            recorder.on_problem(entry.node, entry.fields["error"])
        elif entry.kind == "err":
            stream.pulse_line(entry.fields["line"])
        elif entry.kind == "ended":
            stream.reader_ended(entry.fields["code"], restarting=entry.fields["restarting"])

    def _feed_watch(self, entry: TraceEntry) -> None:
        """What the watch met besides pods: a failed request, a relist's names."""
        if "problem" in entry.fields:
            self.recorder.watch.problem(entry.fields["problem"])
        elif "relisted" in entry.fields:
            self.recorder.watch.on_relisted(entry.fields["relisted"])

    def _stream(self, node: str) -> NodeStream:
        if node not in self._streams:
            assert isinstance(self.recorder, Recorder)
            self._streams[node] = NodeStream(node, [], self.recorder)
        return self._streams[node]


class ReplayRecorder:
    """The real recorder, whose waits move the frozen clock and feed the trace."""

    def __init__(self, inner: Recorder | ApiRecorder, feeder: Feeder) -> None:
        self.inner = inner
        self.feeder = feeder
        self.errors: RecorderErrors = inner.errors
        self.trace: Tap = inner.trace

    @property
    def cost(self) -> ObserverCost | None:
        return self.inner.cost

    @cost.setter
    def cost(self, value: ObserverCost | None) -> None:
        self.inner.cost = value

    def start(self) -> None:
        raise ReplayError("a replay never starts the readers")

    def stop(self) -> None:
        # The live run's loop ended here; what its readers still delivered
        # before they were stopped is fed, then the final listing is taken.
        self.feeder.feed_until(self.feeder.now_ns + STOP_DRAIN_NS, move_clock=False)
        self.inner.stop()
        # The kubelets' pod lists the live recorder read as it stopped, however long it took.
        drop = self.feeder.changes.drop
        for entry in self.feeder.trace.entries:
            if entry.kind == "node-pods" and (drop is None or not drop(entry)):
                pods = [PodStartup.from_fields(fields) for fields in entry.fields["pods"]]
                self.inner.startups.on_startups(entry.node, pods)

    def attempts(self) -> list[AttemptRecord]:
        return self.inner.attempts()

    def silent_nodes(self, longer_than: float) -> list[str]:
        return self.inner.silent_nodes(longer_than)

    def broken_nodes(self) -> list[str]:
        return self.inner.broken_nodes()

    def deleted_pods(self) -> dict[str, str]:
        return self.inner.deleted_pods()

    def not_running(self) -> dict[str, str]:
        return self.inner.not_running()

    def ended_pod_uids(self) -> frozenset[str]:
        return self.inner.ended_pod_uids()

    @property
    def observer(self) -> str:
        return self.inner.observer

    def kubelet_changes(self, made: Mapping[str, KubeletProcess] | None = None) -> Any:
        return self.inner.kubelet_changes(made)

    def listed_at_ns(self, node: str) -> int | None:
        return self.inner.listed_at_ns(node)

    def levels_until_ns(self, node: str) -> int | None:
        return self.inner.levels_until_ns(node)

    def unobserved(self, node: str) -> list[tuple[int, int]]:
        return self.inner.unobserved(node)

    def pending_backoffs(self) -> dict[tuple[str, str], tuple[int, float]]:
        return self.inner.pending_backoffs()

    def created_unstarted(self) -> dict[tuple[str, str], tuple[int, int]]:
        return self.inner.created_unstarted()

    def api_view(self, key: AttemptKey) -> ApiView | None:
        return self.inner.api_view(key)

    def saturated(self) -> tuple[SaturatedSpan, ...]:
        return self.inner.saturated()

    def pace_samples(self) -> dict[str, list[PaceSample]]:
        return self.inner.pace_samples()

    def pod_startups(self) -> dict[str, list[PodStartup]]:
        return self.inner.pod_startups()

    def wait_for_change(self, timeout: float) -> None:
        self.feeder.advance(timeout)


def _profile(context: Mapping[str, Any]) -> CheckProfile:
    known = CHECK_PROFILES.get(str(context["profile"]))
    rule = known.rule if known is not None else NeedRule(level_limit_s=80, min_restarts=10)
    return CheckProfile(
        str(context["profile"]),
        float(context["timeout_s"]),
        rule,
        fixed_window=bool(context["fixed_window"]),
    )


def build_recorder(
    trace: Trace, run_dir: Path, node_workers: Mapping[str, str]
) -> Recorder | ApiRecorder:
    """The recorder the live run had, prepared and never started (call on the frozen clock)."""
    context = trace.context
    scope = RecordingScope(
        client.ApiClient(), context["namespace"], str(context["run_id"]), run_dir, node_workers
    )
    if context["observer"] == "selfreport":
        return ApiRecorder(scope)
    recorder = Recorder(
        scope,
        exec_in_node=_RecordedExec(trace.entries),
        # The host's load comes from the trace, never from this machine's.
        read_host=lambda: None,
    )
    recorder.prepare()
    return recorder


def replay_check(trace: Trace, run_dir: Path, changes: Changes | None = None) -> CheckResult:
    """The check of ``trace`` run again on the real code; the verdict it reaches now."""
    changes = changes or Changes()
    context = trace.context
    curves = {**trace.curves(), **changes.curves}
    result = CheckResult(
        run_id=str(context["run_id"]),
        run_dir=run_dir,
        profile=_profile(context),
        rows=[],
        curves=curves,
        nodes=dict(context["nodes"]),
        needs={s: Need(**n) for s, n in context["needs"].items()},
        pods=dict(context["pods"]),
        # The restart-cost probes the live run started (none in traces kept before them).
        probes={
            str(e.fields["pod"]): str(e.fields["node"]) for e in trace.entries if e.kind == "probe"
        },
    )
    node_workers = {node: subject for subject, node in result.nodes.items() if is_bare(subject)}
    run_dir.mkdir(parents=True, exist_ok=True)
    start = datetime.fromtimestamp(trace.entries[0].wall_ns / NS_PER_S, UTC)
    # The client's lazily imported models must see the real datetime (pydantic
    # builds their schemas at import); the harness's own modules see the clock.
    with freeze_time(start, ignore=REAL_TIME_FOR) as clock:
        inner = build_recorder(trace, run_dir, node_workers)
        feeder = Feeder(trace, inner, clock, changes)
        feeder.feed_until(trace.context_entry_ns)
        recorder = ReplayRecorder(inner, feeder)
        try:
            observe(result, recorder, None, threading.Event())
        except KeyboardInterrupt:
            result.status = "interrupted"
            result.reason = "interrupted (a signal) before every worker was observed"
        except TraceEndedError:
            # Today's check would observe on (restarts set aside are owed) where the
            # live one ended: judged on what the recording holds, as an interrupted run.
            result.status = "interrupted"
            result.reason = TRACE_ENDED
        finally:
            finish_observation(result, recorder)
            conclude(result)
            apply_ending(result, changes.ending or trace.ending)
    return result


def hide_backoff_messages(subject_pods: set[str]) -> Callable[[TraceEntry], TraceEntry]:
    """An edit that removes the kubelet's waiting message from these pods' statuses."""

    def edit(entry: TraceEntry) -> TraceEntry:
        if entry.kind != "pod" or entry.fields["pod"]["metadata"].get("name") not in subject_pods:
            return entry
        pod = json.loads(json.dumps(entry.fields["pod"]))
        for status in pod["status"].get("containerStatuses", []) or []:
            waiting = (status.get("state") or {}).get("waiting")
            if waiting is not None:
                waiting.pop("message", None)
        return dataclasses.replace(entry, fields={**entry.fields, "pod": pod})

    return edit


def rewrite_backoff_messages(
    subject_pods: set[str], level: str
) -> Callable[[TraceEntry], TraceEntry]:
    """An edit that makes these pods' waiting messages report ``level`` (Go duration text)."""

    def edit(entry: TraceEntry) -> TraceEntry:
        if entry.kind != "pod" or entry.fields["pod"]["metadata"].get("name") not in subject_pods:
            return entry
        pod = json.loads(json.dumps(entry.fields["pod"]))
        for status in pod["status"].get("containerStatuses", []) or []:
            waiting = (status.get("state") or {}).get("waiting") or {}
            if waiting.get("message"):
                waiting["message"] = re.sub(
                    r"back-off \S+", f"back-off {level}", waiting["message"]
                )
        return dataclasses.replace(entry, fields={**entry.fields, "pod": pod})

    return edit


def host_load(trace: Trace, busy: float, *, ticks_per_s: int = 100) -> tuple[TraceEntry, ...]:
    """Host CPU readings once a second over the whole observation, ``busy`` of every core."""
    start, end = trace.context_entry_ns, trace.first("ending").wall_ns
    entries, total, used = [], 0, 0
    for at_ns in range(start - NS_PER_S, end + NS_PER_S, NS_PER_S):
        total += 2 * ticks_per_s
        used += round(2 * ticks_per_s * busy)
        entries.append(TraceEntry("host", at_ns, at_ns, {"busy": used, "total": total}))
    return tuple(entries)
