"""The nightly check as the cluster runs it: a CronJob of the harness's image in its namespace.

Its pod runs `crashloop check` with no kubeconfig: the ServiceAccount of the least-privilege
role (resources/rbac/crashloop-check.yaml) is its identity, as client-go takes it in a pod
(crashloop_harness.cluster.incluster). The Job's exit status is the verdict (0 passed, 1
failed, 4 error: crashloop_harness.cli.codes), so an alert on failed Jobs (kube-state-metrics'
``kube_job_status_failed``) is an alert on the kubelets; the log's last line says why. A Job
is never retried (``backoffLimit: 0``): a second check would hide the first's verdict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from crashloop_harness.core.conventions import KUBELET_CA_VARIABLE, PROGRESS_VARIABLE
from crashloop_harness.substrate.harnessimage import SCRATCH
from crashloop_harness.substrate.workloadimage import RUN_AS_USER

NAMESPACE: Final = "crashloop-check"
SERVICE_ACCOUNT: Final = "crashloop-check"
NAME: Final = "crashloop-nightly"
# Past this a run is stopped by the Job controller: the full profile observes for about
# eleven minutes, and a run owed restarts observes up to twice its profile's window.
ACTIVE_DEADLINE_S: Final = 3600
# Finished Jobs kept for a reader (and their pods' logs), each outcome its own count.
JOBS_KEPT: Final = 3
# Where the kubelets' CA bundle is mounted, when a ConfigMap of one is named.
KUBELET_CA_DIR: Final = "/etc/crashloop/kubelet-ca"


# A label key (an optional DNS-subdomain prefix and a name) and value, as the API server
# takes them: the selector is checked before anything is printed to apply.
_NAME: Final = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_KEY: Final = rf"([a-z0-9]([-a-z0-9.]{{0,251}}[a-z0-9])?/)?{_NAME}"
_TERM: Final = re.compile(rf"{_KEY}(=({_NAME})?)?")


def selector_problem(selector: str) -> str | None:
    """What is wrong with a node selector of key or key=value terms; None when sound."""
    terms = [term.strip() for term in selector.split(",")]
    bad = [term for term in terms if not _TERM.fullmatch(term)]
    if bad:
        return f"{', '.join(repr(term) for term in bad)} is not a label key or key=value"
    return None


# A ConfigMap's name, as the API server takes it: a DNS subdomain (RFC 1123), lower case.
_OBJECT_NAME: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def configmap_problem(name: str) -> str | None:
    """What is wrong with a ConfigMap's name; None when the API server would take it."""
    if len(name) > 253 or not _OBJECT_NAME.fullmatch(name):
        return f"{name!r} is not a ConfigMap name (lower-case letters, digits, '-' and '.')"
    return None


# cron's five fields, or one of its macros, as the CronJob controller takes them.
_MACROS: Final = frozenset(
    {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
)
_FIELD: Final = re.compile(r"[0-9A-Za-z*/,?-]+")


def schedule_problem(schedule: str) -> str | None:
    """What is wrong with a CronJob schedule's shape; None when the controller can read it."""
    if schedule.strip() in _MACROS:
        return None
    fields = schedule.split()
    if len(fields) != 5 or not all(_FIELD.fullmatch(f) for f in fields):
        return f"{schedule!r} is not five cron fields (minute hour day month weekday) or a macro"
    return None


@dataclass(frozen=True, kw_only=True)
class NightlySpec:
    """What a cluster's nightly checks, when, and with which images."""

    image: str
    workload_image: str
    # The nodes checked, by label (the check over them); "" with per_group: the fleet's plan.
    node_selector: str = ""
    schedule: str = "0 3 * * *"
    profile: str = "quick"
    # A ConfigMap of the namespace whose ca.crt holds the kubelets' serving CAs, for kubelets
    # that sign their own certificate (kubeadm's, kind's); None: the cluster's CA alone.
    kubelet_ca_configmap: str | None = None
    # Grant nodes/proxy too, for kubelets that refuse a direct read (the role's own file).
    node_proxy: bool = False
    # The fleet's plan over this cluster instead: every node pool grouped by its live curve,
    # this many nodes of each checked (spread over zones and pools), each --expect judged.
    per_group: int | None = None
    expect: tuple[str, ...] = ()


def check_args(spec: NightlySpec) -> list[str]:
    """The check the nightly's pod runs, in the namespace it was given."""
    if spec.per_group is not None:
        return [
            "fleet",
            "--profile",
            spec.profile,
            "--namespace",
            NAMESPACE,
            "--per-group",
            str(spec.per_group),
            *(arg for expected in spec.expect for arg in ("--expect", expected)),
            "--workload-image",
            spec.workload_image,
            "--keep-in-cluster",
        ]
    return [
        "check",
        "--profile",
        spec.profile,
        "--namespace",
        NAMESPACE,
        "--node-selector",
        spec.node_selector,
        "--workload-image",
        spec.workload_image,
        "--keep-in-cluster",
    ]


def away_from_checked(selector: str) -> dict[str, Any]:
    """Node affinity that prefers a node the check does not measure: the harness's own work
    on a checked node would read as that node's slowness. Only preferred: a cluster whose
    every schedulable node is checked still runs its nightly."""
    expressions = []
    for term in selector.split(","):
        key, equals, value = term.strip().partition("=")
        if equals:
            expressions.append({"key": key, "operator": "NotIn", "values": [value]})
        else:
            expressions.append({"key": key, "operator": "DoesNotExist"})
    # Terms are ORed: a node that fails any one of the selector's terms is not checked.
    terms = [{"weight": 100, "preference": {"matchExpressions": [e]}} for e in expressions]
    return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": terms}}


def pod_spec(spec: NightlySpec) -> dict[str, Any]:
    """The nightly's pod: the restricted Pod Security level's every requirement met. Over a
    fleet's plan any node may be checked: no node is preferred then."""
    mounts: list[dict[str, Any]] = [{"name": "scratch", "mountPath": SCRATCH}]
    volumes: list[dict[str, Any]] = [{"name": "scratch", "emptyDir": {}}]
    # Progress and results on one stream: the log's last line is then the verdict's.
    env = [{"name": PROGRESS_VARIABLE, "value": "stdout"}]
    if spec.kubelet_ca_configmap is not None:
        mounts.append({"name": "kubelet-ca", "mountPath": KUBELET_CA_DIR, "readOnly": True})
        volumes.append({"name": "kubelet-ca", "configMap": {"name": spec.kubelet_ca_configmap}})
        env.append({"name": KUBELET_CA_VARIABLE, "value": f"{KUBELET_CA_DIR}/ca.crt"})
    return {
        "serviceAccountName": SERVICE_ACCOUNT,
        **({"affinity": away_from_checked(spec.node_selector)} if spec.node_selector else {}),
        # A control-plane node is checked by no selector the harness writes: welcome there.
        "tolerations": [
            {
                "key": "node-role.kubernetes.io/control-plane",
                "operator": "Exists",
                "effect": "NoSchedule",
            }
        ],
        "restartPolicy": "Never",
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": RUN_AS_USER,
            "runAsGroup": RUN_AS_USER,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [
            {
                "name": "check",
                "image": spec.image,
                "imagePullPolicy": "IfNotPresent",
                "args": check_args(spec),
                "env": env,
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "readOnlyRootFilesystem": True,
                    "capabilities": {"drop": ["ALL"]},
                },
                "resources": {
                    "requests": {"cpu": "100m", "memory": "256Mi"},
                    "limits": {"memory": "1Gi"},
                },
                "volumeMounts": mounts,
            }
        ],
        "volumes": volumes,
    }


def job_spec(spec: NightlySpec) -> dict[str, Any]:
    return {
        "backoffLimit": 0,
        "activeDeadlineSeconds": ACTIVE_DEADLINE_S,
        "template": {
            "metadata": {"labels": {"app.kubernetes.io/name": NAME}},
            "spec": pod_spec(spec),
        },
    }


def cronjob(spec: NightlySpec) -> dict[str, Any]:
    """The CronJob: one check at a time, never two overlapping on the same nodes."""
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": NAME, "namespace": NAMESPACE},
        "spec": {
            "schedule": spec.schedule,
            "concurrencyPolicy": "Forbid",
            "successfulJobsHistoryLimit": JOBS_KEPT,
            "failedJobsHistoryLimit": JOBS_KEPT,
            "jobTemplate": {"spec": job_spec(spec)},
        },
    }
