"""Compare each node's live kubelet config (/configz) with the profile it is labelled with.

Every verdict of the harness assumes that a worker's kubelet really runs its
profile; this module checks that assumption on the live node and produces the
rows of the status table. Pure: it takes configz payloads, not an API client.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kubernetes import client

from crashloop_harness.cluster.kube import node_configz, node_statuses
from crashloop_harness.cluster.kubeletswap import NodeKubelet
from crashloop_harness.cluster.profiles import ClusterSpec
from crashloop_harness.core.conventions import PROFILE_LABEL, WORKER_LABEL
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.model.backoff import BackoffCurve, curve_for
from crashloop_harness.model.durations import format_duration
from crashloop_harness.model.kubeletconfig import BACKOFF_GATES, KubeletBackoffConfig
from crashloop_harness.model.releases import (
    DEFAULT_RELEASE,
    KubeletRelease,
    release_of,
)

CURVE_PREVIEW = 8


@dataclass(frozen=True)
class NodeConfigRow:
    """One node's live backoff settings and whether they match its profile."""

    node: str
    worker: str | None  # None for the control-plane
    profile: str | None
    max_container_restart_period: str
    feature_gates: dict[str, bool]
    curve: BackoffCurve
    mismatches: tuple[str, ...]
    kubelet_version: str = ""
    # The binary read in the node (a kind node's; None where out of reach).
    binary: NodeKubelet | None = None

    @property
    def matches(self) -> bool:
        return not self.mismatches

    def preview(self, count: int = CURVE_PREVIEW) -> str:
        return ", ".join(format_duration(delay) for delay in self.curve.delays(count))


def row_for(
    node: str,
    labels: Mapping[str, str],
    configz: Mapping[str, Any],
    spec: ClusterSpec,
    kubelet_version: str = "",
) -> NodeConfigRow:
    """The node's live settings against its profile, on the node's own kubelet release.

    The release decides gate defaults and how late a restart may be; a
    version the model does not know is a mismatch, never a silent default.
    """
    live = KubeletBackoffConfig.from_configz(configz)
    mismatches: list[str] = []
    release = DEFAULT_RELEASE
    if kubelet_version:
        try:
            release = release_of(kubelet_version)
        except ValueError as error:
            mismatches.append(f"node {node}: {error}")
    live_curve = curve_for(live, release)
    worker_name = labels.get(WORKER_LABEL)
    profile_name = labels.get(PROFILE_LABEL)
    if worker_name is not None:
        try:
            worker = spec.worker(worker_name)
        except KeyError:
            mismatches.append(f"node {node}: worker {worker_name!r} is not in {spec.path}")
        else:
            mismatches += _compare(node, worker.name, worker.profile.config, live, release)
            if profile_name != worker.profile.name:
                mismatches.append(
                    f"node {node}: label {PROFILE_LABEL}={profile_name}, "
                    f"spec says {worker.profile.name}"
                )
    period = live.effective_max_period(release)
    return NodeConfigRow(
        node=node,
        worker=worker_name,
        profile=profile_name,
        max_container_restart_period=format_duration(period) if period is not None else "-",
        feature_gates={gate: live.gate_enabled(gate, release) for gate in BACKOFF_GATES},
        curve=live_curve,
        mismatches=tuple(mismatches),
        kubelet_version=kubelet_version,
    )


def _compare(
    node: str,
    worker: str,
    wanted: KubeletBackoffConfig,
    live: KubeletBackoffConfig,
    release: KubeletRelease,
) -> list[str]:
    """Field by field, what the live kubelet runs that the profile did not ask for."""
    problems = []
    where = f"node {node} (worker {worker})"
    wanted_period = wanted.effective_max_period(release)
    live_period = live.effective_max_period(release)
    if wanted_period != live_period:
        problems.append(
            f"{where}: crashLoopBackOff.maxContainerRestartPeriod is "
            f"{_show(live_period)} live, the profile asks for {_show(wanted_period)}"
        )
    for gate, value in wanted.feature_gates:
        if gate not in release.gates:
            problems.append(f"{where}: the profile sets {gate}, which kubelet {release.name} lacks")
        elif live.gate_enabled(gate, release) != value:
            problems.append(
                f"{where}: featureGates.{gate} is {live.gate_enabled(gate, release)} live, "
                f"the profile sets {value}"
            )
    if not problems and curve_for(wanted, release) != curve_for(live, release):
        problems.append(
            f"{where}: the live curve ({curve_for(live, release).describe()}) differs from the "
            f"profile's ({curve_for(wanted, release).describe()})"
        )
    return problems


def _show(value: Any) -> str:
    return "unset" if value is None else format_duration(value)


def live_config_rows(api: client.ApiClient, spec: ClusterSpec) -> list[NodeConfigRow]:
    """Every node's live kubelet backoff settings, checked against its profile."""
    return [
        row_for(
            status.name,
            status.labels,
            node_configz(api, status.name),
            spec,
            status.kubelet_version,
        )
        for status in node_statuses(api)
    ]


def check_live_configs(rows: list[NodeConfigRow]) -> None:
    """Fail, naming the node and the field, when a kubelet does not run its profile."""
    problems = [problem for row in rows for problem in row.mismatches]
    if problems:
        raise HarnessError(
            "live kubelet config differs from the profile:\n  " + "\n  ".join(problems),
            "check the worker's profile patch (`crashloop config` prints it) and recreate the "
            "cluster (`crashloop up --recreate`); a per-node KubeletConfiguration patch is "
            "ignored on join",
        )
