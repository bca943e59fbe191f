"""A fleet's answer from what each cluster's nightly kept."""

from __future__ import annotations

import json

from crashloop_harness.fleet.collect import KeptRun, collected_exit, read_kept
from crashloop_harness.outputs.clusterresults import MAX_DATA_BYTES, bounded_data

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
