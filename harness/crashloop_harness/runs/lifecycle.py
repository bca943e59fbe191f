"""What every measured run (the check, the scenarios) shares, in one place.

At the start, each asked of the cluster whatever its kind
(:class:`~crashloop_harness.cluster.target.RunTarget`): the judged nodes'
live configs, a run directory, the workload image made pullable, the run's
namespace, and a recorder writing into the run directory. After: the
run's outputs published, and the clean-up. How a run ended is read by
:mod:`crashloop_harness.runs.execute` from the cluster's kubelets and judged in
:mod:`crashloop_harness.runs.ending`.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from kubernetes import client

from crashloop_harness.cluster.kube import delete_namespace, force_delete_pods
from crashloop_harness.cluster.kubeletstate import KubeletProcess
from crashloop_harness.cluster.liveconfig import NodeConfigRow
from crashloop_harness.cluster.target import RunTarget
from crashloop_harness.core.conventions import RUN_LABEL
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.paths import runs_dir
from crashloop_harness.core.progress import Progress
from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.outputs.junit import write_junit
from crashloop_harness.outputs.summary import RunSummary
from crashloop_harness.outputs.summaryfile import write_summary
from crashloop_harness.recording.apirecorder import ApiRecorder
from crashloop_harness.recording.hostcpu import SaturatedSpan
from crashloop_harness.recording.norecorder import NoRecorder
from crashloop_harness.recording.observercost import ObserverCost
from crashloop_harness.recording.recorder import AttemptRecorder, Observer, PaceProbe, Recorder
from crashloop_harness.recording.scope import RecordingScope


@dataclass(kw_only=True)
class RunState:
    """Where a measured run is and why; shared by the check and the scenario runs.

    Kept even when the run is interrupted: whatever was measured is judged
    and written with the state it ended in.
    """

    run_id: str
    run_dir: Path
    status: str = "running"
    reason: str = ""
    recorder_errors: list[str] = field(default_factory=list)
    # node -> what was said of its kubelet, which stopped or froze during the run.
    stopped_kubelets: dict[str, str] = field(default_factory=dict)
    # node -> the kubelet process a restart the run made on purpose started (a scenario
    # that restarts kubelets): the run's ending judges that node against it.
    kubelets_restarted_by_run: dict[str, KubeletProcess] = field(default_factory=dict)
    # What observing the run cost; set when the recorder stops.
    observer: ObserverCost | None = None
    # Spans (host clock) in which this host's CPUs were saturated, the busiest share in
    # each: the run's own measure of the moments its host, not the kubelet, was slow.
    saturated: tuple[SaturatedSpan, ...] = ()
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    finished_at: datetime | None = None
    # What the run's write step put in summary.json, kept here so that its caller need not
    # read back the file it just wrote. None until then, and for a run kind that writes
    # no summary (the overhead sweep).
    summary: RunSummary | None = None

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def written_summary(self) -> RunSummary:
        """The summary this run wrote; HarnessError if it wrote none.

        A run whose outputs failed ended ``error`` and its ``execute`` raised
        already; reaching here without one is a run kind that writes none.
        """
        if self.summary is None:
            raise HarnessError(
                f"run {self.run_id} wrote no summary ({self.status}"
                + (f": {self.reason})" if self.reason else ")"),
                f"its records are in {self.run_dir}; the error its outputs raised says why",
            )
        return self.summary


@dataclass(frozen=True)
class RunSetup:
    api: client.ApiClient
    rows: list[NodeConfigRow]
    nodes: dict[str, str]  # worker -> node
    curves: dict[str, BackoffCurve]  # worker -> curve of its live kubelet config
    run_id: str
    run_dir: Path
    image: str
    namespace: str
    recorder: AttemptRecorder
    # False when the run uses a namespace prepared for it (an existing
    # cluster's least-privilege set-up): only its pods are deleted afterwards.
    owns_namespace: bool = True
    # node -> why it was left out (its kubelet's config unreadable): not judged, and said.
    left_out: dict[str, str] = field(default_factory=dict)


LATEST: Final = "latest"


def new_run_dir(what: str) -> tuple[str, Path]:
    """A new run directory, named by time, kind and a random suffix.

    runs/latest moves to it only when it is finished (:func:`point_latest_at`):
    a reader of runs/latest never finds a half-written run.
    """
    run_id = f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-{what}-{uuid.uuid4().hex[:4]}"
    path = runs_dir() / run_id
    path.mkdir(parents=True)
    return run_id, path


def publish(run_dir: Path, summary: RunSummary) -> RunSummary:
    """summary.json and junit.xml in the run directory, which runs/latest then names."""
    write_summary(run_dir, summary)
    write_junit(run_dir, summary)
    point_latest_at(run_dir)
    return summary


def point_latest_at(run_dir: Path) -> None:
    """Move the ``latest`` link beside ``run_dir`` to it, atomically (a reader never misses it)."""
    link = run_dir.parent / LATEST
    staging = run_dir.parent / f".{LATEST}.{uuid.uuid4().hex[:8]}"
    staging.symlink_to(run_dir.name, target_is_directory=True)
    os.replace(staging, link)


def prepare_run(
    cluster: RunTarget,
    what: str,
    progress: Progress,
    *,
    require_profiles: bool = True,
    observer: Observer | None = "events",
    pace: bool = False,
) -> RunSetup:
    """Everything a run needs before its pods are created; fails before creating any.

    ``require_profiles=False`` lets a kubelet run another config than its
    profile (the caller judges against curves of its own; the rows still say
    where they differ). ``observer=None``: the run records nothing as a whole
    (the overhead sweep records each cell itself). A cluster read through the
    API alone (an existing one) records each attempt from the API, whatever
    the observer asked for. ``pace``: each judged node's pace is probed through the run
    (a check's): from inside a node that runs commands, else from the pace pod the run
    places on it (crashloop_harness.recording.podpace).
    """
    api = cluster.api()
    judged = cluster.node_rows(api, progress, require_profiles=require_profiles)
    curves = {row.worker: row.curve for row in judged.rows if row.worker is not None}
    run_id, run_dir = new_run_dir(what)
    image = cluster.ready_image(progress)
    namespace = cluster.run_namespace(api, what, run_id, progress)
    progress(f"run {run_id}: namespace {namespace.name}, records in {run_dir}")
    node_workers = {node: worker for worker, node in judged.nodes.items()}
    scope = RecordingScope(api, namespace.name, run_id, run_dir, node_workers)
    recorder: AttemptRecorder
    if observer is None:
        recorder = NoRecorder()
    elif not cluster.capabilities.node_command or observer == "selfreport":
        # Its own pods only: a prepared namespace may hold a fleet's other checks.
        recorder = ApiRecorder(scope, label_selector=f"{RUN_LABEL}={run_id}", pace=pace)
    else:
        recorder = Recorder(scope, observer=observer, pace=PaceProbe() if pace else None)
    return RunSetup(
        api,
        judged.rows,
        judged.nodes,
        curves,
        run_id,
        run_dir,
        image,
        namespace.name,
        recorder,
        namespace.owned,
        dict(judged.left_out),
    )


def clean_up(setup: RunSetup, engine_gone: str | None) -> None:
    """Delete the run's pods at once, then its namespace if it is the run's, unless the
    engine is gone.

    Pods on a node whose kubelet stopped would otherwise hold the namespace
    in Terminating until the node is declared lost (minutes); a run's pods
    hold nothing worth a grace period. In a prepared namespace only the run's
    own pods go: a fleet's other checks share it.
    """
    if engine_gone is None:
        force_delete_pods(setup.api, setup.namespace, f"{RUN_LABEL}={setup.run_id}")
        if setup.owns_namespace:
            delete_namespace(setup.api, setup.namespace)
