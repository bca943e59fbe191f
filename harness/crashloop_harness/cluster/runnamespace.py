"""A run's namespace: made fresh and labelled as the run's, or prepared for it and checked idle.

The labels and owner annotation let a later run tell a live run from one whose
owner is gone (:mod:`crashloop_harness.cluster.leftovers`): a live run's
crash-looping pods would load the workers and skew every delay.
"""

from __future__ import annotations

from kubernetes import client

from crashloop_harness.cluster import leftovers
from crashloop_harness.cluster.kube import create_namespace, delete_namespace
from crashloop_harness.core import timeouts
from crashloop_harness.core.conventions import RUN_LABEL
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.progress import Progress

RBAC_FILE = "harness/crashloop_harness/resources/rbac/crashloop-check.yaml"


def create_run_namespace(api: client.ApiClient, what: str, run_id: str) -> str:
    return create_namespace(
        api,
        f"crashloop-{what.split('-', maxsplit=1)[0]}",
        labels=leftovers.run_labels(run_id),
        annotations=leftovers.run_annotations(),
    )


def refuse_busy_namespace(api: client.ApiClient, namespace: str) -> None:
    """A prepared namespace must hold no pods of another run: they would load its nodes."""
    try:
        pods = client.CoreV1Api(api).list_namespaced_pod(
            namespace, label_selector=RUN_LABEL, _request_timeout=timeouts.API_REQUEST
        )
    except client.ApiException as error:
        if error.status == 404:
            raise HarnessError(
                f"namespace {namespace} does not exist",
                f"create it with its role ({RBAC_FILE}), or "
                "leave --namespace out to let the check create one",
            ) from error
        raise HarnessError(
            f"cannot list pods in namespace {namespace}: {error.status} {error.reason}",
            f"grant the check's role in it ({RBAC_FILE})",
        ) from error
    runs = sorted({pod.metadata.labels.get(RUN_LABEL, "") for pod in pods.items})
    if runs:
        raise HarnessError(
            f"namespace {namespace} still holds pods of run {', '.join(runs)}",
            f"wait for that run, or delete them: kubectl -n {namespace} delete pods -l {RUN_LABEL}",
        )


def clear_leftover_runs(api: client.ApiClient, progress: Progress) -> None:
    """Remove run namespaces whose owner is gone; refuse to start beside a live run."""
    listed = client.CoreV1Api(api).list_namespace(
        label_selector=RUN_LABEL, _request_timeout=timeouts.API_REQUEST
    )
    found = [
        ns
        for item in listed.items
        if (
            ns := leftovers.from_metadata(
                item.metadata.name,
                item.metadata.labels,
                item.metadata.annotations,
                item.status.phase if item.status else "",
            )
        )
        is not None
    ]
    decision = leftovers.classify(found, me=leftovers.owner_of_this_process())
    if decision.busy:
        raise HarnessError(
            "another run is measuring on this cluster: "
            + ", ".join(f"{ns.name} (run {ns.run_id}, owner {ns.owner})" for ns in decision.busy),
            "wait for it to finish, or stop it; if its owner is gone, "
            "`kubectl delete namespace NAME` with the harness's kubeconfig",
        )
    for ns in decision.remove:
        progress(
            f"removing namespace {ns.name} left by run {ns.run_id} (owner {ns.owner or 'unknown'} "
            "is gone): its crash-looping pods would skew this run's delays"
        )
        delete_namespace(api, ns.name)
