"""The event-driven observer against the polling one, on the same restarts of a real cluster.

While a check runs with the (default) event observer, a second recorder polls
the same namespace every 0.5s through `docker exec`, as every attempt was
recorded before. Both read the runtime, so they must agree to the nanosecond;
the event observer must not lose an attempt, even when its subscription on a
node breaks mid-run.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from kubernetes import client

from crashloop_harness.cluster.lifecycle import Cluster
from crashloop_harness.core import timeouts
from crashloop_harness.core.conventions import RUN_LABEL
from crashloop_harness.core.proc import run
from crashloop_harness.recording.recorder import Recorder
from crashloop_harness.recording.records import AttemptKey, AttemptRecord
from crashloop_harness.recording.scope import RecordingScope
from crashloop_harness.runs.check import CheckResult, run_check
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES, CheckProfile, Need

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

COMPARED = CheckProfile(
    "observer",
    timeouts.CHECK_QUICK,
    CHECK_PROFILES["quick"].rule,
    overrides={
        "fast": Need(min_restarts=14),
        "reduced": Need(min_restarts=5),
        "default": Need(min_restarts=3),
    },
)
# The poll recorder's last listing may come up to one period before the check
# stops: only attempts that started a margin before it are compared.
_MARGIN_NS = 2_000_000_000


def _by_key(records: list[AttemptRecord]) -> dict[AttemptKey, AttemptRecord]:
    return {record.key: record for record in records}


def test_events_lose_nothing_the_poller_sees_even_across_a_broken_subscription(
    crashloop_cluster: Cluster, tmp_path: Path
) -> None:
    node = f"{crashloop_cluster.name}-worker"
    started = threading.Event()
    broken = threading.Event()
    pollers: list[Recorder] = []

    def on_sample(result: CheckResult) -> None:
        if not started.is_set():
            started.set()
            api = crashloop_cluster.api()
            (namespace,) = (
                client.CoreV1Api(api)
                .list_namespace(label_selector=f"{RUN_LABEL}={result.run_id}")
                .items
            )
            poller = Recorder(
                RecordingScope(
                    api,
                    namespace.metadata.name,
                    result.run_id,
                    tmp_path,
                    {n: w for w, n in result.nodes.items()},
                ),
                observer="poll",
            )
            poller.start()
            pollers.append(poller)
        if not broken.is_set() and len(result.attempts.get("fast", [])) >= 5:
            broken.set()
            # The subscriber on one node dies: the node's reader must notice,
            # start again and lose nothing.
            run(["docker", "exec", node, "pkill", "-f", "^crictl events"], timeout=30)

    result = run_check(
        crashloop_cluster, COMPARED, lambda m: print(f"[observer] {m}"), on_sample=on_sample
    )
    assert broken.is_set(), "the subscription was never broken"
    (poller,) = pollers
    last_listed = {n: poller.listed_at_ns(n) for n in result.nodes.values()}
    poller.stop()
    assert result.status == "passed", result.reason

    events = _by_key([r for records in result.attempts.values() for r in records])
    polled = _by_key(poller.attempts())
    assert polled, "the poller recorded nothing"
    for key, seen in polled.items():
        # The poller runs on while the check writes its outputs and deletes its
        # pods: a restart after the event recorder's last listing is not its to see.
        last_look = result.node_now_ns.get(seen.worker)
        assert last_look is not None, f"the event recorder never listed {seen.node}"
        if seen.started_at_ns > last_look:
            continue
        assert key in events, f"the event observer lost {key}"
        assert events[key].started_at_ns == seen.started_at_ns
        if seen.finished_at_ns is not None and events[key].finished_at_ns is not None:
            assert events[key].finished_at_ns == seen.finished_at_ns
            assert events[key].exit_code == seen.exit_code
    for key, record in events.items():
        listed = last_listed.get(record.node)
        if listed is not None and record.started_at_ns < listed - _MARGIN_NS:
            assert key in polled, f"the poller missed {key}: compare the two recorders' logs"

    cost = result.observer
    assert cost is not None
    assert cost.observer == "events"
    assert cost.reconnects >= 1, "the broken subscription was never started again"
    assert cost.attempts_seen >= sum(n.min_restarts or 0 for n in COMPARED.overrides.values())
    assert poller.cost is not None
    print(f"[observer] events: {cost.headline()}")
    print(f"[observer] poll (beside it): {poller.cost.headline()}")
