"""Replay a recorded scenario run through the real scenarios, observation loop and metrics.

The recorder is rebuilt and fed exactly as a check's replay does
(:mod:`tests.replay.driver`); the scenarios themselves are the registry's,
observed by the run's own :func:`~crashloop_harness.runs.scenarios.observe_scenarios`
loop and judged by :func:`~crashloop_harness.runs.scenarios.conclude_scenarios`. What
the live run's view answered them (the pods listed by role, the pods' own
files) is answered again from the trace; what they create or delete touches
nothing.

A scenario may run threads of its own (task isolation's fresh pods wait on
the recorder too). The frozen clock then moves only once every such thread
is parked in a wait, so each thread sees the same instants on every replay.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import freezegun
import freezegun.config
from freezegun import freeze_time
from kubernetes import client

from crashloop_harness.cluster.kubeletstate import KubeletRestart, restart_from_fields
from crashloop_harness.model.durations import NS_PER_S
from crashloop_harness.recording.trace import TraceEntry
from crashloop_harness.runs.liverun import LiveRun
from crashloop_harness.runs.scenarios import ScenarioRun, conclude_scenarios, observe_scenarios
from crashloop_harness.scenarios import REGISTRY
from crashloop_harness.scenarios.common import LivePod
from tests.fakeclock import REAL_TIME_FOR
from tests.replay.driver import (
    STOP_DRAIN_NS,
    Changes,
    Feeder,
    ReplayError,
    ReplayRecorder,
    Trace,
    build_recorder,
)

# How long (real seconds) a scenario's own thread may take to reach its next
# wait: far beyond what reading a few records costs.
_THREAD_PARK_S = 20.0
# How often a wait for the threads looks again at those that ended.
_SETTLE_POLL_S = 0.02


class _Threads:
    """The scenarios' own threads: the clock moves only while all of them wait."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._main = threading.get_ident()
        self._before = set(threading.enumerate())
        self.moves = 0
        self._parked: dict[int | None, int] = {}  # thread -> the move it waits past
        self.stopping = False

    def _helpers(self) -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t not in self._before and t.is_alive()]

    def is_main(self) -> bool:
        return threading.get_ident() == self._main

    def park(self) -> None:
        """A helper thread waits until the clock has moved (or the run stops)."""
        with self._cond:
            seen = self.moves
            self._parked[threading.get_ident()] = seen
            self._cond.notify_all()
            self._cond.wait_for(lambda: self.moves != seen or self.stopping, _THREAD_PARK_S)
            self._parked.pop(threading.get_ident(), None)

    def quiesce(self) -> None:
        """Wait until every helper thread waits on this very instant, or has ended."""

        def settled() -> bool:
            return all(
                self._parked.get(t.ident) == self.moves or not t.is_alive() for t in self._helpers()
            )

        # A helper that ends says nothing to the condition, so it is polled, in slices of
        # real time (the replay's clock is frozen, and threading reads it too).
        with self._cond:
            for _ in range(round(_THREAD_PARK_S / _SETTLE_POLL_S)):
                if settled():
                    return
                self._cond.wait(_SETTLE_POLL_S)
            if not settled():
                busy = [t.name for t in self._helpers() if self._parked.get(t.ident) != self.moves]
                raise ReplayError(f"scenario threads never reached a wait: {busy}")

    def moved(self) -> None:
        with self._cond:
            self.moves += 1
            self._cond.notify_all()

    def stop(self) -> None:
        with self._cond:
            self.stopping = True
            self._cond.notify_all()


class _ThreadedReplayRecorder(ReplayRecorder):
    """The replay recorder whose clock waits for the scenarios' threads."""

    def __init__(self, inner: Any, feeder: Feeder, threads: _Threads) -> None:
        super().__init__(inner, feeder)
        self.threads = threads

    def wait_for_change(self, timeout: float) -> None:
        if not self.threads.is_main():
            self.threads.park()
            return
        self.threads.quiesce()
        super().wait_for_change(timeout)
        self.threads.moved()


@dataclass
class _Answers:
    """What the live view answered, by question, in the order it answered."""

    entries: Mapping[tuple[str, ...], list[TraceEntry]]

    def answer(self, key: tuple[str, ...]) -> TraceEntry:
        """The last answer given by now (the drain allowed), else the next one given."""
        given = self.entries.get(key)
        if not given:
            raise ReplayError(f"the live run was never asked {key}")
        now_ns = time.time_ns() + STOP_DRAIN_NS
        by_now = [entry for entry in given if entry.wall_ns <= now_ns]
        return by_now[-1] if by_now else given[0]


@dataclass
class _ReplayRun(LiveRun):
    """The run's view answered from its trace; creating and deleting touch nothing."""

    answers: _Answers = field(default_factory=lambda: _Answers({}))
    threads: _Threads = field(default_factory=_Threads)
    made: list[str] = field(default_factory=list)  # "create Pod x", "delete Pod y", in order

    def wait_for_change(self, timeout: float) -> None:
        self.recorder.wait_for_change(timeout=timeout)

    def pods(self, role: str) -> list[LivePod]:
        entry = self.answers.answer(("pods", role))
        return [LivePod(**pod) for pod in entry.fields["pods"]]

    def read_pod_file(self, pod: LivePod, file: str) -> str | None:
        text = self.answers.answer(("file", pod.name, file)).fields["text"]
        return None if text is None else str(text)

    def create_object(self, manifest: dict[str, Any]) -> None:
        self.made.append(f"create {manifest['kind']} {manifest['metadata']['name']}")

    def delete_pod(self, name: str) -> int:
        """When the live run sent the same request (the trace's own stamp)."""
        self.made.append(f"delete Pod {name}")
        sent = self.answers.entries.get(("delete", name))
        if not sent:
            raise ReplayError(f"the live run never deleted pod {name}")
        return int(sent[0].fields.get("sent_ns", sent[0].wall_ns))

    def delete_statefulset(self, name: str) -> None:
        self.made.append(f"delete StatefulSet {name}")

    def restart_kubelet(self, worker: str) -> KubeletRestart:
        """The restart the live run made of ``worker``'s kubelet, as it ended then."""
        self.made.append(f"restart kubelet {worker}")
        restart = restart_from_fields(self.answers.answer(("restart_kubelet", worker)).fields)
        if restart.after is not None:
            self.kubelets_restarted[restart.node] = restart.after
        return restart


def _answers(trace: Trace) -> _Answers:
    entries: dict[tuple[str, ...], list[TraceEntry]] = defaultdict(list)
    for entry in trace.entries:
        if entry.kind != "view":
            continue
        op = entry.fields["op"]
        if op == "pods":
            entries[("pods", entry.fields["role"])].append(entry)
        elif op == "file":
            entries[("file", entry.fields["pod"], entry.fields["file"])].append(entry)
        elif op == "delete" and entry.fields["object"] == "Pod":
            entries[("delete", entry.fields["name"])].append(entry)
        elif op == "restart_kubelet":
            entries[("restart_kubelet", entry.fields["worker"])].append(entry)
    return _Answers(dict(entries))


def made_live(trace: Trace) -> list[str]:
    """What the live run created and deleted after its pods, in order."""
    start = trace.context_entry_ns
    return [
        f"{e.fields['op']} {e.fields['object']} {e.fields['name']}"
        for e in trace.entries
        if e.kind == "view" and e.fields["op"] in ("create", "delete") and e.wall_ns > start
    ]


@dataclass
class ScenarioReplay:
    """A replayed scenario run: its result and what its scenarios asked to create or delete."""

    result: ScenarioRun
    made: list[str]


@contextmanager
def _threads_see_the_clock() -> Iterator[None]:
    """freezegun gives code called from a thread's run() the real time by default:
    the scenarios' own threads must read the replay's clock like the rest."""
    default = list(freezegun.config.settings.default_ignore_list)
    freezegun.configure(default_ignore_list=[m for m in default if m != "threading"])
    try:
        yield
    finally:
        freezegun.configure(default_ignore_list=default)


def replay_scenarios(trace: Trace, run_dir: Path, changes: Changes | None = None) -> ScenarioReplay:
    """The scenario run of ``trace`` run again on the real code; the metrics it reaches now."""
    changes = changes or Changes()
    context = trace.context
    if context.get("run") != "scenarios":
        raise ReplayError(f"{trace.path} is not a scenario run's trace")
    if context["observer"] != "events":
        raise ReplayError("replaying an existing cluster's scenario run is not supported")
    nodes = dict(context["nodes"])
    curves = {**trace.curves(), **changes.curves}
    wanted = tuple(context["scenarios"])
    result = ScenarioRun(
        run_id=str(context["run_id"]), run_dir=run_dir, scenarios=wanted, curves=curves, nodes=nodes
    )
    run_dir.mkdir(parents=True, exist_ok=True)
    start = datetime.fromtimestamp(trace.entries[0].wall_ns / NS_PER_S, UTC)
    threads = _Threads()
    # Built before the clock freezes: the client's models must see the real datetime.
    core = client.CoreV1Api(client.ApiClient())
    with _threads_see_the_clock(), freeze_time(start, ignore=REAL_TIME_FOR) as clock:
        inner = build_recorder(trace, run_dir, {node: worker for worker, node in nodes.items()})
        feeder = Feeder(trace, inner, clock, changes)
        feeder.feed_until(trace.context_entry_ns)
        recorder = _ThreadedReplayRecorder(inner, feeder, threads)
        live = _ReplayRun(
            core,
            str(context["namespace"]),
            result.run_id,
            str(context["image"]),
            nodes,
            recorder,
            kubelet_versions=dict(context["kubelet_versions"]),
            answers=_answers(trace),
            threads=threads,
        )
        watches = {name: REGISTRY[name].watch(live) for name in wanted}
        try:
            result.status, result.reason = observe_scenarios(live, watches, lambda _: None)
        finally:
            live.stopping.set()
            threads.stop()
            for watch in watches.values():
                watch.stop()
            recorder.stop()
            conclude_scenarios(result, live, watches, changes.ending or trace.ending)
    return ScenarioReplay(result, live.made)
