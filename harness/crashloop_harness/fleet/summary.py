"""``fleet.json``: one fleet's result, each cluster's and each group's, with its published schema.

Versioned as summary.json is (``schema_version``), read back with one typed
reader (a pydantic TypeAdapter of :class:`FleetSummary`) that refuses another
version and names the first bad field. docs/schema/fleet.schema.json is
written from these types (scripts/summary-schema.py).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Final, Literal

from pydantic import TypeAdapter, ValidationError

from crashloop_harness.core.atomicfile import write_atomically
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.fleet.engine import GroupRun
from crashloop_harness.fleet.expect import ExpectationSummary
from crashloop_harness.fleet.judge import GroupVerdict, NodeOutcome, Round
from crashloop_harness.fleet.plan import FleetPlan

FLEET_SCHEMA_VERSION: Final = 1
FLEET_FILE: Final = "fleet.json"
NOTHING_CHECKED: Final = "no node of it checked"

Verdict = Literal["passed", "failed", "error", "interrupted"]


@dataclass(frozen=True)
class RoundSummary:
    """One check of a group: the nodes it asked for, its run, what each node came to."""

    nodes: tuple[str, ...]
    run_id: str  # "" when the check raised before it wrote a summary
    run_dir: str
    status: str
    reason: str
    outcomes: dict[str, NodeOutcome]


@dataclass(frozen=True)
class GroupSummary:
    cluster: str
    group: str
    curve: str  # the plan's words: release, back-off, cap, gates
    kubelet_version: str
    initial_s: float
    max_s: float
    pools: tuple[str, ...]
    nodes: int  # in the group
    chosen: tuple[str, ...]
    why_chosen: str
    rounds: tuple[RoundSummary, ...]
    verdict: GroupVerdict
    words: str
    outliers: tuple[str, ...]
    failed: tuple[str, ...]
    errors: tuple[str, ...]
    checked: tuple[str, ...]
    elapsed_s: float  # its checks, one after the other


@dataclass(frozen=True)
class ClusterSummary:
    cluster: str
    verdict: Verdict
    reason: str
    groups: tuple[str, ...]
    at_once: int  # its groups checked at a time


@dataclass(frozen=True)
class SkippedNode:
    cluster: str
    node: str
    why: str


@dataclass(frozen=True)
class FleetSummary:
    schema_version: int
    fleet_id: str
    started_at: str
    finished_at: str
    profile: str
    per_group: int
    verdict: Verdict
    reason: str
    clusters: tuple[ClusterSummary, ...]
    groups: tuple[GroupSummary, ...]
    skipped: tuple[SkippedNode, ...]
    # The fleet's wall time against its slowest group's and the sum of its groups'.
    wall_s: float
    slowest_group_s: float
    groups_sum_s: float
    # Each --expect judged over the nodes read (none given: empty; fleets before it: absent).
    expectations: tuple[ExpectationSummary, ...] = ()

    @property
    def passed(self) -> bool:
        return self.verdict == "passed"

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2) + "\n"


def group_summary(run: GroupRun) -> GroupSummary:
    g, j = run.group, run.judgement
    return GroupSummary(
        cluster=g.cluster,
        group=g.name,
        curve=g.key.describe(),
        kubelet_version=g.key.kubelet_version,
        initial_s=g.key.initial_s,
        max_s=g.key.maximum_s,
        pools=g.pools,
        nodes=len(g.nodes),
        chosen=g.chosen,
        why_chosen=g.why_chosen,
        rounds=tuple(_round(r) for r in run.rounds),
        verdict=j.verdict,
        words=j.words,
        outliers=j.outliers,
        failed=j.failed,
        errors=j.errors,
        checked=j.checked,
        elapsed_s=round(run.elapsed_s, 1),
    )


def _round(r: Round) -> RoundSummary:
    return RoundSummary(r.nodes, r.run_id, r.run_dir, r.status, r.reason, dict(r.outcomes))


def cluster_verdict(groups: Sequence[GroupSummary], unreachable: str | None) -> tuple[Verdict, str]:
    """A cluster failed when a group of it failed or had an outlier; in error when it could
    not be reached or a group could not be judged; passed only when every group passed."""
    if unreachable is not None:
        return "error", f"unreachable: {unreachable}"
    if not groups:
        # Reached, but every node left out (control planes, NotReady, cordoned): nothing
        # of it was checked, which is no pass.
        return "error", f"{NOTHING_CHECKED}: every node left out (plan.json says why)"
    bad = [g for g in groups if g.verdict in ("failed", "outlier")]
    if bad:
        return "failed", "; ".join(g.words for g in bad)
    errors = [g for g in groups if g.verdict == "error"]
    if errors:
        return "error", "; ".join(g.words for g in errors)
    return "passed", f"{len(groups)} groups passed"


def fleet_verdict(
    clusters: Sequence[ClusterSummary],
    interrupted: bool,
    expectations: Sequence[ExpectationSummary] = (),
) -> tuple[Verdict, str]:
    """Failed when a cluster failed or a pool runs another curve than its operator expects
    (each said apart: a config not meant is not a kubelet off its config)."""
    if interrupted:
        return "interrupted", "stopped (a signal) before every group was checked"
    failed = [f"{c.cluster}: {c.reason}" for c in clusters if c.verdict == "failed"]
    failed += [e.words for e in expectations if not e.met]
    if failed:
        return "failed", "; ".join(failed)
    errors = [c for c in clusters if c.verdict == "error"]
    if errors:
        return "error", "; ".join(f"{c.cluster}: {c.reason}" for c in errors)
    return "passed", f"every group of {len(clusters)} clusters passed"


def fleet_summary(
    *,
    fleet_id: str,
    plan: FleetPlan,
    runs: Sequence[GroupRun],
    unreachable: Mapping[str, str],
    reached: Collection[str],
    at_once: Mapping[str, int],
    profile: str,
    started_at: str,
    finished_at: str,
    wall_s: float,
    interrupted: bool,
    expectations: Sequence[ExpectationSummary] = (),
) -> FleetSummary:
    groups = tuple(group_summary(run) for run in runs)
    clusters: list[ClusterSummary] = []
    for cluster in sorted({*plan.clusters, *unreachable, *reached}):
        mine = [g for g in groups if g.cluster == cluster]
        verdict, reason = cluster_verdict(mine, unreachable.get(cluster))
        names = tuple(g.group for g in mine)
        clusters.append(ClusterSummary(cluster, verdict, reason, names, at_once.get(cluster, 0)))
    verdict, reason = fleet_verdict(clusters, interrupted, expectations)
    return FleetSummary(
        schema_version=FLEET_SCHEMA_VERSION,
        fleet_id=fleet_id,
        started_at=started_at,
        finished_at=finished_at,
        profile=profile,
        per_group=plan.per_group,
        verdict=verdict,
        reason=reason,
        clusters=tuple(clusters),
        groups=groups,
        skipped=tuple(SkippedNode(c, n, why) for c, n, why in plan.skipped),
        wall_s=round(wall_s, 1),
        slowest_group_s=max((g.elapsed_s for g in groups), default=0.0),
        groups_sum_s=round(sum(g.elapsed_s for g in groups), 1),
        expectations=tuple(expectations),
    )


def write_fleet_summary(fleet_dir: Path, summary: FleetSummary) -> Path:
    return write_atomically(fleet_dir / FLEET_FILE, summary.to_json().encode("utf-8"))


@cache
def fleet_reader() -> TypeAdapter[FleetSummary]:
    return TypeAdapter(FleetSummary)


def read_fleet_summary(path: Path) -> FleetSummary:
    """A fleet.json (or the one in a fleet's directory), every field checked."""
    path = path / FLEET_FILE if path.is_dir() else path
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise HarnessError(f"{path}: not a readable fleet.json: {error}") from error
    version = raw.get("schema_version") if isinstance(raw, dict) else None
    if version != FLEET_SCHEMA_VERSION:
        raise HarnessError(
            f"{path}: schema_version {version}, this harness reads {FLEET_SCHEMA_VERSION}",
            "read it with the harness version that wrote it",
        )
    try:
        return fleet_reader().validate_json(json.dumps(raw), strict=True)
    except ValidationError as error:
        first = error.errors()[0]
        where = "fleet" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
        raise HarnessError(f"{path}: {where}: {first['msg']}") from error
