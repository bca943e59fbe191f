"""What every scenario shares: the protocol, its subject and its metrics (pure).

A scenario (one module each, registered in :mod:`crashloop_harness.scenarios`) says
which pods it deploys on a worker, what its run still waits for, and how its
records become per-worker metrics against the worker's live curve. The run
(:mod:`crashloop_harness.runs.scenarios`) drives every scenario through this protocol
and offers them a :class:`RunView`: the recorder's attempts, the pods and the
files their workloads write, and nothing of the cluster's client beyond that.

Every metric carries the model's expected value and the accepted range, built
with the conformance check's tolerance: a nominal back-off ``B`` may take from
``B`` to :func:`~crashloop_harness.model.backoff.upper_tolerance` ``(B)``; per-restart
delays are judged by :func:`crashloop_harness.verdict.judge_worker` itself, so a
scenario and the conformance check can never disagree on a restart.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from crashloop_harness.cluster.kubeletstate import KubeletRestart
from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.model.durations import NS_PER_S
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.verdict import CLOCK_ROUNDING, RestartCheck, WorkerVerdict, judge_worker

# --- the protocol -------------------------------------------------------------------------


@dataclass(frozen=True)
class Headline:
    """The one metric per worker that the talk's takeaways show."""

    metric: str  # the metric's name
    label: str  # what it says, for people


@dataclass(frozen=True)
class LivePod:
    """One of the run's pods as the API shows it now."""

    name: str
    uid: str
    worker: str
    ready: bool
    restart_counts: Mapping[str, int] = field(default_factory=dict)  # container -> count
    # container -> start of its running attempt as the API says it (whole seconds)
    api_started_ns: Mapping[str, int] = field(default_factory=dict)
    phase: str = ""  # the pod's phase: Pending, Running, Succeeded, Failed


class RunView(Protocol):
    """What a scenario may ask of the run it is observed in.

    ``create_object`` (a Pod or a StatefulSet), ``delete_pod`` and
    ``delete_statefulset`` raise HarnessError when the API refuses;
    ``delete_pod`` returns when its request went (host clock, ns);
    ``read_pod_file`` reports a file it cannot read through ``problem``;
    ``restart_kubelet`` restarts a worker's kubelet on purpose (the harness's own
    cluster only) and returns when it answers again, or the wait ran out.
    """

    @property
    def run_id(self) -> str: ...
    @property
    def image(self) -> str: ...
    @property
    def nodes(self) -> Mapping[str, str]:  # worker -> node
        ...
    @property
    def stopping(self) -> threading.Event:  # set when the run ends
        ...
    @property
    def kubelet_versions(self) -> Mapping[str, str]:  # worker -> its kubelet's version
        ...

    def attempts(self) -> list[AttemptRecord]: ...
    def wait_for_change(self, timeout: float) -> None: ...
    def pods(self, role: str) -> list[LivePod]: ...
    def read_pod_file(self, pod: LivePod, file: str) -> str | None: ...
    def create_object(self, manifest: dict[str, Any]) -> None: ...
    def delete_pod(self, name: str) -> int:  # when the request went (host clock, ns)
        ...
    def delete_statefulset(self, name: str) -> None:  # its pods stay, for reading
        ...
    def restart_kubelet(self, worker: str) -> KubeletRestart: ...
    def problem(self, text: str) -> None: ...


@dataclass(frozen=True)
class Subject:
    """The worker a scenario is measured on: its name, its node, its live back-off curve."""

    worker: str
    node: str
    curve: BackoffCurve

    def judge(
        self,
        attempts: Sequence[AttemptRecord],
        *,
        up_to: int | None = None,
        confirm_levels: bool = True,
    ) -> WorkerVerdict:
        """The conformance check's own verdict on these restarts of this worker: all of them,
        or with ``up_to`` attempts 0..up_to, the ones a scenario makes fail on purpose."""
        judged = [r for r in attempts if up_to is None or r.attempt <= up_to]
        return judge_worker(
            judged, self.curve, worker=self.worker, node=self.node, confirm_levels=confirm_levels
        )

    def result(
        self,
        scenario: str,
        metrics: Sequence[Metric],
        notes: Sequence[str] = (),
        *,
        judged: WorkerVerdict | None = None,
    ) -> WorkerResult:
        """``scenario``'s metrics on this worker; with ``judged``, the notes and problems the
        check's verdict found in the restarts it judged come first."""
        said = () if judged is None else (*judged.notes, *(p.words for p in judged.problems))
        return WorkerResult(
            scenario=scenario,
            worker=self.worker,
            node=self.node,
            metrics=tuple(metrics),
            notes=tuple(said) + tuple(notes),
        )


class Watch(Protocol):
    """One scenario's part of one run."""

    def pending(self) -> list[str]:
        """What the scenario still waits for (empty: done); may start its own work."""
        ...

    def collect(self) -> None:
        """Read what only the pods know, before the run deletes them."""
        ...

    def stop(self) -> None:
        """End whatever the scenario started (the run has set ``stopping``)."""
        ...

    def measure(self, on: Subject, attempts: Sequence[AttemptRecord]) -> WorkerResult:
        """The worker's metrics from every attempt of the run."""
        ...


@dataclass
class RunWatch:
    """What most watches are: the run they look at, nothing of their own to collect
    or stop; a scenario that reads the pods' files or starts threads overrides those."""

    run: RunView

    def collect(self) -> None:
        """Everything is in the recorder's attempts."""

    def stop(self) -> None:
        """Nothing runs in the background."""


class Scenario(Protocol):
    """A measured workload, deployed on every worker side by side."""

    @property
    def name(self) -> str:  # also the pods' role label
        ...

    @property
    def headline(self) -> Headline: ...

    @property
    def first_minor(self) -> int:
        """The first kubelet minor whose API has what it deploys (0: every pinned one).

        On an earlier release the API server would drop the fields it sets, and
        the scenario would measure something else.
        """
        ...

    @property
    def reads_node_files(self) -> bool:
        """True when it reads the workload's own files on the node: a cluster whose
        nodes a run reads (the harness's own), not one reached by a kubeconfig alone."""
        ...

    @property
    def restarts_kubelets(self) -> bool:
        """True when it restarts the workers' kubelets (wiping every back-off on them): it
        runs alone, and only when named."""
        ...

    @property
    def only_when_named(self) -> bool:
        """True when it runs only when asked for by name: it needs more of the cluster than
        the default run offers (the zombie scenario, a PID limit on every pod)."""
        ...

    def manifests(self, worker: str, run_id: str, image: str) -> list[dict[str, Any]]:
        """The long-lived objects on ``worker``: pods, or a StatefulSet that makes them."""
        ...

    def watch(self, run: RunView) -> Watch: ...


W = TypeVar("W", bound=Watch)


@dataclass(frozen=True)
class PodScenario(Generic[W]):
    """A scenario made of the pods ``pods`` gives each worker and one ``watch``: what every
    scenario but the StatefulSet's is, without a class of its own."""

    name: str
    headline: Headline
    pods: Callable[[str, str, str], list[dict[str, Any]]]  # (worker, run_id, image) -> pods
    watcher: Callable[[RunView], W]
    first_minor: int = 0
    reads_node_files: bool = False
    restarts_kubelets: bool = False
    only_when_named: bool = False

    def manifests(self, worker: str, run_id: str, image: str) -> list[dict[str, Any]]:
        return self.pods(worker, run_id, image)

    def watch(self, run: RunView) -> W:
        return self.watcher(run)


@dataclass(frozen=True, kw_only=True)
class Metric:
    """One measured quantity of one worker, with what the model expects.

    ``lower``/``upper`` bound what passes (None: unbounded); ``expected`` is
    None for a measurement with no model (the fresh-pod baseline).
    """

    name: str
    unit: str
    expected: float | None
    measured: float | None
    lower: float | None
    upper: float | None
    passed: bool
    detail: str = ""
    # The kubelet restarts whose back-offs ``expected`` adds up (headlines):
    # each also costs the machine a start and the kubelet a sync, which the
    # nominal curve leaves out.
    restarts: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, kw_only=True)
class WorkerResult:
    """Every metric of one scenario on one worker."""

    scenario: str
    worker: str
    node: str
    metrics: tuple[Metric, ...]
    notes: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        # A worker that measured nothing proves nothing.
        return bool(self.metrics) and all(m.passed for m in self.metrics)

    @property
    def failures(self) -> list[str]:
        return [self.message(m) for m in self.metrics if not m.passed]

    def message(self, m: Metric) -> str:
        """One line naming the scenario, worker, metric, measured value and bounds."""
        return (
            f"{self.scenario} {self.worker}: {m.name}: measured {show(m.measured)}, "
            f"expected {show(m.expected)} in [{show(m.lower)}, {show(m.upper)}] "
            f"{m.unit}: {m.detail}"
        )

    def metric(self, name: str) -> Metric:
        for metric in self.metrics:
            if metric.name == name:
                return metric
        raise KeyError(
            f"{self.scenario} {self.worker} has no metric {name!r}; it has "
            f"{', '.join(m.name for m in self.metrics) or 'none'}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "worker": self.worker,
            "node": self.node,
            "passed": self.passed,
            "metrics": [m.to_dict() for m in self.metrics],
            "notes": list(self.notes),
        }


def bounded(
    name: str,
    unit: str,
    *,
    expected: float | None,
    measured: float | None,
    lower: float | None,
    upper: float | None,
    detail: str = "",
    restarts: int | None = None,
) -> Metric:
    """A metric that passes when measured and within [lower, upper]."""
    passed = measured is not None
    if measured is not None and lower is not None:
        passed = passed and measured >= lower
    if measured is not None and upper is not None:
        passed = passed and measured <= upper
    if measured is None and not detail:
        detail = "not measured"
    return Metric(
        name=name,
        unit=unit,
        expected=expected,
        measured=measured,
        lower=lower,
        upper=upper,
        passed=passed,
        detail=detail,
        restarts=restarts,
    )


def exactly(
    name: str, expected: int, *, measured: float | None, unit: str = "count", detail: str = ""
) -> Metric:
    """A metric that passes only at ``expected``: a count (or an exit code) the kubelet's rule
    fixes, where one more or one fewer is the wrong behaviour."""
    return bounded(
        name,
        unit,
        expected=expected,
        measured=measured,
        lower=expected,
        upper=expected,
        detail=detail,
    )


# --- shared pieces ------------------------------------------------------------------------


def restart_metrics(prefix: str, checks: Sequence[RestartCheck]) -> list[Metric]:
    """One metric per restart, straight from the conformance verdict."""
    rounding = CLOCK_ROUNDING.total_seconds()
    return [
        Metric(
            name=f"{prefix}_{check.n}_s",
            unit="s",
            expected=check.expected_s,
            measured=check.measured_s,
            lower=check.expected_s - rounding,
            upper=check.upper_bound_s,
            passed=check.passed,
            detail=check.reason,
        )
        for check in checks
    ]


def unmeasured(name: str, why: str, unit: str = "s") -> Metric:
    return bounded(name, unit, expected=None, measured=None, lower=None, upper=None, detail=why)


def by_attempt(attempts: Sequence[AttemptRecord]) -> list[AttemptRecord]:
    return sorted(attempts, key=lambda r: r.attempt)


def run_ns(record: AttemptRecord) -> int | None:
    if record.finished_at_ns is None:
        return None
    return record.finished_at_ns - record.started_at_ns


def seconds(ns: int) -> float:
    return ns / NS_PER_S


def show(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"
