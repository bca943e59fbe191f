"""A self-contained report of one run: ``report.md`` and ``report.html`` in its run directory.

The report is what a reader opens first: what ran where, the verdict, every
restart against the model, the scenarios' takeaways and the plots. The HTML
file stands alone (plots embedded as data URIs) so it survives being mailed
or attached to a CI job; the Markdown file links the PNGs next to it.

Both are rendered from one list of blocks, so they cannot drift apart. Every
piece of text from the run (names, reasons, kubelet messages) is escaped for
the format it lands in: a pod named ``<script>`` must print, not run.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

from crashloop_harness.model.subject import is_bare
from crashloop_harness.outputs.document import (
    FAIL,
    PASS,
    Block,
    Bullets,
    Heading,
    Image,
    Paragraph,
    Table,
    write_report_pages,
)
from crashloop_harness.outputs.nodecosts import cost_blocks
from crashloop_harness.outputs.render import restart_cells
from crashloop_harness.outputs.summary import RunSummary, WorkerSummary, machine_restart_cost
from crashloop_harness.recording.hostcpu import CpuSample, busy_at
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.scenarios.headline import ScenarioMetric

PLOT_DELAYS: Final = "delays"
PLOT_TIMELINE: Final = "timeline"
PLOT_SCENARIOS: Final = "scenarios"
PLOT_START_LATENCY: Final = "start-latency"


# --- content -------------------------------------------------------------------------------


def _seconds(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else f"{value:{spec}}s"


def _result(passed: bool) -> str:
    return PASS if passed else FAIL


def report_blocks(
    summary: RunSummary,
    plots: Sequence[Image] = (),
    scenario_metrics: Sequence[ScenarioMetric] = (),
    busy_at_start: Mapping[str, Mapping[int, float]] | None = None,
) -> list[Block]:
    """The report's content, top to bottom."""
    # The verdict first, in the title too: the page is what people are sent.
    blocks: list[Block] = [
        Heading(1, f"{summary.status.upper()}: CrashLoopBackOff run {summary.run_id}"),
        *_verdict_blocks(summary),
        Paragraph(
            f"{summary.kind} run, profile {summary.profile}, "
            f"from {summary.started_at} to {summary.finished_at}."
            + (
                " Evidence of the failure: evidence/ beside this page."
                if not summary.passed
                else ""
            )
        ),
        Heading(2, "The talk's takeaways, from this run"),
        talk_takeaways(summary),
        Heading(2, "Cluster"),
        Table(
            ("cluster", "node image", "Kubernetes"),
            (
                (
                    summary.cluster.name,
                    summary.cluster.node_image,
                    summary.cluster.kubernetes_version,
                ),
            ),
        ),
        Heading(2, "Live kubelet config per worker"),
        _config_table(summary.workers),
        *_observer_blocks(summary),
    ]
    if scenario_metrics:
        blocks += [
            Heading(2, "Takeaways: scenarios, measured vs model"),
            _takeaways(scenario_metrics, machine_restart_cost(summary)),
        ]
    if plots:
        blocks += [Heading(2, "Plots"), *plots]
    blocks.append(Heading(2, "Restarts per worker"))
    for worker in summary.workers:
        blocks += _worker_blocks(worker, (busy_at_start or {}).get(worker.worker))
    return blocks


def _observer_blocks(summary: RunSummary) -> list[Block]:
    """What observing the run cost the machine whose kubelets it judged."""
    cost = summary.observer
    if cost is None:
        return []

    def value(number: float | None, spec: str) -> str:
        return "n/a" if number is None else format(number, spec)

    return [
        Heading(2, "Observer"),
        Paragraph(cost.headline()),
        Table(
            (
                "observer",
                "wall",
                "harness CPU",
                "engine CPU",
                "per minute (harness + engine)",
                "share of a core",
                "seen median",
                "seen p95",
                "seen max",
                "inspected after a listing",
                "reader restarts",
            ),
            (
                (
                    cost.observer,
                    f"{cost.wall_s:.0f} s",
                    f"{cost.harness_cpu_s:.1f} s",
                    value(cost.engine_cpu_s, ".1f") + " s",
                    f"{cost.harness_per_min_s:.2f} + {value(cost.engine_per_min_s, '.2f')} s",
                    value(None if cost.share_of_core is None else 100 * cost.share_of_core, ".1f")
                    + " %",
                    value(cost.latency_median_ms, ".0f") + " ms",
                    value(cost.latency_p95_ms, ".0f") + " ms",
                    value(cost.latency_max_ms, ".0f") + " ms",
                    str(cost.reconciled),
                    str(cost.reconnects),
                ),
            ),
        ),
    ]


def _verdict_blocks(summary: RunSummary) -> list[Block]:
    verdict = summary.status.upper()
    if summary.reason:
        verdict += f": {summary.reason}"
    blocks: list[Block] = [Heading(2, "Verdict"), Paragraph(verdict)]
    if summary.failures:
        blocks.append(Bullets(tuple(summary.failures)))
    rows = tuple(
        (
            w.worker,
            w.profile or "-",
            str(len(w.checks)),
            _seconds(w.overshoot_median_s, "+.3f"),
            _seconds(w.overshoot_max_s, "+.3f"),
            f"{w.reported_seen}/{w.reported_expected}",
            _seconds(w.start_latency_median_s, ".3f"),
            _result(w.passed),
        )
        for w in summary.workers
    )
    headers = (
        "worker",
        "profile",
        "restarts checked",
        "median overshoot",
        "max overshoot",
        "back-offs reported",
        "median start latency",
        "result",
    )
    blocks.append(Table(headers, rows))
    blocks += cost_blocks(summary.workers)
    return blocks


def _config_table(workers: Sequence[WorkerSummary]) -> Table:
    rows = []
    for w in workers:
        config = w.live_config
        if config is None:
            rows.append((w.worker, w.node, w.profile or "-", "not read", "-", "-", "-"))
            continue
        gates = ", ".join(
            f"{name}={'on' if on else 'off'}" for name, on in sorted(config.feature_gates.items())
        )
        rows.append(
            (
                w.worker,
                w.node,
                w.profile or "-",
                config.max_container_restart_period,
                gates or "-",
                f"{config.initial_s:g}s..{config.max_s:g}s",
                "; ".join(config.mismatches) or "yes",
            )
        )
    headers = (
        "worker",
        "node",
        "profile",
        "maxContainerRestartPeriod",
        "feature gates",
        "curve",
        "matches profile",
    )
    return Table(headers, tuple(rows))


def _takeaways(metrics: Sequence[ScenarioMetric], cost: float | None) -> Table:
    """The talk's summary shape: a row per scenario and metric, a column per worker.

    Each cell also gives the model with this machine's fixed cost per restart
    (:func:`machine_restart_cost`), when the bare curves measured it.
    """
    workers = list(dict.fromkeys(m.worker for m in metrics))
    keys = list(dict.fromkeys((m.scenario, m.metric, m.unit) for m in metrics))
    cells = {(m.scenario, m.metric, m.unit, m.worker): m for m in metrics}
    rows = []
    for scenario, metric, unit in keys:
        row = [scenario, f"{metric} ({unit})"]
        for worker in workers:
            found = cells.get((scenario, metric, unit, worker))
            if found is None:
                row.append("-")
                continue
            measured = "not reached" if found.measured is None else f"{found.measured:.3g}"
            if found.inside is False:
                measured += " OUTSIDE"
            with_cost = found.with_restart_cost(cost)
            extra = "" if with_cost is None else f"; with restart cost {with_cost:.3g}"
            if found.lower is not None or found.upper is not None:
                extra += f"; the kubelet's window {found.window_text()}"
            row.append(f"{measured} (model {found.expected:.3g}{extra})")
        rows.append(tuple(row))
    return Table(("scenario", "metric", *workers), tuple(rows))


def _worker_blocks(worker: WorkerSummary, busy: Mapping[int, float] | None = None) -> list[Block]:
    """The worker's restarts; with ``busy`` (restart n -> the host's busy share as it
    started), a column that tells the machine's lateness from the kubelet's."""
    headers: tuple[str, ...] = ("restart n", "expected", "measured", "margin", "upper bound")
    headers += ("kubelet reported",)
    if busy is None:
        rows = tuple((*restart_cells(c), _result(c.passed), c.reason) for c in worker.checks)
    else:
        headers += ("host CPU at start",)
        shares = {n: f"{share:.0%}" for n, share in busy.items()}
        rows = tuple(
            (*restart_cells(c), shares.get(c.n, "-"), _result(c.passed), c.reason)
            for c in worker.checks
        )
    blocks: list[Block] = [
        Heading(3, f"{worker.worker} on {worker.node}: {_result(worker.passed)}"),
        Table((*headers, "result", "why"), rows) if rows else Paragraph("no restart was measured"),
    ]
    if worker.problems:
        blocks.append(Bullets(worker.problems))
    if worker.coverage:
        blocks.append(
            Table(
                ("rule", "covered", "what the run saw"),
                tuple(
                    (r.rule, "yes" if r.covered else "NOT COVERED", r.detail)
                    for r in worker.coverage
                ),
            )
        )
    if worker.notes:
        blocks.append(Bullets(worker.notes, folded=f"{len(worker.notes)} notes"))
    return blocks


# --- the files -----------------------------------------------------------------------------


def _ordered(
    summary: RunSummary, attempts_by_worker: Mapping[str, Sequence[AttemptRecord]]
) -> dict[str, Sequence[AttemptRecord]]:
    # The summary's worker order, so every plot and table lists workers alike.
    order = [w.worker for w in summary.workers]
    order += [w for w in attempts_by_worker if w not in order]
    return {w: attempts_by_worker[w] for w in order if w in attempts_by_worker}


def talk_takeaways(summary: RunSummary) -> Bullets:
    """The talk's three takeaways (slide 23), each with this run's number behind it."""
    waited = [w for w in summary.workers if is_bare(w.worker)]
    latencies = [w.start_latency_median_s for w in waited if w.start_latency_median_s is not None]
    worst = [w.start_latency_max_s for w in waited if w.start_latency_max_s is not None]
    restarts = sum(len(w.checks) for w in waited)
    heavy = (
        f"Container restarts are heavy, the kubelet has real physical limits: {restarts} "
        "restarts here, each one the runtime's to start after the kubelet decided: "
        + (
            f"a median {statistics.median(latencies):.2f} s, up to {max(worst):.2f} s."
            if latencies and worst
            else "no start latency was recorded."
        )
    )
    medians = []
    for worker in waited:
        delays = [c.measured_s for c in worker.checks if c.measured_s is not None and c.expected_s]
        cap = worker.live_config.max_s if worker.live_config else None
        if delays and cap is not None:
            medians.append(f"{worker.worker} (cap {cap:g} s) {statistics.median(delays):.1f} s")
    control = (
        "KEP-4603 and KEP-5593 give cluster operators granular, safe control over recovery "
        "times: the median restart delay per worker's config was "
        + ("; ".join(medians) if medians else "not measured")
        + "."
    )
    gates = sorted(
        {
            gate
            for w in waited
            if w.live_config is not None
            for gate, on in w.live_config.feature_gates.items()
            if on
        }
    )
    marathon = (
        "Open source is a marathon, pragmatic splits unblock years of frustration: the two "
        f"halves run side by side on Kubernetes {summary.cluster.kubernetes_version}, each "
        f"worker with its own gates ({', '.join(gates) or 'none'} switched on somewhere)."
    )
    return Bullets((heavy, control, marathon))


def write_report(
    run_dir: Path,
    summary: RunSummary,
    attempts_by_worker: Mapping[str, Sequence[AttemptRecord]],
    scenario_metrics: Sequence[ScenarioMetric] = (),
    host_cpu: Sequence[CpuSample] = (),
) -> Path:
    """Write the plots, ``report.md`` and ``report.html`` into ``run_dir``; the HTML's path.

    ``host_cpu`` (a demo's samples) adds the host's busy share at each restart's start.
    """
    # Here, not at the top: matplotlib takes half a second to import, which every
    # command that can write a report would otherwise pay at start-up (--help included).
    from crashloop_harness.outputs.plots import (  # noqa: PLC0415
        plot_delays,
        plot_scenario_metrics,
        plot_start_latency,
        plot_timeline,
    )

    run_dir = Path(run_dir)
    images = [
        Image(plot_delays(summary, run_dir / PLOT_DELAYS)[0], "restart delay per restart"),
        Image(
            plot_timeline(_ordered(summary, attempts_by_worker), run_dir / PLOT_TIMELINE)[0],
            "cumulative restarts over time",
        ),
        Image(
            plot_start_latency(summary, run_dir / PLOT_START_LATENCY)[0],
            "start latency per restart (started - created), kept out of the judged delays",
        ),
    ]
    if scenario_metrics:
        written = plot_scenario_metrics(scenario_metrics, run_dir / PLOT_SCENARIOS)
        images.append(Image(written[0], "scenario metrics, measured vs model"))
    busy = (
        {
            worker: {
                a.attempt: share
                for a in attempts
                if a.attempt >= 1 and (share := busy_at(host_cpu, a.started_at_ns)) is not None
            }
            for worker, attempts in attempts_by_worker.items()
        }
        if host_cpu
        else None
    )
    blocks = report_blocks(summary, images, scenario_metrics, busy)
    return write_report_pages(run_dir, blocks, f"CrashLoopBackOff run {summary.run_id}")
