"""A fleet's answer from what each cluster's nightly kept."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from crashloop_harness.fleet.collect import KeptRun, collected_exit, read_kept, read_kept_fleet
from crashloop_harness.fleet.keep import fleet_data, node_events
from crashloop_harness.fleet.summary import GroupSummary
from crashloop_harness.outputs.clusterresults import MAX_DATA_BYTES, bounded_data, data_size

SUMMARY = {
    "schema_version": 3,
    "run_id": "20261207T030000Z-check-quick-abcd",
    "status": "failed",
    "passed": False,
    "reason": "fast: restart 3: too late",
    "workers": [
        {"worker": "fast", "node": "pool-a-1", "passed": False, "checks": []},
        {"worker": "reduced", "node": "pool-b-1", "passed": True, "checks": []},
    ],
}


def test_a_kept_summary_names_its_run_verdict_and_the_nodes_that_did_not_pass() -> None:
    run_id, status, reason, not_passed = read_kept(json.dumps(SUMMARY))
    assert (run_id, status, reason) == (SUMMARY["run_id"], "failed", "fast: restart 3: too late")
    assert not_passed == ("pool-a-1 (fast)",)


def test_a_summary_cut_to_its_verdict_reads_the_same() -> None:
    whole = json.loads(json.dumps(SUMMARY))
    whole["workers"][0]["checks"] = ["x" * 1000] * 1000
    cut = bounded_data(json.dumps(whole), None)
    assert len(json.dumps(whole)) > MAX_DATA_BYTES
    assert read_kept(cut["summary.json"]) == read_kept(json.dumps(SUMMARY))


def _run(status: str | None, missing: str | None = None) -> KeptRun:
    return KeptRun(context="c", status=status, missing=missing)


def test_the_exit_pages_on_a_failure_before_anything_else() -> None:
    assert collected_exit([_run("passed"), _run("failed"), _run(None, "no kept run")]) == 1
    assert collected_exit([_run("passed"), _run("error")]) == 4
    assert collected_exit([_run("passed"), _run(None, "unreachable")]) == 4
    assert collected_exit([_run("passed"), _run("passed")]) == 0


FLEET: dict[str, Any] = {
    "schema_version": 2,
    "fleet_id": "20261208T030000Z-fleet-ab12",
    "verdict": "failed",
    "reason": "in-cluster: node pool-a-2: failed (others in its group sound)",
    "clusters": [{"cluster": "in-cluster", "verdict": "failed"}],
    "groups": [
        {
            "cluster": "in-cluster",
            "group": "g1",
            "verdict": "outlier",
            "words": "node pool-a-2: failed (others in its group sound)",
            "failed": ["pool-a-2"],
            "errors": [],
            "rounds": [{"x": "y" * 1000}] * 1000,
        },
        {"cluster": "in-cluster", "group": "g2", "failed": [], "errors": ["pool-b-1"]},
    ],
}


def test_a_kept_fleet_names_its_id_verdict_and_each_node_not_passed_by_group() -> None:
    run_id, status, reason, not_passed = read_kept_fleet(json.dumps(FLEET))
    assert (run_id, status) == (FLEET["fleet_id"], "failed")
    assert reason.startswith("in-cluster: node pool-a-2")
    assert not_passed == ("pool-a-2 (g1)", "pool-b-1 (g2)")


def test_a_fleet_over_a_configmap_s_size_is_cut_to_its_verdicts_and_reads_the_same() -> None:
    whole = json.dumps(FLEET)
    assert len(whole) > MAX_DATA_BYTES
    data = fleet_data(whole, "<testsuites/>")
    assert "junit.xml" not in data
    assert "cut to its verdicts" in data["truncated"]
    assert data_size(data) <= MAX_DATA_BYTES
    assert read_kept_fleet(data["fleet.json"]) == read_kept_fleet(whole)
    small = json.dumps({**FLEET, "groups": FLEET["groups"][1:]})
    assert fleet_data(small, "<testsuites/>") == {"fleet.json": small, "junit.xml": "<testsuites/>"}


GROUP = GroupSummary(
    cluster="in-cluster",
    group="g",
    curve="v1.35 10s..60s",
    kubelet_version="v1.35.8",
    initial_s=10.0,
    max_s=60.0,
    pools=("a",),
    nodes=3,
    chosen=("n1",),
    why_chosen="first by name",
    rounds=(),
    verdict="failed",
    words="",
    outliers=(),
    failed=(),
    errors=(),
    checked=(),
    elapsed_s=1.0,
)


def test_a_node_the_fleet_failed_gets_a_failed_event_and_one_it_could_not_judge_unjudged() -> None:
    groups = [
        replace(GROUP, group="g1", outliers=("n1",), failed=("n1",), words="node n1: failed"),
        replace(GROUP, group="g2", failed=("n2", "n3"), errors=("n3", "n4"), words="g2 failed"),
    ]
    assert node_events(groups) == {
        "n1": ("CrashLoopBackOffCheckFailed", "n1: node n1: failed"),
        "n2": ("CrashLoopBackOffCheckFailed", "n2: g2 failed"),
        "n3": ("CrashLoopBackOffCheckFailed", "n3: g2 failed"),
        "n4": ("CrashLoopBackOffUnjudged", "n4: g2 failed"),
    }
