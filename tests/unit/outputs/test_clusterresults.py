"""Results kept in the cluster: a ConfigMap's size, its name, the oldest pruned, a node's Event."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from kubernetes import client

from crashloop_harness.outputs.clusterresults import (
    EVENT_MESSAGE_MAX,
    MAX_DATA_BYTES,
    bounded_data,
    configmap_name,
    event_words,
    not_passed_by_node,
    prune,
)
from crashloop_harness.outputs.summary import WorkerSummary
from crashloop_harness.verdict.failures import Failure

SUMMARY = json.dumps(
    {
        "schema_version": 3,
        "run_id": "20261207T210000Z-check-quick-abcd",
        "status": "failed",
        "passed": False,
        "reason": "fast: restart 3: too late",
        "workers": [{"worker": "fast", "node": "n1", "passed": False, "checks": ["x" * 100]}],
    }
)


def test_a_small_run_keeps_both_files_whole() -> None:
    assert bounded_data(SUMMARY, "<testsuites/>") == {
        "summary.json": SUMMARY,
        "junit.xml": "<testsuites/>",
    }


def test_an_oversized_junit_goes_first_and_is_said() -> None:
    data = bounded_data(SUMMARY, "x" * MAX_DATA_BYTES)
    assert data["summary.json"] == SUMMARY
    assert "junit.xml" not in data
    assert "junit.xml left out" in data["truncated"]


def test_an_oversized_summary_keeps_its_verdict() -> None:
    whole = json.loads(SUMMARY)
    whole["workers"][0]["checks"] = ["x" * 1000] * 1000
    data = bounded_data(json.dumps(whole), None)
    cut = json.loads(data["summary.json"])
    assert cut["status"] == "failed"
    assert cut["reason"] == "fast: restart 3: too late"
    assert cut["workers"] == [{"worker": "fast", "node": "n1", "passed": False}]
    assert sum(len(v) for v in data.values()) <= MAX_DATA_BYTES
    assert "cut to its verdict" in data["truncated"]


def test_a_run_s_configmap_name_is_a_dns_name() -> None:
    assert configmap_name("20261207T210000Z-check-quick-ABCD") == (
        "crashloop-result-20261207t210000z-check-quick-abcd"
    )


class _ConfigMaps:
    """The two calls prune makes, on a list of ConfigMaps made at known times."""

    def __init__(self, count: int) -> None:
        start = datetime(2026, 12, 1, tzinfo=UTC)
        self.maps = [
            client.V1ConfigMap(
                metadata=client.V1ObjectMeta(
                    name=f"run-{i:02d}", creation_timestamp=start + timedelta(days=i)
                )
            )
            for i in range(count)
        ]
        self.deleted: list[str] = []

    def list_namespaced_config_map(self, namespace: str, **_: Any) -> client.V1ConfigMapList:
        return client.V1ConfigMapList(items=list(reversed(self.maps)))

    def delete_namespaced_config_map(self, name: str, namespace: str, **_: Any) -> None:
        self.deleted.append(name)


def test_pruning_deletes_the_oldest_beyond_the_count() -> None:
    fake = _ConfigMaps(17)
    gone = prune(fake, "ns", kept=14)
    assert gone == ["run-00", "run-01", "run-02"]
    assert fake.deleted == gone


def test_pruning_below_the_count_deletes_nothing() -> None:
    fake = _ConfigMaps(3)
    assert prune(fake, "ns", kept=14) == []


def _worker(*, failures: tuple[str, ...], error: bool) -> WorkerSummary:
    return WorkerSummary(
        worker="fast",
        node="crashloop-worker",
        profile="fast",
        live_config=None,
        expected_s=(),
        measured_s=(),
        checks=(),
        passed=False,
        failures=failures,
        problems=(),
        notes=(),
        attempts_recorded=0,
        reported_seen=0,
        reported_expected=0,
        overshoot_median_s=None,
        overshoot_max_s=None,
        problem_failures=tuple(Failure("node-too-slow", w, error=error) for w in failures),
    )


def test_a_failed_node_s_event_names_the_kubelet_s_failure() -> None:
    reason, message = event_words([_worker(failures=("restart 3: too late",), error=False)])
    assert reason == "CrashLoopBackOffCheckFailed"
    assert message == "fast: restart 3: too late"


def test_an_unjudged_node_s_event_says_no_answer_and_fits_an_event() -> None:
    reason, message = event_words([_worker(failures=("too slow " * 500,), error=True)])
    assert reason == "CrashLoopBackOffUnjudged"
    assert len(message) == EVENT_MESSAGE_MAX


def test_a_failure_that_names_its_subject_is_not_named_twice() -> None:
    _, message = event_words([_worker(failures=("fast: restart 3: too late",), error=False)])
    assert message == "fast: restart 3: too late"


def test_a_node_s_subjects_make_one_event_its_bare_container_s_first() -> None:
    bare = _worker(failures=("fast: restart 5 overdue",), error=False)
    variant = dataclasses.replace(bare, worker="fast/runs-5s", failures=("too slow",))
    variant = dataclasses.replace(
        variant, problem_failures=(Failure("node-too-slow", "too slow", error=True),)
    )
    grouped = not_passed_by_node([bare, variant])
    assert list(grouped) == ["crashloop-worker"]
    reason, message = event_words(grouped["crashloop-worker"])
    # One of them the kubelet's failure: the node's Event says so.
    assert reason == "CrashLoopBackOffCheckFailed"
    assert message == "fast: restart 5 overdue (not passed beside it on this node: fast/runs-5s)"


def test_a_node_whose_every_subject_is_an_error_is_unjudged() -> None:
    only_errors = [_worker(failures=("too slow",), error=True)] * 2
    reason, _ = event_words(only_errors)
    assert reason == "CrashLoopBackOffUnjudged"
