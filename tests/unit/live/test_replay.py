"""Replaying a recorded demo: the recording as it stood at each moment, paced, then takeaways."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from rich.console import Console

from crashloop_harness.cli import app as cli
from crashloop_harness.cli.demo import SHIPPED_DEMO_DIR
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.live.keys import KeyAction
from crashloop_harness.live.replay import (
    AsOf,
    Recording,
    as_of,
    load_recording,
    replay,
    with_endings,
)
from crashloop_harness.live.view import next_restart_text, render, states_from
from crashloop_harness.outputs.summaryfile import write_summary
from crashloop_harness.recording.records import AttemptLog
from tests.unit.factories import (
    FAST,
    FAST_DELAYS,
    T0,
    attempts,
    fast_verdict,
    make_summary,
)


def _recorded(tmp_path: Path) -> Path:
    """A run directory as a demo leaves it: attempts.jsonl and summary.json."""
    summary = make_summary(fast_verdict())
    write_summary(tmp_path, summary)
    with AttemptLog(tmp_path) as log:
        for record in attempts(FAST_DELAYS):
            log.append(dataclasses.replace(record, worker="fast", pod="crash-fast"))
        # A restart-cost probe on the same worker: never on its panel.
        for record in attempts([0.5]):
            log.append(
                dataclasses.replace(record, worker="fast", pod="probe-fast-0", pod_uid="probe")
            )
    return tmp_path


def test_a_recording_has_its_workers_attempts_and_curves(tmp_path: Path) -> None:
    recording = load_recording(_recorded(tmp_path))
    assert len(recording.attempts["fast"]) == len(FAST_DELAYS) + 1
    assert {r.pod for r in recording.attempts["fast"]} == {"crash-fast"}
    assert recording.curves["fast"].delays(4) == FAST.delays(4)
    assert recording.start_ns == T0
    assert recording.duration_s > 0


def test_a_directory_that_is_not_a_run_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match=r"holds no attempts\.jsonl"):
        load_recording(tmp_path)


def test_as_of_shows_only_what_had_happened_and_no_exit_yet_to_come(tmp_path: Path) -> None:
    recording = load_recording(_recorded(tmp_path))
    first, second = recording.attempts["fast"][:2]
    assert first.finished_at_ns is not None
    during_first = as_of(
        recording, first.started_at_ns + (first.finished_at_ns - first.started_at_ns) // 2
    )
    (only,) = during_first.attempts["fast"]
    assert only.finished_at_ns is None  # still running then
    before_second = as_of(recording, second.started_at_ns - 1)
    assert [r.attempt for r in before_second.attempts["fast"]] == [0]
    assert as_of(recording, T0 - 1).attempts == {}


def _run(
    recording: Recording, speed: float, stop_after: int | None = None
) -> tuple[list[float], bool]:
    frames: list[float] = []
    waited: list[float] = []

    def show(_seen: AsOf, _now_ns: int, elapsed_s: float) -> None:
        frames.append(elapsed_s)

    def wait(seconds: float) -> KeyAction | None:
        waited.append(seconds)
        return "quit" if stop_after is not None and len(waited) >= stop_after else None

    return frames, replay(recording, speed=speed, show=show, wait=wait, frame_s=0.25)


def test_ten_times_faster_takes_a_tenth_of_the_frames_and_ends_on_the_last_moment(
    tmp_path: Path,
) -> None:
    recording = dataclasses.replace(load_recording(_recorded(tmp_path)), duration_s=30.0)
    slow, slow_done = _run(recording, 1.0)
    fast, fast_done = _run(recording, 10.0)
    assert slow_done
    assert fast_done
    assert slow[-1] == fast[-1] == 30.0
    # Frames are paced in real time: a tenth of the length needs a tenth of the frames.
    assert len(slow) - 1 == 10 * (len(fast) - 1)


def test_a_stopped_replay_says_so(tmp_path: Path) -> None:
    recording = load_recording(_recorded(tmp_path))
    frames, done = _run(recording, 1.0, stop_after=3)
    assert not done
    assert len(frames) == 3


def test_a_speed_that_is_not_positive_is_refused(tmp_path: Path) -> None:
    recording = load_recording(_recorded(tmp_path))
    with pytest.raises(HarnessError, match="not positive"):
        replay(recording, speed=0, show=lambda *_: None, wait=lambda _s: None)


def test_a_worker_with_no_later_attempt_is_never_shown_due_after_its_last(tmp_path: Path) -> None:
    # The recording stops after the fifth attempt (a check that decided the worker early):
    # every frame after that attempt's back-off is over says the worker ended, never "due now".
    recording = load_recording(_recorded(tmp_path))
    cut = dataclasses.replace(recording, attempts={"fast": recording.attempts["fast"][:5]})
    last = cut.attempts["fast"][-1]
    assert last.finished_at_ns is not None
    phases = []
    for after_s in (0.5, 3.0, 30.0, 150.0):
        now_ns = last.finished_at_ns + int(after_s * 1e9)
        seen = as_of(cut, now_ns)
        states = states_from(seen, cut.curves, now_ns, start_ns=cut.start_ns)
        (state,) = with_endings(states, seen, cut)
        phases.append((state.state, next_restart_text(state)))
    assert phases[0] == ("waiting", "in 1.5s")
    assert all(phase == "ended" for phase, _ in phases[1:])
    assert all(text == "none: passed" for _, text in phases[1:])
    assert not any(text == "due now" for _, text in phases)


def test_a_worker_whose_next_attempt_is_recorded_is_due_as_live(tmp_path: Path) -> None:
    recording = load_recording(_recorded(tmp_path))
    second = recording.attempts["fast"][1]
    first = recording.attempts["fast"][0]
    assert first.finished_at_ns is not None
    # Past the first back-off, before the second start: live it is due, and so it is here.
    now_ns = second.started_at_ns - 1
    seen = as_of(recording, now_ns)
    states = states_from(seen, recording.curves, now_ns, start_ns=recording.start_ns)
    (state,) = with_endings(states, seen, recording)
    assert state.state in ("crashed", "waiting")


def test_the_shipped_recording_plays_with_no_cluster_and_no_engine(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    assert cli.main(["demo", "--replay", "--speed", "100", "--plain"]) == 0
    out = capsys.readouterr().out
    assert "-check-demo-" in out
    recording = load_recording(SHIPPED_DEMO_DIR)
    assert set(recording.attempts) == {"fast", "reduced", "default"}
    assert "-check-demo-" in recording.summary.run_id
    assert recording.summary.cluster.kubernetes_version == "v1.35.8"


def test_the_keys_act_during_a_replay_as_live(tmp_path: Path) -> None:
    """p holds the clock until pressed again, s jumps to the end (the takeaways), q stops."""
    recording = dataclasses.replace(load_recording(_recorded(tmp_path)), duration_s=30.0)
    pressed: list[KeyAction | None] = [None, "pause", None, None, "pause", None, "skip"]
    frames: list[float] = []

    def wait(_seconds: float) -> KeyAction | None:
        return pressed.pop(0) if pressed else None

    done = replay(
        recording,
        speed=1.0,
        show=lambda _seen, _now, elapsed: frames.append(elapsed),
        wait=wait,
        frame_s=1.0,
    )
    assert done
    # Paused after the second frame, for three frames; resumed; skipped to the end.
    assert frames == [0.0, 1.0, 1.0, 1.0, 1.0, 2.0, 3.0, 30.0]
    quit_at_once = replay(
        recording, speed=1.0, show=lambda *_: None, wait=lambda _s: "quit", frame_s=1.0
    )
    assert not quit_at_once


def test_a_piped_replay_fits_100_columns_reads_its_table_s_windows_and_ends_with_a_verdict(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    assert cli.main(["demo", "--replay", "--speed", "100", "--plain"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 100
    assert "verdict: passed" in lines
    assert any(line.startswith("next: `make demo`") for line in lines)
    # Each restart a line names (its worker's count, then its window) against the closing
    # table's window for the same restart: the same text.
    shown: dict[tuple[str, int], str] = {}
    for line in lines:
        found = re.match(r"\[ *[\d.]+s\] (\w+): (\d+) restarts, .*\(window (\S+)\)$", line)
        if found:
            shown[(found[1], int(found[2]))] = found[3]
    tabled: dict[tuple[str, int], str] = {}
    worker = ""
    for line in lines:
        if re.match(r"(fast|reduced|default): \d+ restarts, ", line):
            worker = line.split(":")[0]
        elif re.match(r" +window +\d", line) and worker:
            for n, window in enumerate(line.split()[1:], start=1):
                tabled[(worker, n)] = window
    both = shown.keys() & tabled.keys()
    assert len(both) >= 3
    assert {key: shown[key] for key in both} == {key: tabled[key] for key in both}


@pytest.mark.parametrize("width", [80, 100])
def test_the_shipped_replay_s_panels_are_never_cut(width: int) -> None:
    recording = load_recording(SHIPPED_DEMO_DIR)
    for share in (0.1, 0.3, 0.6, 1.0):
        elapsed_s = recording.duration_s * share
        now_ns = recording.start_ns + int(elapsed_s * 1e9)
        seen = as_of(recording, now_ns)
        states = states_from(
            seen, recording.curves, now_ns, start_ns=recording.start_ns, judged=recording.judged
        )
        console = Console(record=True, width=width, force_terminal=True)
        shown = with_endings(states, seen, recording)
        console.print(render(shown, elapsed_s, recording.duration_s))
        text = console.export_text()
        assert "…" not in text, f"a panel was cut at {width} columns, {share:.0%} in"
        assert max(len(line) for line in text.splitlines()) <= width
