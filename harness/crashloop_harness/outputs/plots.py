"""Plots of one run, as PNG and SVG files in its run directory (pure rendering, no cluster).

Figures are built with matplotlib's object API on an Agg canvas, never through
pyplot: pyplot keeps global state and may pick a GUI backend, and a harness
that runs in CI or over SSH must not open windows or need a display.

The same inputs give the same bytes: SVG ids are salted with a constant and
the SVG carries no date, so a plot changes in review only when its data does.
Text stays text in the SVG (``svg.fonttype: none``) so it can be searched and
read by screen readers.

Workers are told apart by marker shape and line style as well as colour
(Okabe-Ito, safe for colour-blind readers), so a grey print still works.

Each plot function returns the paths it wrote: ``<stem>.png``, then ``<stem>.svg``.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import matplotlib as mpl
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, NullFormatter, ScalarFormatter

from crashloop_harness.core.atomicfile import write_atomically
from crashloop_harness.model.durations import NS_PER_S
from crashloop_harness.model.subject import worker_of
from crashloop_harness.outputs.matrix import Matrix
from crashloop_harness.outputs.summary import RunSummary, WorkerSummary
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.scenarios.headline import ScenarioMetric

# Delays of the three curves span 0..300s. Below 1s the axis is linear (it
# must show restart #1, which has no back-off: 0 is not on a log axis);
# above, logarithmic, so 2s, the 1s..60s doubling and 10s..300s stay apart.
_SYMLOG_LINEAR_BELOW_S: Final = 1.0
_DELAY_TICKS_S: Final = (0, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600)

_SVG_HASHSALT: Final = "crashloop-harness"
_DPI: Final = 120


@dataclass(frozen=True)
class WorkerStyle:
    """How one worker looks in every plot."""

    color: str
    marker: str
    # A name ("--") or matplotlib's (offset, (on, off, ...)) dash pattern.
    linestyle: str | tuple[float, tuple[float, ...]]
    hatch: str


# The three workers of the talk keep the same look across plots and runs.
KNOWN_STYLES: Final[Mapping[str, WorkerStyle]] = {
    "fast": WorkerStyle("#0072B2", "o", "-", "//"),
    "reduced": WorkerStyle("#E69F00", "s", "--", "\\\\"),
    "default": WorkerStyle("#009E73", "^", ":", "xx"),
}
# Other worker names take these in order of first appearance.
_SPARE_STYLES: Final = (
    WorkerStyle("#CC79A7", "D", "-.", ".."),
    WorkerStyle("#D55E00", "v", (0, (5, 1, 1, 1)), "++"),
    WorkerStyle("#56B4E9", "P", (0, (1, 1)), "oo"),
    WorkerStyle("#000000", "X", (0, (3, 1, 1, 1, 1, 1)), "--"),
)


def styles_for(workers: Iterable[str]) -> dict[str, WorkerStyle]:
    """A distinct style per worker: the known ones fixed, others from a spare cycle."""
    styles: dict[str, WorkerStyle] = {}
    spare = 0
    for worker in workers:
        if worker in styles:
            continue
        if worker in KNOWN_STYLES:
            styles[worker] = KNOWN_STYLES[worker]
        else:
            styles[worker] = _SPARE_STYLES[spare % len(_SPARE_STYLES)]
            spare += 1
    return styles


def _new_figure(width: float = 10.0, height: float = 6.0) -> tuple[Figure, Axes]:
    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure, figure.add_subplot()


def _save(figure: Figure, path_stem: Path | str) -> list[Path]:
    """``<stem>.png`` and ``<stem>.svg``, each written atomically."""
    stem = Path(path_stem)
    written = []
    for fmt in ("png", "svg"):
        buffer = io.BytesIO()
        # Date None: matplotlib would stamp the SVG with the time of writing.
        metadata = {"Date": None} if fmt == "svg" else None
        with mpl.rc_context({"svg.hashsalt": _SVG_HASHSALT, "svg.fonttype": "none"}):
            figure.savefig(buffer, format=fmt, dpi=_DPI, metadata=metadata)
        # with_name, not with_suffix: a stem such as "delays.v2" keeps its ".v2".
        written.append(write_atomically(stem.with_name(f"{stem.name}.{fmt}"), buffer.getvalue()))
    return written


def _note_if_empty(axes: Axes, empty: bool, text: str) -> None:
    # An interrupted run still gets its plots; they say why they are bare.
    if empty:
        axes.text(0.5, 0.5, text, transform=axes.transAxes, ha="center", va="center")


# --- restart delays ------------------------------------------------------------------------


def worker_label(worker: WorkerSummary) -> str:
    """e.g. "fast (2s..2s)": the name and the live curve, as a legend says it."""
    config = worker.live_config
    if config is None:
        return worker.worker
    return f"{worker.worker} ({config.initial_s:g}s..{config.max_s:g}s)"


def plot_delays(summary: RunSummary, path_stem: Path | str) -> list[Path]:
    """Measured restart delays (markers) against the model (line) and its tolerance band."""
    figure, axes = _new_figure()
    styles = styles_for(w.worker for w in summary.workers)
    failed_n: list[int] = []
    failed_s: list[float] = []
    for worker in summary.workers:
        style = styles[worker.worker]
        label = worker_label(worker)
        checks = worker.checks
        restarts = [c.n for c in checks]
        axes.fill_between(
            restarts,
            [c.expected_s for c in checks],
            [c.upper_bound_s for c in checks],
            color=style.color,
            alpha=0.15,
            linewidth=0,
            step="mid",
        )
        axes.plot(
            restarts,
            [c.expected_s for c in checks],
            color=style.color,
            linestyle=style.linestyle,
            linewidth=1.6,
            # The model is one value per restart, not a ramp between them.
            drawstyle="steps-mid",
            label=f"{label}: model",
        )
        measured = [(c.n, c.measured_s) for c in checks if c.measured_s is not None]
        _plot_points(axes, measured, style, f"{label}: measured", size=6)
        for check in checks:
            if not check.passed and check.measured_s is not None:
                failed_n.append(check.n)
                failed_s.append(check.measured_s)
    if failed_n:
        axes.plot(
            failed_n,
            failed_s,
            linestyle="none",
            marker="x",
            markersize=12,
            color="#D00000",
            markeredgewidth=2,
            label="failed check",
        )
    _note_if_empty(axes, not any(w.checks for w in summary.workers), "no restart was measured")
    _delay_axis(axes)
    axes.set_xlabel("restart number n (count)")
    axes.set_ylabel("delay before restart n (s)")
    axes.set_title(f"CrashLoopBackOff restart delays: {summary.run_id} ({summary.status})")
    axes.grid(True, which="major", alpha=0.3)
    handles, labels = axes.get_legend_handles_labels()
    # One band patch explains every shaded area instead of one entry per worker.
    band = "the kubelet's window: back-off .. the latest its code allows"
    handles.append(Patch(facecolor="grey", alpha=0.25, label=band))
    labels.append(band)
    axes.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    return _save(figure, path_stem)


def _plot_points(
    axes: Axes, points: Sequence[tuple[int, float]], style: WorkerStyle, label: str, *, size: float
) -> None:
    """One worker's measurements per restart: its marker, outlined, no line between them."""
    axes.plot(
        [n for n, _ in points],
        [value for _, value in points],
        color=style.color,
        marker=style.marker,
        linestyle="none",
        markersize=size,
        markeredgecolor="black",
        markeredgewidth=0.5,
        label=label,
    )


def _delay_axis(axes: Axes) -> None:
    axes.set_yscale("symlog", linthresh=_SYMLOG_LINEAR_BELOW_S, linscale=0.5)
    top = max(axes.get_ylim()[1], 3.0)
    axes.set_ylim(0, top * 1.3)
    # Plain seconds read better than 10^1 for an audience counting back-offs.
    axes.yaxis.set_major_locator(FixedLocator([t for t in _DELAY_TICKS_S if t <= top * 1.3]))
    axes.yaxis.set_major_formatter(ScalarFormatter())
    axes.yaxis.set_minor_formatter(NullFormatter())
    # Log base 2 on x: the curves double per restart, their interesting part
    # is the first handful of restarts, and a fast worker's 50 restarts at
    # 2s would otherwise squeeze the other two into the left edge.
    axes.set_xscale("log", base=2)
    right = max(axes.get_xlim()[1], 4.0)
    axes.set_xlim(0.8, right * 1.1)
    axes.xaxis.set_major_locator(FixedLocator([2**k for k in range(int(right).bit_length() + 1)]))
    axes.xaxis.set_major_formatter(ScalarFormatter())
    axes.xaxis.set_minor_formatter(NullFormatter())


def plot_matrix(matrix: Matrix, path_stem: Path | str) -> list[Path]:
    """Measured delay per restart, one panel per worker, one line per release side by side."""
    workers = sorted({line.worker for e in matrix.entries for line in e.workers}, key=_worker_order)
    figure = Figure(figsize=(5.0 * max(len(workers), 1), 5.0), layout="constrained")
    FigureCanvasAgg(figure)
    panels = figure.subplots(1, max(len(workers), 1), squeeze=False)[0]
    colors = mpl.colormaps["viridis"].resampled(max(len(matrix.entries), 2))
    for axes, worker in zip(panels, workers, strict=False):
        for index, entry in enumerate(matrix.entries):
            line = next((w for w in entry.workers if w.worker == worker), None)
            if line is None:
                continue
            points = [(n, d) for n, d in enumerate(line.delays_s, start=1) if d is not None]
            axes.plot(
                [n for n, _ in points],
                [d for _, d in points],
                color=colors(index),
                marker="o",
                markersize=3,
                label=entry.version,
            )
        axes.set_title(worker)
        axes.set_xlabel("restart")
        axes.set_ylabel("measured delay (s)")
        _delay_axis(axes)
        axes.legend(fontsize="small")
    _note_if_empty(panels[0], not workers, "no release was measured")
    figure.suptitle(f"restart delays per Kubernetes release ({matrix.profile} check)")
    return _save(figure, path_stem)


def _worker_order(worker: str) -> tuple[int, str]:
    known = list(KNOWN_STYLES)
    base = worker_of(worker)
    return (known.index(base) if base in known else len(known), worker)


def plot_start_latency(summary: RunSummary, path_stem: Path | str) -> list[Path]:
    """Each restart's start latency (started - created): the runtime's share, not the kubelet's."""
    figure, axes = _new_figure(height=4.5)
    styles = styles_for(w.worker for w in summary.workers)
    for worker in summary.workers:
        style = styles[worker.worker]
        points = [(c.n, c.start_latency_s) for c in worker.checks if c.start_latency_s is not None]
        _plot_points(axes, points, style, worker_label(worker), size=5)
    _note_if_empty(
        axes,
        not any(c.start_latency_s is not None for w in summary.workers for c in w.checks),
        "no creation time was recorded",
    )
    axes.set_ylim(bottom=0)
    axes.set_xlabel("restart number n (count)")
    axes.set_ylabel("started - created (s)")
    axes.set_title(f"Container start latency: {summary.run_id}")
    axes.grid(True, which="major", alpha=0.3)
    if axes.get_legend_handles_labels()[0]:
        axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    return _save(figure, path_stem)


# --- restart timeline ----------------------------------------------------------------------


def restart_times_s(attempts: Sequence[AttemptRecord], origin_ns: int) -> list[float]:
    """Seconds from ``origin_ns`` to each restart (the start of every attempt >= 1), sorted."""
    return sorted((a.started_at_ns - origin_ns) / NS_PER_S for a in attempts if a.attempt >= 1)


def _last_event_ns(attempts: Iterable[AttemptRecord]) -> int | None:
    moments = [a.finished_at_ns or a.started_at_ns for a in attempts]
    return max(moments, default=None)


def plot_timeline(
    attempts_by_worker: Mapping[str, Sequence[AttemptRecord]], path_stem: Path | str
) -> list[Path]:
    """Cumulative restarts against time since the first start, one step line per worker.

    All workers share one origin (the earliest start of any of them), so a
    vertical line through the plot is one moment on every node.
    """
    figure, axes = _new_figure(10.0, 5.0)
    every = [a for records in attempts_by_worker.values() for a in records]
    origin = min((a.started_at_ns for a in every), default=0)
    end_ns = _last_event_ns(every)
    end_s = 0.0 if end_ns is None else (end_ns - origin) / NS_PER_S
    styles = styles_for(attempts_by_worker)
    for worker, records in attempts_by_worker.items():
        style = styles[worker]
        times = restart_times_s(records, origin)
        counts = list(range(len(times) + 1))
        # Start at 0 restarts at time 0 and hold the last count to the end of
        # the run, so a worker stuck in a long back-off shows as a long flat step.
        xs = [0.0, *times, max(end_s, times[-1] if times else 0.0)]
        axes.step(
            xs,
            [*counts, counts[-1]],
            where="post",
            color=style.color,
            linestyle=style.linestyle,
            linewidth=1.8,
            label=f"{worker} ({len(times)} restarts)",
        )
        axes.plot(
            times,
            counts[1:],
            linestyle="none",
            marker=style.marker,
            color=style.color,
            markeredgecolor="black",
            markeredgewidth=0.5,
            markersize=5,
        )
    _note_if_empty(axes, not every, "no container attempt was recorded")
    axes.set_xlabel("elapsed time since the first container start (s)")
    axes.set_ylabel("restarts so far (count)")
    axes.set_title("Restarts over time per worker")
    axes.set_xlim(left=0)
    axes.set_ylim(bottom=0)
    axes.grid(True, alpha=0.3)
    if attempts_by_worker:
        axes.legend(loc="upper left", fontsize="small")
    return _save(figure, path_stem)


# --- scenario metrics ----------------------------------------------------------------------


def plot_scenario_metrics(metrics: Sequence[ScenarioMetric], path_stem: Path | str) -> list[Path]:
    """Per scenario a panel of bars: per worker measured (solid) next to model (hatched).

    One panel per scenario, each with its own y axis: the scenarios measure
    different things (seconds to reset, to recover, of isolation) whose
    ranges differ by orders of magnitude.
    """
    if not metrics:
        raise ValueError("no scenario metrics to plot")
    scenarios = list(dict.fromkeys(m.scenario for m in metrics))
    styles = styles_for(m.worker for m in metrics)
    figure = Figure(figsize=(max(6.0, 4.2 * len(scenarios)), 5.0), layout="constrained")
    FigureCanvasAgg(figure)
    panels = figure.subplots(1, len(scenarios), squeeze=False)[0]
    for axes, scenario in zip(panels, scenarios, strict=True):
        _scenario_panel(axes, [m for m in metrics if m.scenario == scenario], styles)
    figure.legend(
        handles=[
            Patch(facecolor="grey", edgecolor="black", label="measured"),
            Patch(facecolor="white", edgecolor="black", hatch="//", label="model"),
            Line2D([], [], color="black", marker="_", linestyle="-", label="the kubelet's window"),
        ],
        loc="outside lower center",
        ncols=3,
    )
    figure.suptitle("Scenarios: measured vs the window the kubelet's code allows, per worker")
    return _save(figure, path_stem)


def _scenario_panel(
    axes: Axes, metrics: Sequence[ScenarioMetric], styles: Mapping[str, WorkerStyle]
) -> None:
    width = 0.38
    for index, metric in enumerate(metrics):
        style = styles[metric.worker]
        measured = axes.bar(
            index - width / 2,
            metric.measured or 0.0,
            width,
            color=style.color,
            edgecolor="black",
        )
        expected = axes.bar(
            index + width / 2,
            metric.expected,
            width,
            color="white",
            edgecolor=style.color,
            hatch=style.hatch,
            linewidth=1.2,
        )
        if metric.lower is not None or metric.upper is not None:
            # The window as a whisker over the model's bar: a measured bar inside it is
            # the kubelet keeping its code's promise, however far from the model's line.
            low = metric.lower if metric.lower is not None else metric.expected
            high = metric.upper if metric.upper is not None else metric.expected
            axes.errorbar(
                index + width / 2,
                metric.expected,
                yerr=[[max(metric.expected - low, 0.0)], [max(high - metric.expected, 0.0)]],
                color="black",
                capsize=4,
                linewidth=1.0,
            )
        # Numbers on the bars: the audience compares values, not bar heights.
        shown = "n/a" if metric.measured is None else f"{metric.measured:.3g}"
        axes.bar_label(measured, [shown + (" outside" if metric.inside is False else "")])
        axes.bar_label(expected, [f"{metric.expected:.3g}"])
    axes.set_xticks(range(len(metrics)), [m.worker for m in metrics])
    axes.set_xlabel("worker")
    units = list(dict.fromkeys(f"{m.metric} ({m.unit})" for m in metrics))
    axes.set_ylabel(" / ".join(units))
    axes.set_title(metrics[0].scenario)
    axes.margins(y=0.15)
    axes.grid(True, axis="y", alpha=0.3)


# --- the overhead sweep ----------------------------------------------------------------------


@dataclass(frozen=True)
class OverheadSeries:
    """One line of an overhead plot: a worker's crashing pods, or the running baseline."""

    label: str
    style_of: str  # the worker whose style it takes; "" for the baseline
    points: tuple[tuple[float, float], ...]  # (pods, or seconds into the window; value)


def plot_overhead(
    series: Sequence[OverheadSeries],
    ylabel: str,
    title: str,
    path_stem: Path | str,
    *,
    xlabel: str = "pods on the worker",
) -> list[Path]:
    """One measure against the pod count (or the time in a window): a line per worker, the
    baseline dashed grey."""
    figure, axes = _new_figure(8.0, 5.0)
    styles = styles_for(s.style_of for s in series if s.style_of)
    for line in series:
        points = sorted(line.points)
        xs, ys = [p for p, _ in points], [v for _, v in points]
        if line.style_of:
            style = styles[line.style_of]
            axes.plot(
                xs,
                ys,
                color=style.color,
                marker=style.marker,
                linestyle=style.linestyle,
                label=line.label,
            )
        else:
            axes.plot(xs, ys, color="#777777", marker="o", linestyle="--", label=line.label)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    axes.grid(alpha=0.3)
    _note_if_empty(axes, not any(s.points for s in series), "no cell was measured")
    if any(s.points for s in series):
        axes.legend(fontsize="small")
    return _save(figure, path_stem)
