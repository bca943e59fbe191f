"""Zombies under exec probes: a PID 1 that does not reap, beside one that does.

The failure notes behind the talk (Redis under exec probes): the kubelet
killed probe commands that timed out, the children they had forked passed to
PID 1, Redis as PID 1 never reaped them, and the zombies piled up until the
pod could not fork; the fix was tini as PID 1. On each worker, two pods under
the node's PID limit (``podPidsLimit``, the kubelet's own, set by the
``crashloop-pids`` cluster):

- ``zombie-<worker>``: the workload's server as PID 1 with ``--no-reap``;
- ``zombie-init-<worker>``: the same server under the workload's own init,
  which reaps (tini's job).

Both have the same exec readiness probe, every ``PROBE_PERIOD_S`` with a 1 s
timeout: the workload binary forks ``ZOMBIES_PER_PROBE`` children that exit at
once and then hangs, so containerd kills it at the timeout and its children
(already zombies) pass to PID 1. The server samples its PID namespace every
second (zombies, tasks, and whether a fork still gives a running process) into
``zombies.log``; its ``/healthz``, the liveness probe (httpGet, every second),
fails once a fork failed, so the kubelet kills it and restarts it on the
worker's curve.

The headline, for a platform engineer: minutes from the container's start to
its kill, against ``pid_limit x period / zombies per probe``. The fill
itself starts from what the pod holds anyway (pause, the server's threads)
and ends when the zombies and what is in flight (a probe and its children)
reach the limit: measured here, in the bounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final

from crashloop_harness.pods import skeleton
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.scenarios import common, observing, zombiefill
from crashloop_harness.scenarios.eventlog import parse_events
from crashloop_harness.scenarios.liveness_kill import after_kill_metrics
from crashloop_harness.substrate.workloadimage import BINARY

NAME: Final = "zombie-reaping"
# Kills judged per worker, as in the liveness-kill scenario: four.
KILLS: Final = 4
PROBE_TIMEOUT_S: Final = 1
LIVENESS_PERIOD_S: Final = 1
# Three failures in a row: a fork that fails stays failed (the zombies stay),
# while a probe timed out by a loaded machine (run
# 20261206T160154Z-scenarios-33d0: load average 70, one failure killed sound
# containers) is not followed by two more.
LIVENESS_FAILURES: Final = 3
# The pod with the reaping init is watched this long from its start: three
# fills of the pod without it by the rule of thumb.
INIT_WINDOW: Final = timedelta(
    seconds=3 * zombiefill.POD_PIDS_LIMIT * zombiefill.PROBE_PERIOD_S / zombiefill.ZOMBIES_PER_PROBE
)
# The server stops on SIGTERM (143, under init too: init exits as it did);
# 137 if the 1 s grace period ran out.
KILL_EXIT_CODES: Final = frozenset({137, 143})
PROBES_LOG: Final = "probes.log"
PORT: Final = 8080

HEADLINE: Final = common.Headline("minutes_to_failure", "minutes until the pod fails")


def pod_name(worker: str) -> str:
    return f"zombie-{worker}"


def init_pod_name(worker: str) -> str:
    return f"zombie-init-{worker}"


def server_args() -> list[str]:
    """The server that does not reap what it inherits as PID 1."""
    return skeleton.workload_args(
        "server", "--no-reap", "--listen", f":{PORT}", "--interval", f"{zombiefill.SAMPLE_S}s"
    )


def zombie_pod(worker: str, run_id: str, image: str, *, init: bool) -> dict[str, Any]:
    """The server with the zombie-making readiness probe; ``init``: under the reaping init."""
    args = server_args()
    if init:
        args = [*skeleton.workload_args("init"), "--", *args, "--as-child"]
    container = skeleton.workload_container(
        skeleton.MAIN_CONTAINER,
        image,
        args,
        # A probe and its children, the fork check's child: a few Go processes at once.
        resources={
            "requests": {"cpu": "10m", "memory": "32Mi"},
            "limits": {"cpu": "500m", "memory": "96Mi"},
        },
    )
    container["ports"] = [{"containerPort": PORT, "name": "health"}]
    container["readinessProbe"] = {
        "exec": {
            "command": [
                BINARY,
                *skeleton.workload_args(
                    "probe-fork", "--children", str(zombiefill.ZOMBIES_PER_PROBE), "--run-for", "1h"
                ),
            ]
        },
        "periodSeconds": zombiefill.PROBE_PERIOD_S,
        "timeoutSeconds": PROBE_TIMEOUT_S,
        "failureThreshold": 1,
    }
    # Liveness from the server's first answer on: never a kill before it listens.
    container["startupProbe"] = _health_probe(answer_s=1, failures=60)
    container["livenessProbe"] = _health_probe(answer_s=2, failures=LIVENESS_FAILURES)
    return skeleton.pod_for_worker(
        name=(init_pod_name if init else pod_name)(worker),
        worker=worker,
        run_id=run_id,
        role=NAME,
        containers=[container],
    )


def _health_probe(*, answer_s: int, failures: int) -> dict[str, Any]:
    """An httpGet probe of the server's /healthz every liveness period."""
    return {
        "httpGet": {"path": "/healthz", "port": PORT},
        "periodSeconds": LIVENESS_PERIOD_S,
        "timeoutSeconds": answer_s,
        "failureThreshold": failures,
    }


def _pods(worker: str, run_id: str, image: str) -> list[dict[str, Any]]:
    return [
        zombie_pod(worker, run_id, image, init=False),
        zombie_pod(worker, run_id, image, init=True),
    ]


@dataclass
class _Watch(common.RunWatch):
    """Until restart KILLS has started on every worker's non-reaping pod and the
    init pods' window has ended; the pods' logs are read before they go."""

    logs: dict[str, tuple[str, str]] = field(default_factory=dict)  # pod -> (zombies, probes)

    def pending(self) -> list[str]:
        return [
            *observing.restarts_pending(self.run, NAME, pod_name, KILLS),
            *observing.windows_pending(
                self.run, NAME, init_pod_name, skeleton.MAIN_CONTAINER, INIT_WINDOW
            ),
        ]

    def collect(self) -> None:
        for pod in self.run.pods(NAME):
            self.logs[pod.name] = (
                self.run.read_pod_file(pod, zombiefill.ZOMBIES_LOG) or "",
                self.run.read_pod_file(pod, PROBES_LOG) or "",
            )

    def measure(self, on: common.Subject, attempts: Sequence[AttemptRecord]) -> common.WorkerResult:
        def pod(name: str) -> zombiefill.PodTrace:
            zombies, probes = self.logs.get(name, ("", ""))
            return zombiefill.PodTrace(
                attempts=observing.attempts_of(attempts, name, skeleton.MAIN_CONTAINER),
                samples=zombiefill.parse_samples(zombies),
                probes_ns=[e.unix_ns for e in parse_events(probes) if e.event == "probe"],
            )

        return zombie_reaping(on, bare=pod(pod_name(on.worker)), init=pod(init_pod_name(on.worker)))


# --- metrics (pure) -----------------------------------------------------------------------


def zombie_reaping(
    on: common.Subject, *, bare: zombiefill.PodTrace, init: zombiefill.PodTrace
) -> common.WorkerResult:
    """The non-reaping pod's fills, kills and restarts; the reaping pod's calm beside it."""
    return on.result(NAME, [*_bare_metrics(on, bare), *_init_metrics(init)])


def _bare_metrics(on: common.Subject, bare: zombiefill.PodTrace) -> list[common.Metric]:
    ordered = common.by_attempt(bare.attempts)
    first = ordered[0] if ordered else None
    fill = None if first is None else zombiefill.fill_of(first, bare.samples)
    metrics = [*zombiefill.growth(first, bare), *_fill_metrics(first, fill)]
    killed = [r for r in ordered if r.attempt < KILLS]
    metrics.append(
        common.exactly(
            "probe_kills",
            KILLS,
            measured=sum(r.exit_code in KILL_EXIT_CODES for r in killed),
            detail=(
                f"attempts 0..{KILLS - 1} must end by the kubelet's liveness kill "
                f"({sorted(KILL_EXIT_CODES)}): exit codes {[r.exit_code for r in killed]}"
            ),
        )
    )
    fills = [zombiefill.fill_of(r, bare.samples) for r in killed]
    metrics.append(
        common.exactly(
            "kills_after_fork_failure",
            KILLS,
            measured=sum(f is not None and f.failed_ns is not None for f in fills),
            detail=(
                "attempts whose server saw a fork fail before the kill; seconds to it: "
                + str([_since(f) for f in fills])
            ),
        )
    )
    verdict = on.judge(ordered, up_to=KILLS, confirm_levels=False)
    metrics.extend(after_kill_metrics(verdict))
    seen = len(verdict.checks) == KILLS and all(c.measured_s is not None for c in verdict.checks)
    if not seen:
        metrics.append(
            common.unmeasured("restarts_seen", f"restarts 1..{KILLS} were not all seen", "count")
        )
    return metrics


def _since(fill: zombiefill.Fill | None) -> float | None:
    if fill is None or fill.failed_ns is None:
        return None
    return round(common.seconds(fill.failed_ns - fill.start_ns), 1)


def _fill_metrics(first: AttemptRecord | None, fill: zombiefill.Fill | None) -> list[common.Metric]:
    if first is None or fill is None or fill.failed_ns is None:
        why = "the first attempt's server saw no fork fail"
        return [
            common.unmeasured("fork_failure_s", why),
            common.unmeasured(HEADLINE.metric, why, "min"),
        ]
    # The fork check fails when its child no longer fits beside the zombies and
    # the baseline (the model): no later than when the zombies alone fill the
    # limit, after at most one period for the first probe and one sample; no
    # earlier than with every process that can be in flight at once, less a
    # period's zombies.
    late_s = zombiefill.PROBE_PERIOD_S + zombiefill.SAMPLE_S
    lower_s = fill.model_s(zombiefill.MOST_IN_FLIGHT) - zombiefill.PROBE_PERIOD_S
    upper_s = fill.model_s(0) + late_s
    measured_s = common.seconds(fill.failed_ns - fill.start_ns)
    model = (
        f"limit {zombiefill.POD_PIDS_LIMIT}, baseline {fill.baseline} tasks (pause, the server), "
        f"{fill.in_flight} tasks the most seen in flight (one process of the binary; up to "
        f"{zombiefill.MOST_IN_FLIGHT} at once), "
        f"{zombiefill.ZOMBIES_PER_PROBE} zombies per "
        f"{zombiefill.PROBE_PERIOD_S}s probe; {fill.zombies_at_failure} zombies at the failure"
    )
    metrics = [
        common.bounded(
            "fork_failure_s",
            "s",
            expected=fill.model_s(1),
            measured=measured_s,
            lower=lower_s,
            upper=upper_s,
            detail=model,
        )
    ]
    if first.finished_at_ns is None:
        metrics.append(common.unmeasured(HEADLINE.metric, "the first kill was not seen", "min"))
        return metrics
    rule_s = zombiefill.POD_PIDS_LIMIT * zombiefill.PROBE_PERIOD_S / zombiefill.ZOMBIES_PER_PROBE
    # The kill follows the failed fork within the liveness probe's failures in a
    # row, a period apart, and a sample.
    metrics.append(
        common.bounded(
            HEADLINE.metric,
            "min",
            expected=rule_s / 60,
            measured=common.seconds(first.finished_at_ns - first.started_at_ns) / 60,
            lower=lower_s / 60,
            upper=(upper_s + LIVENESS_FAILURES * LIVENESS_PERIOD_S + zombiefill.SAMPLE_S) / 60,
            detail=(
                f"start to the liveness kill; the rule pid_limit x period / zombies per "
                f"probe = {zombiefill.POD_PIDS_LIMIT} x {zombiefill.PROBE_PERIOD_S}s / "
                f"{zombiefill.ZOMBIES_PER_PROBE}; "
                f"the bounds from the fill ({model})"
            ),
        )
    )
    return metrics


def _init_metrics(init: zombiefill.PodTrace) -> list[common.Metric]:
    samples = list(init.samples)
    span_s = common.seconds(samples[-1].unix_ns - samples[0].unix_ns) if samples else None
    window_s = INIT_WINDOW.total_seconds()
    probes = [
        t for t in init.probes_ns if samples and samples[0].unix_ns <= t <= samples[-1].unix_ns
    ]
    metrics = [
        common.bounded(
            "init_observed_s",
            "s",
            expected=window_s,
            measured=span_s,
            lower=window_s - 2 * zombiefill.SAMPLE_S,
            upper=None,
            detail="the reaping pod's samples, first to last: its whole window",
        ),
        # A probe's children are zombies of the probe until it is killed (it never
        # waits), and the fork check's child one of the server's until its next
        # poll: a sample may catch those, never more (the init reaps the rest
        # on each SIGCHLD).
        common.bounded(
            "init_max_zombies",
            "count",
            expected=0,
            measured=max((s.zombies for s in samples), default=None),
            lower=0,
            upper=zombiefill.ZOMBIES_PER_PROBE + 1,
            detail=f"the most zombies a sample saw, over {len(samples)} samples",
        ),
        common.exactly(
            "init_fork_failures",
            0,
            measured=sum(s.fork != zombiefill.FORK_OK for s in samples) if samples else None,
            detail="samples whose fork did not give a running process",
        ),
        common.exactly(
            "init_restarts",
            0,
            measured=max((r.attempt for r in init.attempts), default=None),
            detail="the reaping pod's container is never killed",
        ),
    ]
    metrics.append(_reaped(len(probes), span_s))
    return metrics


def _reaped(probes: int, span_s: float | None) -> common.Metric:
    """The children the reaping pod's probes left to its init: more than the limit holds.

    The same probes ran on it, and their children, had nobody reaped them,
    would have filled the limit. (Fewer probes than one a period: one that
    outlasts its period makes the kubelet's ticker skip a tick.)
    """
    return common.bounded(
        "init_children_reaped",
        "count",
        expected=(span_s or 0) / zombiefill.PROBE_PERIOD_S * zombiefill.ZOMBIES_PER_PROBE,
        measured=None if span_s is None else probes * zombiefill.ZOMBIES_PER_PROBE,
        lower=zombiefill.POD_PIDS_LIMIT,
        upper=None,
        detail=(
            f"the children of its {probes} probes over the window, each made a zombie "
            "by the probe's kill and reaped by the init; more than the PID limit holds"
        ),
    )


ZOMBIE_REAPING: Final = common.PodScenario(
    NAME, HEADLINE, _pods, _Watch, reads_node_files=True, only_when_named=True
)
