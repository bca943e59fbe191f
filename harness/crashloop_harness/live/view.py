"""The live terminal view of ``make demo``: one column per worker, side by side.

Pure rendering plus one thin wrapper: :func:`states_from` turns what the
recorder has seen (attempt records) and the model (a curve per worker) into
:class:`WorkerState` values, :func:`render` turns those into a rich
renderable, :func:`plain_line` into one line of text. :class:`LiveView`
redraws the renderable in place on a terminal, and prints a plain line only
when something changed anywhere else (a CI log, a pipe), where a redrawn
screen would be thousands of lines of noise.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Final, Literal, Protocol

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.live import Live
from rich.panel import Panel
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from crashloop_harness.live.scenarioview import ScenarioCell
from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.model.durations import NS_PER_S
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.verdict.tolerances import CLOCK_ROUNDING

WorkerPhase = Literal["running", "waiting", "crashed", "ended"]
Theme = Literal["dark", "light"]
THEMES: Final[tuple[Theme, ...]] = ("dark", "light")

TIMELINE_WIDTH: Final = 40  # when no width is given
# Under the panels: how to read each panel's |timeline| and its "start" line.
TIMELINE_LEGEND: Final = (
    "|timeline|: the window, ▁▃▅▇█ 1 to 5+ per cell, · past · start: create to start (the machine)"
)
# Restarts per timeline cell, drawn denser the more fall into one cell.
_MARKS: Final = "▁▃▅▇█"
_ELAPSED_CELL: Final = "·"
# High contrast on either background: yellow on white (and blue on black) cannot be read
# from the back of a room.
_PHASE_STYLE: Final[Mapping[Theme, Mapping[str, str]]] = {
    "dark": {
        "running": "bold green",
        "waiting": "bold yellow",
        "crashed": "bold red",
        "ended": "bold magenta",
    },
    "light": {
        "running": "bold dark_green",
        "waiting": "bold blue",
        "crashed": "bold red3",
        "ended": "bold magenta",
    },
}
_COUNTER_STYLE: Final[Mapping[Theme, str]] = {
    "dark": "bold black on bright_white",
    "light": "bold white on black",
}
_AGO: Final = re.compile(r" \d+s ago")
# How many recent delays a panel shows at the most (fewer when narrow).
RECENT_DELAYS: Final = 8
# (earliest, latest) seconds a restart may take on its kubelet.
Window = tuple[float, float]
# A restart is never early by more than the clock's rounding (the bounds table).
CLOCK_ROUNDING_S: Final = CLOCK_ROUNDING.total_seconds()
# The panels' label column ("restarts", "delay s") and the space after it.
_LABEL_WIDTH: Final = len("restarts") + 1
# Which KEP a profile demonstrates; shown so the audience can map the column to the talk.
KEP_BY_PROFILE: Final[Mapping[str, str]] = {
    "fast": "KEP-5593",
    "reduced": "KEP-4603 (alpha)",
    "default": "none (default)",
}


@dataclass(frozen=True)
class WorkerState:
    """What one worker's column shows at one moment.

    ``state`` is "running" while the latest attempt has not exited, "waiting"
    while it is in its back-off (``next_restart_in_s`` counts down), and
    "crashed" once the modelled back-off is over but no new attempt has been
    seen: the restart is due, or late. Before the first start the state is
    "waiting" with no countdown. A replay, which knows the rest of the
    recording, says "ended" where no later attempt was recorded: the worker
    was decided, or its observation stopped (``ended`` says which). ``timeline``
    holds restart times in seconds since the run started.
    """

    worker: str
    profile: str
    kep: str
    restarts: int
    last_delay_s: float | None
    last_expected_s: float | None
    state: WorkerPhase
    next_restart_in_s: float | None
    timeline: Sequence[float]
    # The last RECENT_DELAYS restarts: (measured delay or None, the kubelet's window
    # for it or None). A delay runs from the exit to the kubelet's decision (the
    # container's create) where the runtime reports it: the kubelet's part alone.
    recent: Sequence[tuple[float | None, Window | None]] = ()
    # The last restart's start latency (create to start): the machine's part.
    start_latency_s: float | None = None
    # The window the kubelet's code allows the last restart: from its back-off to the
    # bounds table's upper end (the requeue's jitter, the sync, the restart's cost).
    last_window_s: Window | None = None
    # Why no attempt follows (a replay only): the worker's verdict, when it was decided.
    ended: str | None = None

    @property
    def last_outside(self) -> bool:
        """The last restart came later (or earlier) than the kubelet's code allows."""
        if self.last_delay_s is None or self.last_window_s is None:
            return False
        return not within(self.last_delay_s, self.last_window_s)


class ResultLike(Protocol):
    """What :func:`states_from` needs of a run (a
    :class:`crashloop_harness.runs.check.CheckResult`)."""

    @property
    def attempts(self) -> Mapping[str, Sequence[AttemptRecord]]: ...


# Per worker, restart n -> the window its verdict judged it by (a replay knows them all).
JudgedWindows = Mapping[str, Mapping[int, Window]]


def states_from(
    result_like: ResultLike,
    curves: Mapping[str, BackoffCurve],
    now_ns: int,
    *,
    start_ns: int | None = None,
    profiles: Mapping[str, str] | None = None,
    judged: JudgedWindows | None = None,
) -> list[WorkerState]:
    """Every worker's state at ``now_ns`` (Unix nanoseconds, the runtime's clock).

    Workers come in the order of ``curves``, then any that only have records.
    ``start_ns`` is when the run started (default: the first container
    start); ``profiles`` maps worker to profile name (default: the worker's
    own name, as in the harness's cluster). Curve resets after a long run
    are not modelled: the demo's containers crash at once. ``judged``: the
    windows the verdict judged restarts by (its node's measured pace in them),
    shown in place of the curve's own where known, so a replay's panels and its
    closing table read the same window for the same restart.
    """
    attempts = result_like.attempts
    every = [a for records in attempts.values() for a in records]
    origin = (
        start_ns if start_ns is not None else min((a.started_at_ns for a in every), default=now_ns)
    )
    workers = list(curves) + [w for w in attempts if w not in curves]
    states = []
    for worker in workers:
        profile = (profiles or {}).get(worker, worker)
        states.append(
            _state(
                worker,
                profile,
                attempts.get(worker, ()),
                curve=curves.get(worker),
                now_ns=now_ns,
                origin_ns=origin,
                judged=(judged or {}).get(worker, {}),
            )
        )
    return states


def _state(
    worker: str,
    profile: str,
    records: Sequence[AttemptRecord],
    *,
    curve: BackoffCurve | None,
    now_ns: int,
    origin_ns: int,
    judged: Mapping[int, Window],
) -> WorkerState:
    records = sorted(records, key=lambda a: (a.attempt, a.started_at_ns))
    latest = records[-1] if records else None
    base = WorkerState(
        worker=worker,
        profile=profile,
        kep=KEP_BY_PROFILE.get(profile, "-"),
        restarts=0,
        last_delay_s=None,
        last_expected_s=None,
        # No container has started yet: the pod is still being scheduled or pulled.
        state="waiting",
        next_restart_in_s=None,
        timeline=(),
    )
    if latest is None:
        return base
    previous = next((a for a in records if a.attempt == latest.attempt - 1), None)
    last_delay = None
    if previous is not None and previous.finished_at_ns is not None:
        last_delay = (_decided_ns(latest) - previous.finished_at_ns) / NS_PER_S

    def expected(n: int) -> float | None:
        return None if curve is None else curve.delay_before_restart(n).total_seconds()

    def window(n: int) -> Window | None:
        if n in judged:
            return judged[n]
        return None if curve is None else window_of(curve, n)

    state: WorkerPhase = "running"
    next_in = None
    if latest.finished_at_ns is not None:
        wait = expected(latest.attempt + 1)
        elapsed = (now_ns - latest.finished_at_ns) / NS_PER_S
        next_in = None if wait is None else max(wait - elapsed, 0.0)
        # Without a curve the wait is unknown, so it cannot be called overdue.
        state = "crashed" if next_in == 0.0 else "waiting"
    by_attempt = {a.attempt: a for a in records}
    recent = []
    for record in records[-RECENT_DELAYS:]:
        if record.attempt < 1:
            continue
        before = by_attempt.get(record.attempt - 1)
        measured = (
            (_decided_ns(record) - before.finished_at_ns) / NS_PER_S
            if before is not None and before.finished_at_ns is not None
            else None
        )
        recent.append((measured, window(record.attempt)))
    return WorkerState(
        worker=worker,
        profile=profile,
        kep=base.kep,
        recent=tuple(recent),
        start_latency_s=(
            (latest.started_at_ns - latest.created_at_ns) / NS_PER_S
            if latest.created_at_ns is not None and latest.attempt >= 1
            else None
        ),
        restarts=latest.attempt,
        last_delay_s=last_delay,
        last_expected_s=expected(latest.attempt) if latest.attempt >= 1 else None,
        last_window_s=window(latest.attempt) if latest.attempt >= 1 else None,
        state=state,
        next_restart_in_s=next_in,
        timeline=tuple((a.started_at_ns - origin_ns) / NS_PER_S for a in records if a.attempt >= 1),
    )


def window_of(curve: BackoffCurve, n: int) -> Window:
    """Restart n's window on ``curve``: its back-off, to the latest the kubelet's code allows."""
    backoff = curve.delay_before_restart(n)
    return backoff.total_seconds(), curve.upper_tolerance(backoff).total_seconds()


def within(delay_s: float, window: Window) -> bool:
    """Whether a delay lies in a restart's window, as the verdict reads it (never early by
    more than the clock's rounding)."""
    low, high = window
    return low - CLOCK_ROUNDING_S <= delay_s <= high


def window_text(window: Window | None) -> str:
    return "-" if window is None else f"{window[0]:g}-{tenths_up(window[1]):g}s"


def tenths_up(seconds: float) -> float:
    """Rounded up to a tenth, so the window shown holds the one judged (3.40692 s reads
    3.5 s); the rounding first drops float noise such as 4.5000000001."""
    return math.ceil(round(seconds * 10, 6)) / 10


def _decided_ns(record: AttemptRecord) -> int:
    """When the kubelet decided to run this attempt: the create, else (API only) the start."""
    return record.created_at_ns if record.created_at_ns is not None else record.started_at_ns


# --- rendering -----------------------------------------------------------------------------


def _secs(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}s"


def next_restart_text(state: WorkerState) -> str:
    """e.g. "in 1.4s", "due now", or "-" while running or unknown."""
    if state.state == "ended":
        return state.ended or "none recorded"
    if state.state == "crashed":
        return "due now"
    if state.next_restart_in_s is None:
        return "-"
    return f"in {state.next_restart_in_s:.1f}s"


def timeline_bar(
    restart_times_s: Sequence[float],
    elapsed_s: float,
    duration_s: float,
    width: int = TIMELINE_WIDTH,
) -> str:
    """One line of ``width`` cells over 0..duration: a mark per cell with restarts.

    Cells already lived through are dotted, the future is blank, so the bar
    doubles as the run's progress.
    """
    span = max(duration_s, elapsed_s, 1e-9)
    counts = [0] * width
    for moment in restart_times_s:
        cell = min(int(max(moment, 0.0) / span * width), width - 1)
        counts[cell] += 1
    lived = min(int(elapsed_s / span * width + 0.999), width)
    cells = []
    for index, count in enumerate(counts):
        if count:
            cells.append(_MARKS[min(count, len(_MARKS)) - 1])
        else:
            cells.append(_ELAPSED_CELL if index < lived else " ")
    return "".join(cells)


@dataclass(frozen=True)
class _Timeline:
    """The timeline bar, as wide as the space it is given (a panel's inner width)."""

    times: Sequence[float]
    elapsed_s: float
    duration_s: float

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        # Two cells for the bar's ends; at least one for the bar itself.
        width = max(options.max_width - 2, 1)
        bar = timeline_bar(self.times, self.elapsed_s, self.duration_s, width)
        yield Text(f"|{bar}|", no_wrap=True, overflow="crop")


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


@dataclass(frozen=True)
class _Recent:
    """The last delays over the kubelet's window for each, as many as fit the panel's width,
    newest last.

    Drawn at the width the panel gives (like the timeline), so it never
    wraps: the measured delay stands right above its window.
    """

    recent: Sequence[tuple[float | None, Window | None]]
    label_width: int

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        cells = [(_number(m), window_text(w).removesuffix("s")) for m, w in self.recent]
        # A delay outside its window stands out: the kubelet's code does not allow it.
        outside = [m is not None and w is not None and not within(m, w) for m, w in self.recent]
        cell = max((len(text) for pair in cells for text in pair), default=3) + 1
        room = max(options.max_width - self.label_width, cell)
        count = min(room // cell, RECENT_DELAYS)
        shown, flagged = cells[-count:], outside[-count:]
        for label, index in (("delay s", 0), ("window s", 1)):
            line = Text(label.ljust(self.label_width), style="dim")
            for pair, late in zip(shown, flagged, strict=True):
                style = "dim" if index else ("bold red" if late else "")
                line.append(pair[index].rjust(cell), style=style)
            if not shown:
                line.append(" -")
            yield Text.assemble(line, no_wrap=True, overflow="crop")


def _panel(state: WorkerState, elapsed_s: float, duration_s: float, theme: Theme) -> Panel:
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="dim", no_wrap=True, min_width=_LABEL_WIDTH - 1)
    grid.add_column(no_wrap=True, overflow="ellipsis", ratio=1)
    # Text, not markup: worker and profile names come from the user's files.
    grid.add_row("restarts", Text(f" {state.restarts} ", style=_COUNTER_STYLE[theme]))
    grid.add_row("state", Text(state.state, style=_PHASE_STYLE[theme][state.state]))
    grid.add_row("next", Text(next_restart_text(state)))
    # The runtime's start after the kubelet's decision: on a loaded machine this is
    # where a restart comes late, and it is the machine's lateness, not the kubelet's
    # (the legend says so: a third of 80 columns has no room for it here).
    grid.add_row("start", Text(_secs(state.start_latency_s), style="dim"))
    timeline = _Timeline(state.timeline, elapsed_s, duration_s)
    title = Text(state.worker, style="bold")
    if state.profile != state.worker:
        title.append(f" ({state.profile})")
    return Panel(
        Group(grid, _Recent(state.recent, _LABEL_WIDTH), timeline),
        title=title,
        title_align="left",
        subtitle=Text(state.kep),
        subtitle_align="right",
    )


def scenario_table(cells: Sequence[ScenarioCell]) -> Table:
    """Restarts per container and the latest exit, per scenario (rows) and worker (columns)."""
    workers = list(dict.fromkeys(cell.worker for cell in cells))
    table = Table.grid(padding=(0, 1), expand=True)
    table.add_column(style="dim", no_wrap=True)
    for _ in workers:
        table.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
    for scenario in dict.fromkeys(cell.scenario for cell in cells):
        row = {cell.worker: cell for cell in cells if cell.scenario == scenario}
        # Two lines a scenario: the restarts, then the latest exit, each short enough
        # for a third of 100 columns.
        table.add_row(Text(scenario), *(Text(row[w].counts if w in row else "-") for w in workers))
        table.add_row(
            Text(""), *(Text(row[w].last if w in row else "", style="dim") for w in workers)
        )
    return table


def render(
    states: Sequence[WorkerState],
    elapsed_s: float,
    duration_s: float,
    theme: Theme = "dark",
    *,
    scenarios: Sequence[ScenarioCell] = (),
    cpu_busy: float | None = None,
) -> RenderableType:
    """A header with the run's progress over one panel per worker, side by side.

    ``cpu_busy`` (0..1, the host's cores) is shown in the header: a restart late
    while every core is busy is the machine's lateness, not the kubelet's.
    """
    header = Table.grid(padding=(0, 1), expand=True)
    header.add_column(no_wrap=True)
    header.add_column(ratio=1)
    shown = min(elapsed_s, duration_s)
    cpu = "" if cpu_busy is None else f" · host CPU {cpu_busy:.0%}"
    header.add_row(
        Text(f"crashloop demo: {shown:.0f}s of {duration_s:.0f}s{cpu}"),
        ProgressBar(total=max(duration_s, 1e-9), completed=shown),
    )
    # A grid with equal-ratio columns, not rich.columns.Columns: Columns wraps
    # onto new rows when narrow, and the point is to see the workers side by side.
    row = Table.grid(expand=True, padding=(0, 1))
    for _ in states:
        row.add_column(ratio=1)
    row.add_row(*(_panel(s, elapsed_s, duration_s, theme) for s in states))
    # Wrapped, never cut: at 80 columns it takes two lines.
    legend = Text(TIMELINE_LEGEND, style="dim")
    if not scenarios:
        return Group(header, row, legend)
    return Group(header, row, legend, scenario_table(scenarios))


def plain_line(state: WorkerState, elapsed_s: float) -> str:
    """One worker's line for logs, short enough for 100 columns:
    "[   12.0s] fast: 4 restarts, waiting, next in 1.4s, last 2.2s (window 2-4.5s)"."""
    last = ""
    if state.last_delay_s is not None:
        where = "OUTSIDE its window" if state.last_outside else "window"
        last = f", last {state.last_delay_s:.1f}s ({where} {window_text(state.last_window_s)})"
    upcoming = next_restart_text(state)
    shown = state.state if upcoming == "-" else f"{state.state}, next {upcoming}"
    return f"[{elapsed_s:7.1f}s] {state.worker}: {state.restarts} restarts, {shown}{last}"


def _change_key(state: WorkerState) -> tuple[int, str]:
    # The countdown moves on every sample; only a restart or a new state is news.
    return state.restarts, state.state


class LiveView:
    """``with LiveView(duration_s) as view: view.update(states, elapsed_s)``.

    On a terminal the view is redrawn in place (and stays on screen after
    the run); elsewhere one plain line is printed per change.
    """

    def __init__(
        self,
        duration_s: float,
        console: Console | None = None,
        refresh_per_second: float = 4,
        theme: Theme = "dark",
    ) -> None:
        self.duration_s = duration_s
        self.theme: Theme = theme
        self.console = console or Console()
        self._refresh = refresh_per_second
        self._live: Live | None = None
        self._last_keys: dict[str, tuple[int, str]] = {}
        self._last_scenarios: dict[tuple[str, str], str] = {}

    def __enter__(self) -> LiveView:
        if self.console.is_terminal:
            self._live = Live(
                console=self.console,
                refresh_per_second=self._refresh,
                transient=False,
                screen=False,
            )
            self._live.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def update(
        self,
        states: Sequence[WorkerState],
        elapsed_s: float,
        scenarios: Sequence[ScenarioCell] = (),
        cpu_busy: float | None = None,
    ) -> None:
        if self._live is not None:
            self._live.update(
                render(
                    states,
                    elapsed_s,
                    self.duration_s,
                    self.theme,
                    scenarios=scenarios,
                    cpu_busy=cpu_busy,
                ),
                refresh=True,
            )
            return
        for cell in scenarios:
            # "4s ago" moves every second; a new restart or exit is the news.
            news = _AGO.sub("", cell.text)
            if self._last_scenarios.get((cell.scenario, cell.worker)) != news:
                self._last_scenarios[(cell.scenario, cell.worker)] = news
                self.console.print(
                    f"[{elapsed_s:7.1f}s] {cell.scenario} {cell.worker}: {cell.text}",
                    markup=False,
                    highlight=False,
                    soft_wrap=True,
                )
        for state in states:
            # A line for each worker whose news it is, not every worker on every change.
            key = _change_key(state)
            if self._last_keys.get(state.worker) != key:
                self._last_keys[state.worker] = key
                # markup/highlight off: the line is data, printed as is.
                self.console.print(
                    plain_line(state, elapsed_s), markup=False, highlight=False, soft_wrap=True
                )
