"""The scenarios shown live: restarts per container and the latest exit, per scenario and worker."""

from __future__ import annotations

import dataclasses
import io

from rich.console import Console

from crashloop_harness.live.scenarioview import ScenarioCell, scenario_cells
from crashloop_harness.live.takeaways import scenario_takeaways
from crashloop_harness.live.view import LiveView, render
from crashloop_harness.recording.records import AttemptRecord
from tests.unit.factories import NS, T0, attempts, scenario_metrics
from tests.unit.live.factories import sample_states

PODS = {
    "sidecar-fast": ("critical-sidecar", "fast"),
    "sidecar-default": ("critical-sidecar", "default"),
    "session-fast": ("task-isolation", "fast"),
}


def _sidecar_records() -> list[AttemptRecord]:
    proxy = [
        dataclasses.replace(r, pod="sidecar-fast", container="proxy", reason="OOMKilled")
        for r in attempts([1.0, 2.0])
    ]
    app = [
        dataclasses.replace(r, pod="sidecar-fast", container="app", finished_at_ns=None)
        for r in attempts([])
    ]
    return [*proxy, *app]


def test_a_cell_counts_restarts_per_container_and_names_the_latest_exit() -> None:
    records = _sidecar_records()
    last_exit = max(r.finished_at_ns for r in records if r.finished_at_ns is not None)
    cells = scenario_cells(records, PODS, last_exit + 4 * NS)
    assert cells[0] == ScenarioCell(
        "critical-sidecar", "fast", "proxy 2 · app 0", "proxy OOMKilled 4s ago"
    )
    assert cells[0].text == "proxy 2 · app 0 · proxy OOMKilled 4s ago"


def test_a_pod_with_no_record_yet_is_starting_and_strangers_are_ignored() -> None:
    stranger = dataclasses.replace(attempts([])[0], pod="someone-else")
    cells = scenario_cells([stranger], PODS, T0)
    assert [c.text for c in cells] == ["starting", "starting", "starting"]
    assert [(c.scenario, c.worker) for c in cells] == list(PODS.values())


def test_the_view_with_scenarios_still_fits_100_columns() -> None:
    cells = scenario_cells(_sidecar_records(), PODS, T0 + 30 * NS)
    console = Console(record=True, width=100, height=30, file=io.StringIO())
    console.print(render(sample_states(), 30.0, 120.0, "dark", scenarios=cells, cpu_busy=0.97))
    lines = console.export_text().splitlines()
    assert max(len(line) for line in lines) <= 100
    assert len(lines) <= 30
    assert any(line.startswith("critical-sidecar") and "proxy 2" in line for line in lines)
    # Nothing cut short: the latest exit fits whole on its own line.
    assert any(line.strip().startswith("proxy OOMKilled") for line in lines)
    assert not any("…" in line for line in lines)
    assert "host CPU 97%" in lines[0]


def test_off_a_terminal_a_scenario_line_is_printed_when_something_happens() -> None:
    out = io.StringIO()
    records = _sidecar_records()
    with LiveView(120.0, console=Console(file=out, force_terminal=False)) as view:
        view.update(sample_states(), 1.0, scenario_cells(records, PODS, T0 + 10 * NS))
        # Only the "ago" moved: no news.
        view.update(sample_states(), 2.0, scenario_cells(records, PODS, T0 + 11 * NS))
    lines = [line for line in out.getvalue().splitlines() if "critical-sidecar fast" in line]
    assert len(lines) == 1
    assert "proxy OOMKilled" in lines[0]


def test_the_takeaways_give_the_model_with_the_restart_cost_within_100_columns() -> None:
    metrics = [
        dataclasses.replace(m, scenario=f"{m.scenario}-long-name", restarts=3)
        for m in scenario_metrics()
    ]
    table = scenario_takeaways(metrics, 1.0)
    console = Console(record=True, width=100, height=40, file=io.StringIO())
    console.print(table)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "9.0 s (6.0 · 9.0)" in text  # transient on fast: 6.0 + 3 restarts x 1.0
    assert "not reached (1.0 · 4.0)" in text
    assert "1.00s per restart" in text  # the machine's cost, stated once


def test_a_headline_outside_the_kubelets_window_is_flagged_beside_its_window() -> None:
    table = scenario_takeaways(scenario_metrics(), 1.0)
    console = Console(record=True, width=200, height=40, file=io.StringIO())
    console.print(table)
    text = console.export_text()
    assert "84.1 s OUTSIDE its window (70.0 · window 70-80.5 · 73.0)" in text
    assert "OUTSIDE" not in text.replace("84.1 s OUTSIDE", "")
