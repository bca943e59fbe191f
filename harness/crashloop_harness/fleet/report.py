"""The fleet's report page: first the cluster x group table, then what each verdict rests on.

Its first table is the one a platform team reads at 9am: per cluster and group,
the curve, how many nodes it has, which were checked, the verdict and the
outliers. Each group's checks keep their own run directories (their reports,
evidence and attempts); the page names them.
"""

from __future__ import annotations

from pathlib import Path

from crashloop_harness.fleet.plan import format_duration_s
from crashloop_harness.fleet.summary import FleetSummary, GroupSummary
from crashloop_harness.outputs.document import (
    FAIL,
    PASS,
    Block,
    Bullets,
    Heading,
    Paragraph,
    Table,
    write_report_pages,
)

_VERDICT_WORDS = {"passed": PASS, "failed": FAIL, "outlier": FAIL, "error": "ERROR"}


def fleet_blocks(summary: FleetSummary) -> list[Block]:
    blocks: list[Block] = [
        Heading(1, f"Fleet {summary.fleet_id}: {summary.verdict.upper()}"),
        Paragraph(summary.reason),
        Table(
            ("cluster", "group", "curve", "nodes", "checked", "verdict", "outliers"),
            tuple(_group_row(g) for g in summary.groups),
        ),
        Paragraph(
            f"{summary.profile} check, {summary.per_group} nodes per group. Wall time "
            f"{format_duration_s(summary.wall_s)}; its slowest group took "
            f"{format_duration_s(summary.slowest_group_s)}, its groups one after the other "
            f"would have taken {format_duration_s(summary.groups_sum_s)}."
        ),
        Heading(2, "Clusters"),
        Table(
            ("cluster", "verdict", "groups at once", "reason"),
            tuple(
                (c.cluster, c.verdict.upper(), str(c.at_once), c.reason) for c in summary.clusters
            ),
        ),
        *_expectation_blocks(summary),
        Heading(2, "What each verdict rests on"),
    ]
    for group in summary.groups:
        blocks += [
            Heading(3, f"{group.cluster} {group.group}: {group.words}"),
            Bullets(
                (
                    f"pools {', '.join(group.pools)}; chosen {', '.join(group.chosen)} "
                    f"({group.why_chosen})",
                    *(
                        f"{r.run_dir or '(no run directory)'}: {r.status}"
                        + (f" ({r.reason})" if r.reason else "")
                        + " - "
                        + ", ".join(f"{n} {r.outcomes.get(n, 'error')}" for n in r.nodes)
                        for r in group.rounds
                    ),
                )
            ),
        ]
    if summary.skipped:
        blocks += [
            Heading(2, "Nodes left out"),
            Bullets(tuple(f"{s.cluster} {s.node}: {s.why}" for s in summary.skipped)),
        ]
    return blocks


def _expectation_blocks(summary: FleetSummary) -> list[Block]:
    """What each pool should run (``--expect``), as judged from the configs read."""
    if not summary.expectations:
        return []
    return [
        Heading(2, "Expectations"),
        Table(
            ("expectation", "nodes selected", "verdict", "what was found"),
            tuple(
                (e.expectation, str(e.selected), PASS if e.met else FAIL, e.words)
                for e in summary.expectations
            ),
        ),
    ]


def _group_row(group: GroupSummary) -> tuple[str, ...]:
    return (
        group.cluster,
        group.group,
        group.curve,
        str(group.nodes),
        ", ".join(group.checked) or "none",
        _VERDICT_WORDS[group.verdict],
        ", ".join(group.outliers) or "-",
    )


def write_fleet_report(fleet_dir: Path, summary: FleetSummary) -> Path:
    return write_report_pages(fleet_dir, fleet_blocks(summary), f"Fleet {summary.fleet_id}")
