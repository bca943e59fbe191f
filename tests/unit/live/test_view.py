"""The live demo view (crashloop_harness.live.view): states from records, rich and plain
rendering."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Sequence
from datetime import timedelta

import pytest
from rich.console import Console

from crashloop_harness.live.view import (
    THEMES,
    TIMELINE_LEGEND,
    LiveView,
    Theme,
    WorkerState,
    plain_line,
    render,
    states_from,
    timeline_bar,
)
from crashloop_harness.model.backoff import BackoffCurve
from tests.unit.factories import (
    FAST,
    NS,
    T0,
    WORKERS,
    quick_attempts,
    quick_summary,
)
from tests.unit.live.factories import CURVES, FakeResult, finished_ns, records, sample_states


def text_of(states: Sequence[WorkerState], elapsed_s: float = 30.0) -> str:
    console = Console(record=True, width=160)
    console.print(render(states, elapsed_s, 120.0))
    return console.export_text()


def panel_lines(text: str) -> list[str]:
    """The inside of every panel line, stripped: "│ a │ │ b │" gives a and b."""
    return [cell.strip() for line in text.splitlines() for cell in line.split("│")[1::2]]


def test_a_worker_in_back_off_counts_down_to_its_next_restart() -> None:
    fast = sample_states()[0]
    assert fast.worker == "fast"
    assert fast.profile == "fast"
    assert fast.kep == "KEP-5593"
    assert fast.restarts == 3
    assert fast.state == "waiting"
    assert fast.next_restart_in_s == 1.5
    assert fast.last_delay_s == 2.2
    assert fast.last_expected_s == 2.0
    # Restarts at 0.4s, then 2.3s and 2.2s after 50ms runs, from the first start.
    assert [round(t, 3) for t in fast.timeline] == [0.45, 2.8, 5.05]


def test_a_running_worker_has_no_countdown() -> None:
    reduced = sample_states()[1]
    assert (reduced.state, reduced.restarts, reduced.next_restart_in_s) == ("running", 2, None)
    assert reduced.last_expected_s == 1.0
    assert reduced.kep == "KEP-4603 (alpha)"


def test_a_worker_without_records_is_waiting_for_its_first_start() -> None:
    default = sample_states()[2]
    assert default.worker == "default"
    assert (default.state, default.restarts, default.next_restart_in_s) == ("waiting", 0, None)
    assert (default.last_delay_s, default.last_expected_s, tuple(default.timeline)) == (
        None,
        None,
        (),
    )


def test_an_overdue_restart_is_crashed_and_due() -> None:
    default = records("default", [0.5])
    now = finished_ns(default[-1]) + 11 * NS  # the curve waits 10s before restart 2
    state = states_from(FakeResult({"default": default}), CURVES, now)[2]
    assert (state.state, state.next_restart_in_s) == ("crashed", 0.0)


def test_records_without_a_curve_still_show_and_profiles_can_be_named() -> None:
    extra = records("extra", [0.5])
    states = states_from(
        FakeResult({"extra": extra}),
        {"fast": FAST},
        finished_ns(extra[-1]),
        start_ns=T0 - 10 * NS,
        profiles={"extra": "custom"},
    )
    assert [s.worker for s in states] == ["fast", "extra"]
    extra_state = states[1]
    assert (extra_state.profile, extra_state.kep, extra_state.state) == ("custom", "-", "waiting")
    assert extra_state.next_restart_in_s is None
    assert extra_state.last_expected_s is None
    assert [round(t, 2) for t in extra_state.timeline] == [10.55]


def test_states_from_the_real_quick_run() -> None:
    curves = {
        w.worker: BackoffCurve(
            initial=timedelta(seconds=w.live_config.initial_s),
            maximum=timedelta(seconds=w.live_config.max_s),
        )
        for w in quick_summary().workers
        if w.live_config is not None
    }
    runs = quick_attempts()
    end = max(finished_ns(r) for rs in runs.values() for r in rs)
    states = states_from(FakeResult(runs), curves, end)
    assert [(s.worker, s.restarts) for s in states] == [
        ("fast", 11),
        ("reduced", 8),
        ("default", 5),
    ]
    default = states[2]
    assert default.last_expected_s == 80.0
    assert default.last_delay_s is not None
    assert 80.0 < default.last_delay_s < 90.0
    # The last record is default's exit after restart 5; the next wait is 160s.
    assert default.next_restart_in_s == 160.0


def test_render_shows_a_column_per_worker_with_counts_and_countdown() -> None:
    text = text_of(sample_states())
    header, panels = text.splitlines()[0], text.splitlines()[1]
    assert "crashloop demo: 30s of 120s" in header
    # Side by side: every panel's title on the same line.
    assert all(f"─ {worker} " in panels for worker in WORKERS)
    assert panels.index("fast") < panels.index("reduced") < panels.index("default")
    lines = set(panel_lines(text))
    assert "restarts  3" in lines
    assert "restarts  2" in lines
    assert "restarts  0" in lines
    for expected in ("next     in 1.5s", "state    running"):
        assert expected in lines
    # The recent delays over the kubelet's window for each, in aligned columns.
    assert "delay s     0.4   2.3   2.2" in lines
    assert "window s    0-5 2-4.5 2-4.5" in lines
    assert "KEP-5593" in text


def test_render_prints_names_literally() -> None:
    state = dataclasses.replace(sample_states()[0], worker="[bold]w[/bold]", profile="[red]p")
    text = text_of([state])
    assert "[bold]w[/bold]" in text
    assert "[red]p" in text


def test_render_shows_a_timeline_of_restart_marks() -> None:
    text = text_of(sample_states(), elapsed_s=60.0)
    bars = [line for line in panel_lines(text) if line.startswith("|")]
    assert len(bars) == 3
    fast_bar = bars[0]
    assert fast_bar.endswith("|")
    assert fast_bar.count("▁") + fast_bar.count("▃") >= 2
    assert set(bars[2].strip("|")) <= {"·", " "}


def test_timeline_bar_places_marks_over_the_duration() -> None:
    assert timeline_bar([0.0, 55.0], elapsed_s=60.0, duration_s=100.0, width=10) == "▁····▁    "
    assert timeline_bar([1.0, 2.0, 3.0], elapsed_s=5.0, duration_s=10.0, width=5) == "▁▃·  "
    # A run that overruns its planned duration stretches the bar, never overflows it.
    assert len(timeline_bar([150.0], elapsed_s=150.0, duration_s=100.0, width=8)) == 8


def test_plain_line_format() -> None:
    assert [plain_line(state, 12.34) for state in sample_states()] == [
        "[   12.3s] fast: 3 restarts, waiting, next in 1.5s, last 2.2s (window 2-4.5s)",
        "[   12.3s] reduced: 2 restarts, running, last 1.2s (window 1-3s)",
        "[   12.3s] default: 0 restarts, waiting",
    ]


def test_a_restart_later_than_the_kubelets_code_allows_is_flagged_not_read_as_a_miss() -> None:
    # 45.6 s against a 32 s back-off is inside the v1.35 window (32 + 16 + 1.5 s): no flag.
    reduced = dataclasses.replace(
        sample_states()[1], last_delay_s=45.6, last_expected_s=32.0, last_window_s=(32.0, 49.5)
    )
    assert not reduced.last_outside
    assert "(window 32-49.5s)" in plain_line(reduced, 1.0)
    late = dataclasses.replace(reduced, last_delay_s=50.0)
    assert late.last_outside
    assert "(OUTSIDE its window 32-49.5s)" in plain_line(late, 1.0)


def test_off_a_terminal_a_line_is_printed_only_on_change() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=300)
    states = sample_states()
    fast = states[0]
    ticking = dataclasses.replace(fast, next_restart_in_s=0.7)
    restarted = dataclasses.replace(fast, restarts=4, state="running", next_restart_in_s=None)
    with LiveView(120.0, console=console) as view:
        view.update(states, 1.0)
        view.update([ticking, *states[1:]], 1.8)  # only the countdown moved
        view.update([restarted, *states[1:]], 2.5)
    lines = out.getvalue().splitlines()
    # Every worker once at first, then only the one that restarted.
    assert [line.split(":")[0] for line in lines] == [
        "[    1.0s] fast",
        "[    1.0s] reduced",
        "[    1.0s] default",
        "[    2.5s] fast",
    ]
    assert lines[0].startswith("[    1.0s] fast: 3 restarts, waiting")
    assert lines[3].startswith("[    2.5s] fast: 4 restarts, running")


def test_on_a_terminal_the_view_is_drawn_live() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=160)
    with LiveView(120.0, console=console) as view:
        view.update(sample_states(), 3.0)
    drawn = out.getvalue()
    assert all(worker in drawn for worker in WORKERS)
    assert "in 1.5s" in drawn
    assert "[    3.0s]" not in drawn


def _at(width: int, height: int, states: Sequence[WorkerState], theme: Theme = "dark") -> str:
    console = Console(record=True, width=width, height=height, force_terminal=True)
    console.print(render(states, 30.0, 120.0, theme))
    return console.export_text()


def _long_run_states() -> list[WorkerState]:
    """The default worker deep in its curve: eight delays of up to 300 s, the widest numbers."""
    default = records("default", [0.4, 10.2, 20.3, 40.1, 80.6, 160.4, 300.9, 300.2, 301.0])
    fast = records("fast", [0.4, *([2.6] * 60)])
    now = finished_ns(default[-1]) + NS
    return states_from(FakeResult({"fast": fast, "default": default}), CURVES, now)


@pytest.mark.parametrize(("width", "height"), [(80, 24), (100, 30), (160, 40)])
@pytest.mark.parametrize("theme", THEMES)
def test_the_view_fits_a_projector_terminal_without_wrapping(
    width: int, height: int, theme: Theme
) -> None:
    for states in (sample_states(), _long_run_states()):
        text = _at(width, height, states, theme)
        lines = text.splitlines()
        assert max(len(line) for line in lines) <= width
        assert "…" not in text, "a panel's cell was cut"
        # A header, one row of panels (7 rows inside, 2 borders) and the timeline's legend
        # (two lines where it does not fit one); a wrapped row adds lines.
        legend_lines = 1 if len(TIMELINE_LEGEND) <= width else 2
        assert len(lines) == 1 + 9 + legend_lines
        assert sum(line.count("restarts ") for line in lines) == len(states)


def test_more_recent_delays_show_where_there_is_room() -> None:
    def shown(width: int) -> int:
        row = next(
            line for line in _at(width, 40, _long_run_states()).splitlines() if "delay s" in line
        )
        default_cell = row.split("│")[5]  # fast, reduced, default
        return len(default_cell.split()) - 2  # less the label's two words

    assert 1 <= shown(100) < shown(160) <= 8


def test_the_counter_and_states_are_styled_for_the_chosen_background() -> None:
    dark = Console(record=True, width=100, force_terminal=True, color_system="truecolor")
    dark.print(render(sample_states(), 30.0, 120.0, "dark"))
    light = Console(record=True, width=100, force_terminal=True, color_system="truecolor")
    light.print(render(sample_states(), 30.0, 120.0, "light"))
    assert dark.export_text(styles=True) != light.export_text(styles=True)
    assert dark.export_text() == light.export_text()


def test_a_delay_runs_to_the_kubelet_s_decision_and_the_start_is_the_machine_s() -> None:
    fast = records("fast", [0.4, 2.0])
    # The runtime created restart 2 on time, and started it 0.8 s later (a busy machine).
    late_start = dataclasses.replace(
        fast[-1],
        created_at_ns=fast[-1].started_at_ns,
        started_at_ns=fast[-1].started_at_ns + 8 * NS // 10,
    )
    fast = [*fast[:-1], late_start]
    now = finished_ns(fast[-1]) + NS // 2
    (state,) = states_from(FakeResult({"fast": fast}), {"fast": FAST}, now)
    assert state.last_delay_s == pytest.approx(2.0)
    assert state.start_latency_s == pytest.approx(0.8)
    assert "start    0.8s" in text_of([state])
    assert "start: create to start (the machine)" in text_of([state])
