"""A fleet's results kept in the cluster it checked, as a check's are (its in-cluster nightly).

A nightly that runs the fleet over its own cluster (`crashloop cronjob --per-group K`)
keeps fleet.json and junit.xml in a ConfigMap of the check's namespace, labelled as a
check's run is (crashloop_harness.outputs.clusterresults: the newest 14 kept, `crashloop
fleet --collect` reads them), and a Warning Event on each node the fleet judged failed or
could not judge, its group's words as the message.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubernetes import client

from crashloop_harness.fleet.junitfile import FLEET_JUNIT_FILE
from crashloop_harness.fleet.summary import FLEET_FILE, FleetSummary, GroupSummary
from crashloop_harness.outputs.clusterresults import bounded_files, node_event, write_result


def fleet_data(fleet_json: str, junit_xml: str | None) -> dict[str, str]:
    """The files kept, within a ConfigMap's size: the JUnit goes first, then fleet.json is cut
    to its verdicts (the fleet's, each cluster's and each group's), saying so."""
    return bounded_files(
        FLEET_FILE,
        fleet_json,
        junit_xml,
        cut=_fleet_verdicts,
        cut_words="fleet.json cut to its verdicts and junit.xml left out: over the "
        "ConfigMap's size",
    )


def _fleet_verdicts(whole: dict[str, Any]) -> dict[str, Any]:
    cut: dict[str, Any] = {
        key: whole.get(key) for key in ("schema_version", "fleet_id", "verdict", "reason")
    }
    cut["clusters"] = whole.get("clusters", [])
    cut["groups"] = [
        {key: g.get(key) for key in ("cluster", "group", "verdict", "words", "failed", "errors")}
        for g in whole.get("groups", [])
    ]
    return cut


def node_events(groups: list[GroupSummary]) -> dict[str, tuple[str, str]]:
    """Each node not passed: its Event's reason and message (a failure before an error)."""
    events: dict[str, tuple[str, str]] = {}
    for group in groups:
        for node in (*group.outliers, *group.failed):
            events[node] = ("CrashLoopBackOffCheckFailed", f"{node}: {group.words}")
        for node in group.errors:
            events.setdefault(node, ("CrashLoopBackOffUnjudged", f"{node}: {group.words}"))
    return events


def keep_fleet_results(
    api: client.ApiClient, namespace: str, cluster: str, fleet_dir: Path, summary: FleetSummary
) -> str:
    """The fleet's files kept in ``cluster``'s namespace, an Event on each of its nodes not
    passed; returns the ConfigMap's name."""
    core = client.CoreV1Api(api)
    junit = fleet_dir / FLEET_JUNIT_FILE
    data = fleet_data(
        (fleet_dir / FLEET_FILE).read_text(), junit.read_text() if junit.is_file() else None
    )
    name = write_result(core, namespace, summary.fleet_id, summary.verdict, data)
    mine = [g for g in summary.groups if g.cluster == cluster]
    for node, (reason, message) in node_events(mine).items():
        node_event(core, node, reason, message, summary.fleet_id)
    return name
