"""Shared factories of the unit tests: curves, attempts, verdicts, summaries, plot data."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from crashloop_harness.cluster.info import ClusterInfo
from crashloop_harness.cluster.liveconfig import NodeConfigRow
from crashloop_harness.model.backoff import BackoffCurve, curve_for
from crashloop_harness.model.kubeletconfig import KubeletBackoffConfig
from crashloop_harness.model.releases import (
    KUBELET_CRASHLOOP_BACKOFF_MAX,
    REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY,
)
from crashloop_harness.outputs.summary import MetricSummary, RunSummary, summarize
from crashloop_harness.outputs.summaryfile import read_summary
from crashloop_harness.recording.records import AttemptRecord, read_attempts
from crashloop_harness.scenarios.headline import ScenarioMetric
from crashloop_harness.verdict import RestartCheck, WorkerVerdict, judge_worker

NS = 1_000_000_000
T0 = 1_767_261_600 * NS
RUN_NS = 50_000_000  # a crashing container lives about 50ms
FAST = curve_for(KubeletBackoffConfig(max_container_restart_period=timedelta(seconds=2)))
REDUCED = curve_for(
    KubeletBackoffConfig(
        feature_gates=((REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY, True),),
        max_container_restart_period=timedelta(seconds=60),
    )
)
DEFAULT = curve_for(KubeletBackoffConfig())


def attempts(
    delays_s: Sequence[float],
    *,
    runs_s: Sequence[float] | None = None,
    reported: Sequence[float | None] | None = None,
    last_running: bool = False,
) -> list[AttemptRecord]:
    """Attempt 0 plus one attempt per delay; restart n starts delays_s[n-1] after exit n-1."""
    runs = list(runs_s) if runs_s is not None else [RUN_NS / NS] * (len(delays_s) + 1)
    reports = list(reported) if reported is not None else [None] * len(delays_s)
    records: list[AttemptRecord] = []
    started = T0
    for attempt in range(len(delays_s) + 1):
        if attempt:
            started = records[-1].finished_at_ns or 0
            started += round(delays_s[attempt - 1] * NS)
        finished: int | None = started + round(runs[attempt] * NS)
        if last_running and attempt == len(delays_s):
            finished = None
        records.append(
            AttemptRecord(
                run_id="r1",
                worker="fast-1",
                node="crashloop-worker",
                namespace="crashloop-e2e",
                pod="crashloop-fast",
                pod_uid="7c1f1e2a-4b7d-4a53-9a55-2f0d7e3c9b10",
                container="app",
                attempt=attempt,
                container_id=f"c{attempt}",
                started_at_ns=started,
                finished_at_ns=finished,
                exit_code=None if finished is None else 1,
                reported_backoff_s=reports[attempt - 1] if attempt else None,
            )
        )
    return records


def nominal(curve: BackoffCurve, count: int, extra_s: float = 0.3) -> list[float]:
    """Delays a little after each nominal back-off, as a healthy kubelet restarts."""
    return [d.total_seconds() + extra_s for d in curve.delays(count)]


def expected_reports(curve: BackoffCurve, count: int) -> list[float | None]:
    values = [curve.expected_reported_backoff(n) for n in range(1, count + 1)]
    return [None if v is None else v.total_seconds() for v in values]


STARTED = datetime(2026, 1, 1, 10, 0, 0, tzinfo=UTC)
FINISHED = STARTED + timedelta(minutes=3, seconds=20, milliseconds=250)
CLUSTER = ClusterInfo(
    name="crashloop", node_image="kindest/node:v1.35.0", kubernetes_version="v1.35.0"
)


# Restart 1 is slow on purpose (0.9s): it must not count in the overshoot.
# Restart 3's 2.4134567s checks the millisecond rounding of measured delays.
FAST_DELAYS = [0.9, 2.25, 2.4134567, 2.31, 2.5]
FAST_MEDIAN_OVERSHOOT = (0.31 + 0.4134567) / 2


# Restart 3 waits 35s where the default curve allows 20s + 10s + 1.5s.
DEFAULT_DELAYS = [0.4, 10.6, 35.0]


def row(
    worker: str, node: str, curve: BackoffCurve, period: str, *, reduced: bool = False
) -> NodeConfigRow:
    return NodeConfigRow(
        node=node,
        worker=worker,
        profile=worker,
        max_container_restart_period=period,
        feature_gates={
            KUBELET_CRASHLOOP_BACKOFF_MAX: True,
            REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY: reduced,
        },
        curve=curve,
        mismatches=(),
    )


ROWS = (
    row("fast", "crashloop-worker", FAST, "2s"),
    row("default", "crashloop-worker2", DEFAULT, "5m"),
    row("reduced", "crashloop-worker3", REDUCED, "1m", reduced=True),
)


def fast_verdict() -> WorkerVerdict:
    return judge_worker(
        attempts(FAST_DELAYS, reported=expected_reports(FAST, len(FAST_DELAYS))),
        FAST,
        worker="fast",
        node="crashloop-worker",
    )


def default_verdict() -> WorkerVerdict:
    return judge_worker(
        attempts(DEFAULT_DELAYS, reported=expected_reports(DEFAULT, len(DEFAULT_DELAYS))),
        DEFAULT,
        worker="default",
        node="crashloop-worker2",
    )


def empty_verdict() -> WorkerVerdict:
    return judge_worker([], REDUCED, worker="reduced", node="crashloop-worker3")


def make_summary(*verdicts: WorkerVerdict, **kwargs: object) -> RunSummary:
    args: dict[str, object] = {
        "run_id": "20260101T100000Z-conformance",
        "kind": "conformance",
        "profile": "quick",
        "started_at": STARTED,
        "finished_at": FINISHED,
        "cluster": CLUSTER,
        "verdicts": verdicts,
        "configs": ROWS,
        "attempts_recorded": {"fast": 6, "default": 4, "reduced": 0},
        **kwargs,
    }
    return summarize(**args)  # type: ignore[arg-type]


def passing_summary() -> RunSummary:
    return make_summary(fast_verdict())


def failing_summary() -> RunSummary:
    return make_summary(fast_verdict(), default_verdict(), empty_verdict())


def check(n: int, curve_n: int, margin: float | None) -> RestartCheck:
    return RestartCheck(
        n=n,
        expected_s=2.0 if curve_n > 1 else 0.0,
        measured_s=None if margin is None else 2.0 + margin,
        margin_s=margin,
        upper_bound_s=4.5,
        reported_s=None,
        passed=margin is not None,
        reason="",
        curve_n=curve_n,
    )


def scenario_metric(passed: bool, worker: str = "fast") -> MetricSummary:
    return MetricSummary(
        scenario="fast-restart",
        worker=worker,
        node=f"node-{worker}",
        name="time_to_ready_s",
        unit="s",
        expected=6.0,
        measured=7.1 if passed else 19.0,
        lower=6.0,
        upper=12.0,
        passed=passed,
        detail="first failure to Ready",
        message=f"fast-restart {worker}: time_to_ready_s: measured ...",
    )


def scenario_summary(*metrics: MetricSummary, **kwargs: object) -> RunSummary:
    args: dict[str, object] = {
        "run_id": "20260101T100000Z-scenarios",
        "kind": "scenario:fast-restart",
        "profile": "scenarios",
        "started_at": STARTED,
        "finished_at": STARTED + timedelta(seconds=60),
        "cluster": CLUSTER,
        "verdicts": [],
        "configs": [],
        "attempts_recorded": {},
        "metrics": metrics,
        **kwargs,
    }
    return summarize(**args)  # type: ignore[arg-type]


# A real `crashloop check --profile quick` run on kind v1.35, cut to 11 fast restarts.
RUN_QUICK = Path(__file__).parent / "data" / "run_quick"
WORKERS = ("fast", "reduced", "default")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def quick_summary() -> RunSummary:
    return read_summary(RUN_QUICK)


def quick_attempts() -> dict[str, list[AttemptRecord]]:
    by_worker: dict[str, list[AttemptRecord]] = {}
    for record in read_attempts(RUN_QUICK / "attempts.jsonl"):
        by_worker.setdefault(record.worker, []).append(record)
    return by_worker


def scenario_metrics() -> list[ScenarioMetric]:
    """Numbers shaped like the talk's three scenarios; reduced never reached the third."""
    return [
        ScenarioMetric("task isolation", "fast", "reset time", "s", 2, 3.1),
        ScenarioMetric("task isolation", "reduced", "reset time", "s", 1, 2.2),
        ScenarioMetric("task isolation", "default", "reset time", "s", 10, 14.8),
        ScenarioMetric("transient failure", "fast", "time to healthy", "s", 6, 9.0),
        ScenarioMetric("transient failure", "reduced", "time to healthy", "s", 7, 11.2),
        # The kubelet's window as the scenario builds it; the default worker's healthy
        # comes later than its code allows.
        ScenarioMetric(
            "transient failure", "default", "time to healthy", "s", 70, 84.1, 3, 70.0, 80.5
        ),
        ScenarioMetric("critical sidecar", "fast", "app isolated", "s", 2, 3.3),
        ScenarioMetric("critical sidecar", "reduced", "app isolated", "s", 1, None),
        ScenarioMetric("critical sidecar", "default", "app isolated", "s", 10, 15.2),
    ]


def neighbour_curve(max_s: float, *, reduced: bool = False) -> BackoffCurve:
    """The curve of a kubelet capped at ``max_s`` (with the reduced gate when ``reduced``)."""
    gates = ((REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY, True),) if reduced else ()
    return curve_for(
        KubeletBackoffConfig(
            feature_gates=gates, max_container_restart_period=timedelta(seconds=max_s)
        )
    )
