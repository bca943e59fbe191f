"""Record every container attempt of a run from the Kubernetes API alone (no node access).

For clusters reached by a kubeconfig and nothing else: the workload reports
its own process start and exit (node clock, ns) in its termination message,
the kubelet copies that into the pod status, and the pod watch reads it with
the kubelet's back-off message and the API's whole-second times. An attempt
is recorded when it has ended: the crashing workload ends within
milliseconds of starting. A killed attempt (OOMKilled) leaves its last
heartbeat for an exit; one still running when the run ends is ended by the
run (its pod deleted with a grace period) and recorded with its start alone.
An attempt the status skipped (two ended between two status updates) is
recorded from the next one's message, which carries the earlier reports.

What the node's clock reads "now" (the time an overdue restart is judged
against) is estimated, never overstated: every report arrives after it was
written, so the smallest (arrival on this host's clock - exit on the node's
clock) bounds how far ahead this host's clock can be; a further
WATCH_SLACK_S covers an attempt that has started but whose report the watch
has not delivered yet.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Mapping
from typing import Final

from crashloop_harness.cluster.kubeletstate import KubeletChanges, KubeletProcess
from crashloop_harness.core import timeouts
from crashloop_harness.model.bounds import BOUNDS
from crashloop_harness.model.durations import NS_PER_S
from crashloop_harness.recording.closing import ClosesItsLog, RecorderErrors
from crashloop_harness.recording.hostcpu import SaturatedSpan
from crashloop_harness.recording.leasereader import LeaseReader
from crashloop_harness.recording.nodepods import NodeStartups, PodStartup
from crashloop_harness.recording.observercost import CpuReading, ObserverCost, read_cpu
from crashloop_harness.recording.pace import PaceSample
from crashloop_harness.recording.podpace import PodPaceReader
from crashloop_harness.recording.podwatch import Ended, PodNote, PodWatch
from crashloop_harness.recording.recorder import ApiView, note_into, pending_from
from crashloop_harness.recording.records import SOURCE_SELF, AttemptKey, AttemptLog, AttemptRecord
from crashloop_harness.recording.scope import RecordingScope
from crashloop_harness.recording.trace import TRACE_FILE, NoTrace, Tap, TraceWriter

# How long a started attempt may stay unknown to the watch: the report is
# written as the process exits (milliseconds after it starts) and the API
# server delivers the status update; anything later is the API's lateness.
WATCH_SLACK_S: Final = BOUNDS["watch_slack"].as_seconds()


class ApiRecorder(ClosesItsLog):
    """Records the attempts of every pod in ``namespace`` from the pod watch alone."""

    observer: Final = "selfreport"

    def __init__(
        self,
        scope: RecordingScope,
        *,
        label_selector: str = "",
        keep_trace: bool = True,
        pace: bool = False,
    ) -> None:
        api, namespace, run_id, run_dir = scope.api, scope.namespace, scope.run_id, scope.run_dir
        node_workers = scope.node_workers
        self.namespace = namespace
        self.run_id = run_id
        self.node_workers = dict(node_workers)
        self.log = AttemptLog(run_dir)
        self.errors = RecorderErrors()
        # Every pod the watch delivers, for a replay of this run; not where the
        # serialising would add to the very cost a run measures (overhead cells).
        self.trace: Tap = TraceWriter(run_dir / TRACE_FILE) if keep_trace else NoTrace()
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._stop = threading.Event()
        self._api_view: dict[AttemptKey, ApiView] = {}
        # Per node: the least (arrival here - exit there) seen, in ns.
        self._ahead_ns: dict[str, int] = {}
        # node -> the longest an attempt there ran: its report arrives only at its exit.
        self._longest_run_ns: dict[str, int] = {}
        self.watch = PodWatch(
            api,
            namespace,
            self._note,
            self.errors.add,
            self._stop,
            label_selector=label_selector,
            tap=self.trace,
        )
        # The nodes' own heartbeats: spans in which a node was not observed.
        self.leases = LeaseReader(
            api, self.node_workers, self.errors.add, self._stop, tap=self.trace
        )
        # Each node's pace, from the pace pod the check places on it (podpace); none
        # read unless the run asked for it.
        self.pace = PodPaceReader(
            api, namespace, self.node_workers, self.errors.add, self._stop, tap=self.trace
        )
        self._paced = pace
        # Other pods' start-ups on each node, read while it observes and as it ends.
        self.startups = NodeStartups(api, run_id, self.trace, self.errors.add)
        # The readers' threads, once started (a replay never starts them: it feeds them).
        self._threads: list[threading.Thread] = []
        self._cpu_before: CpuReading | None = None
        self.cost: ObserverCost | None = None
        self._closed = False

    def start(self) -> None:
        self._cpu_before = read_cpu()
        nodes = list(self.node_workers)
        self._threads = [
            threading.Thread(target=self.watch.run, name="watch-pods", daemon=True),
            threading.Thread(target=self.leases.run, name="read-leases", daemon=True),
            threading.Thread(
                target=self.startups.run, args=(nodes, self._stop), name="node-pods", daemon=True
            ),
        ]
        if self._paced:
            self._threads.append(
                threading.Thread(target=self.pace.run, name="read-pace", daemon=True)
            )
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=timeouts.API_REQUEST)
        if self._threads:
            self.startups.read(self.node_workers)
        self.close_log(self.observer)

    def pod_startups(self) -> dict[str, list[PodStartup]]:
        """node -> other pods' start-ups its kubelet listed at its latest read."""
        return self.startups.by_node()

    def attempts(self) -> list[AttemptRecord]:
        with self._lock:
            return self.log.latest()

    def silent_nodes(self, longer_than: float) -> list[str]:
        """Nodes whose kubelet has not renewed its Lease for ``longer_than`` seconds."""
        return self.leases.silent(longer_than)

    def broken_nodes(self) -> list[str]:
        """No node's runtime is asked directly: a broken one shows as restarts that stop."""
        return []

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
        """Not seen mid-run without node access; compared at the end (the kubelets' metrics)."""
        del made
        return KubeletChanges()

    def levels_until_ns(self, node: str) -> int | None:
        """None: every attempt it records comes through the watch that reads the levels."""
        del node
        return None

    def listed_at_ns(self, node: str) -> int | None:
        """A lower bound of the node's clock by which every started attempt is recorded.

        Counted from when the API last answered, not from now: a watch that
        stopped delivering must not make a restart it never reported look overdue.
        An attempt is recorded from the report it writes as it exits, so one that
        runs R seconds is known only R seconds after it started: less the longest
        run seen on the node too (found when a pod whose attempts run 5 s read as
        overdue while its next attempt was running).
        """
        with self._lock:
            ahead = self._ahead_ns.get(node)
            longest = self._longest_run_ns.get(node, 0)
        heard = self.watch.heard_at_ns
        if ahead is None or heard is None:
            return None
        return heard - ahead - longest - int(WATCH_SLACK_S * NS_PER_S)

    def unobserved(self, node: str) -> list[tuple[int, int]]:
        """Node-clock spans between two of its Lease's renewals further apart than a live
        kubelet's (see :mod:`crashloop_harness.recording.leasereader`)."""
        return self.leases.unobserved(node)

    def saturated(self) -> tuple[SaturatedSpan, ...]:
        """The nodes are not this host's: its load says nothing of their lateness."""
        return ()

    def pace_samples(self) -> dict[str, list[PaceSample]]:
        """node -> every sample its pace pod printed so far (none unless asked for)."""
        return self.pace.samples()

    def on_pace(self, sample: PaceSample) -> None:
        """One pace sample (a replay feeds the recorded ones)."""
        self.pace.on_sample(sample)

    def created_unstarted(self) -> dict[tuple[str, str], tuple[int, int]]:
        # No runtime to list: a container is seen once it started.
        return {}

    def pending_backoffs(self) -> dict[tuple[str, str], tuple[int, float]]:
        with self._lock:
            return pending_from(self._api_view, {r.key for r in self.log.latest()})

    def api_view(self, key: AttemptKey) -> ApiView | None:
        with self._lock:
            return self._api_view.get(key)

    def wait_for_change(self, timeout: float) -> None:
        with self._changed:
            self._changed.wait(timeout)

    def _note(self, key: AttemptKey, note: PodNote) -> None:
        arrived_ns = time.time_ns()
        with self._changed:
            view = note_into(self._api_view, key, note)
            if self._closed or view.ended is None or view.ended.report is None:
                return
            record = self._record(key, view, view.ended)
            if record is None:
                return
            records = self._skipped(key, view.ended)
            if not (view.ended.deleting and self._has_finish(key)):
                node = view.ended.node
                report = view.ended.report
                ahead = arrived_ns - report.finished_ns
                self._ahead_ns[node] = min(ahead, self._ahead_ns.get(node, ahead))
                ran = max(report.finished_ns - report.started_ns, 0)
                self._longest_run_ns[node] = max(ran, self._longest_run_ns.get(node, 0))
                records.insert(0, record)
            if self.log.extend(records):
                self._changed.notify_all()

    def _skipped(self, key: AttemptKey, ended: Ended) -> list[AttemptRecord]:
        """The attempts before ``key`` that the pod status never showed ended.

        The status shows only the newest ended attempt, so two ending between
        two status updates (a probe kill loop) hide the first. The workload's
        message carries the reports of the attempts before it; they are
        numbered back from its own count, used only where that count is the
        kubelet's (a process that never ran would shift every number).
        """
        report = ended.report
        uid, container, attempt = key
        if report is None or report.attempt != attempt:
            return []
        found = []
        for back, earlier in enumerate(report.earlier, start=1):
            number = attempt - back
            if earlier is None or number < 0 or self._has_finish((uid, container, number)):
                continue
            skipped = Ended(
                pod=ended.pod,
                node=ended.node,
                container_id="",
                exit_code=earlier.exit_code,
                reason="",
                report=earlier,
            )
            view = self._api_view.get((uid, container, number), ApiView())
            record = self._record((uid, container, number), view, skipped)
            if record is not None:
                found.append(record)
        return found

    def _has_finish(self, key: AttemptKey) -> bool:
        """The attempt's own end is recorded already (before its pod was deleted)."""
        return any(r.key == key and r.finished_at_ns is not None for r in self.log.latest())

    def _record(self, key: AttemptKey, view: ApiView, ended: Ended) -> AttemptRecord | None:
        worker = self.node_workers.get(ended.node)
        report = ended.report
        if worker is None or report is None:
            return None
        uid, container, attempt = key
        record = AttemptRecord(
            run_id=self.run_id,
            worker=worker,
            node=ended.node,
            namespace=self.namespace,
            pod=ended.pod,
            pod_uid=uid,
            container=container,
            attempt=attempt,
            container_id=ended.container_id,
            started_at_ns=report.started_ns,
            finished_at_ns=report.finished_ns,
            exit_code=ended.exit_code,
            reason=ended.reason,
            reported_backoff_s=view.reported_backoff_s,
            api_started_at=view.api_started_at,
            api_finished_at=view.api_finished_at,
            source=SOURCE_SELF,
            self_started_at_ns=report.started_ns,
            self_finished_at_ns=report.finished_ns,
            self_finish_is_heartbeat=not report.exited,
        )
        if ended.deleting:
            # Stopped by the run's own end (its pod deleted), not by the kubelet:
            # its start counts, its end is no exit to restart from. A finish
            # recorded before the deletion stays (see _has_finish).
            return dataclasses.replace(
                record,
                finished_at_ns=None,
                exit_code=None,
                reason="",
                api_finished_at=None,
                self_finished_at_ns=None,
                self_finish_is_heartbeat=None,
            )
        return record
