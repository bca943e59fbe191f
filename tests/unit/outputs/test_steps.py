"""Progress lines on a fake clock: a line per step, a line a minute while one runs long."""

from __future__ import annotations

import io

from rich.console import Console

from crashloop_harness.outputs.steps import SetupProgress, StepLines


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _steps(every_s: float = 60.0, *, ends: bool = False) -> tuple[StepLines, list[str], _Clock]:
    lines: list[str] = []
    clock = _Clock()
    return StepLines(lines.append, every_s=every_s, clock=clock, ends=ends), lines, clock


def test_each_step_is_a_line_as_it_starts_with_the_time_since_the_command_began() -> None:
    steps, lines, clock = _steps()
    steps("kind")
    clock.now += 12.5
    steps("node image")
    assert lines == ["    0.0s kind", "   12.5s node image"]


def test_set_up_steps_say_when_a_long_one_ended_and_how_long_it_took() -> None:
    steps, lines, clock = _steps(ends=True)
    with steps:
        steps("node image")
        steps("the official node image cannot be pulled here")  # a message: no end line
        steps("building kubernetes v1.35.8")
        clock.now += 317.4
        steps("assembling the node")
        clock.now += 0.5
        steps("creating cluster crashloop")
        clock.now += 25.0
    assert lines == [
        "    0.0s node image",
        "    0.0s the official node image cannot be pulled here",
        "    0.0s building kubernetes v1.35.8",
        "  317.4s   done: building kubernetes v1.35.8 (5m17.4s)",
        "  317.4s assembling the node",
        "  317.9s creating cluster crashloop",
        "  342.9s   done: creating cluster crashloop (25s)",
    ]


def test_a_run_s_news_has_no_end_lines() -> None:
    steps, lines, clock = _steps()
    steps("recording")
    clock.now += 30.0
    steps("fast: restart 3")
    steps.end()
    assert lines == ["    0.0s recording", "   30.0s fast: restart 3"]


def test_a_step_silent_for_a_minute_says_it_is_still_running_and_for_how_long() -> None:
    steps, lines, clock = _steps()
    steps("node image: building the kubelet")
    clock.now += 59.0
    steps.tick()
    assert len(lines) == 1
    clock.now += 1.0
    steps.tick()
    clock.now += 30.0
    steps.tick()
    clock.now += 30.0
    steps.tick()
    assert lines[1:] == [
        "   60.0s   ... still: node image: building the kubelet (1m so far)",
        "  120.0s   ... still: node image: building the kubelet (2m so far)",
    ]


def test_a_new_step_resets_the_minute() -> None:
    steps, lines, clock = _steps()
    steps("a")
    clock.now += 50.0
    steps("b")
    clock.now += 50.0
    steps.tick()
    assert lines == ["    0.0s a", "   50.0s b"]


def test_nothing_is_said_before_the_first_step() -> None:
    steps, lines, clock = _steps()
    clock.now += 600.0
    steps.tick()
    assert lines == []


def test_piped_set_up_steps_are_lines_as_they_start_not_a_spinner_drawn_at_the_end() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=120)
    with SetupProgress(console) as setup:
        setup.step("engine")
        assert "engine" in out.getvalue()  # before the set-up ends, not at its end
        setup.step("cluster crashloop ready")
    lines = out.getvalue().splitlines()
    assert [line.split("s ", 1)[1] for line in lines] == ["engine", "cluster crashloop ready"]
