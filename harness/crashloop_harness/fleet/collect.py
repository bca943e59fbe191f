"""What each cluster's own nightly last found, read from the results it keeps: nothing is run.

A cluster that runs the nightly CronJob (crashloop_harness.pods.nightly) keeps each run's
summary in a ConfigMap of the check's namespace (crashloop_harness.outputs.clusterresults).
The fleet reads the newest of every context, at once, into one answer: which clusters
passed, which failed on which nodes, which could not judge, and which kept nothing (no
nightly there, or none readable).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes import client
from kubernetes.config import ConfigException

from crashloop_harness.cluster.kubeconfig import remote_api
from crashloop_harness.core import timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.exitcodes import COULD_NOT_JUDGE
from crashloop_harness.fleet.read import CONTEXTS_AT_ONCE
from crashloop_harness.fleet.summary import FLEET_FILE
from crashloop_harness.outputs.clusterresults import RESULT_LABEL, oldest_first


@dataclass(frozen=True, kw_only=True)
class KeptRun:
    """One cluster's newest kept run, or why there is none (``missing``)."""

    context: str
    run_id: str | None = None
    status: str | None = None
    reason: str = ""
    kept_at: str | None = None
    # The nodes whose check did not pass, and their workers.
    not_passed: tuple[str, ...] = ()
    missing: str | None = None

    @property
    def verdict(self) -> str:
        return "missing" if self.missing is not None else str(self.status)


def read_kept(summary_json: str) -> tuple[str, str, str, tuple[str, ...]]:
    """A kept summary's run id, status, reason and the nodes that did not pass (a summary cut
    to its verdict keeps these too)."""
    summary: dict[str, Any] = json.loads(summary_json)
    not_passed = tuple(
        f"{w.get('node')} ({w.get('worker')})"
        for w in summary.get("workers", [])
        if not w["passed"]
    )
    return (
        str(summary["run_id"]),
        str(summary["status"]),
        str(summary.get("reason") or ""),
        not_passed,
    )


def read_kept_fleet(fleet_json: str) -> tuple[str, str, str, tuple[str, ...]]:
    """The same of a fleet's kept run (a nightly that ran the fleet over its cluster): its
    id, verdict, reason and each node failed or not judged, by group."""
    fleet: dict[str, Any] = json.loads(fleet_json)
    not_passed = tuple(
        f"{node} ({g.get('group')})"
        for g in fleet.get("groups", [])
        for node in dict.fromkeys([*g.get("failed", []), *g.get("errors", [])])
    )
    return (
        str(fleet["fleet_id"]),
        str(fleet["verdict"]),
        str(fleet.get("reason") or ""),
        not_passed,
    )


def newest_kept(api: client.ApiClient, context: str, namespace: str) -> KeptRun:
    maps = (
        client.CoreV1Api(api)
        .list_namespaced_config_map(
            namespace, label_selector=f"{RESULT_LABEL}=true", _request_timeout=timeouts.API_REQUEST
        )
        .items
    )
    if not maps:
        return KeptRun(context=context, missing=f"no kept run in namespace {namespace}")
    newest = oldest_first(maps)[-1]
    try:
        data = newest.data
        if FLEET_FILE in data:
            run_id, status, reason, not_passed = read_kept_fleet(data[FLEET_FILE])
        else:
            run_id, status, reason, not_passed = read_kept(data["summary.json"])
    except (KeyError, TypeError, ValueError) as error:
        return KeptRun(
            context=context, missing=f"configmap {newest.metadata.name} unreadable: {error!r}"
        )
    return KeptRun(
        context=context,
        run_id=run_id,
        status=status,
        reason=reason,
        kept_at=newest.metadata.creation_timestamp.isoformat(),
        not_passed=not_passed,
    )


def collect(kubeconfig: Path, contexts: Sequence[str], namespace: str) -> list[KeptRun]:
    """Every context's newest kept run, read at once; an unreachable cluster is said."""

    def one(context: str) -> KeptRun:
        try:
            return newest_kept(remote_api(kubeconfig, context), context, namespace)
        except client.ApiException as error:
            return KeptRun(context=context, missing=f"the API server answered {error.status}")
        except (HarnessError, ConfigException, OSError) as error:
            return KeptRun(context=context, missing=f"unreachable: {error}")

    with ThreadPoolExecutor(max_workers=CONTEXTS_AT_ONCE) as pool:
        return list(pool.map(one, contexts))


def collected_exit(runs: Sequence[KeptRun]) -> int:
    """1 when a cluster's kubelets failed; 4 when none did but one has no answer (an error,
    or nothing kept); 0 when every cluster passed."""
    if any(run.status == "failed" for run in runs):
        return 1
    if all(run.status == "passed" for run in runs):
        return 0
    return COULD_NOT_JUDGE
