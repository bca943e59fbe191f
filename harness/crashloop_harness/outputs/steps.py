"""Progress a reader sees whether or not the output is a terminal: a line as each step starts,
and a line a minute while one step runs long.

Piped (`make demo | tee demo.log`, a CI log, ssh without a terminal), a spinner
renders nothing until it stops, and a node image built from nothing is
seventeen silent minutes. Here every step is a plain line when it starts, its
time since the command began in front; a step that took ``DONE_FROM_S`` or more
says so when the next begins (or the command ends), with how long it took; and
while no new step has started for ``every_s``, a line says which step is still
running and for how long.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from types import TracebackType
from typing import Final

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn

from crashloop_harness.core import timeouts
from crashloop_harness.model.durations import format_duration

# A presenter or a CI log reader should never wait longer than this for a sign of life.
HEARTBEAT_S: Final = 60.0
# How often the ticker looks; a period, not a wait on anything.
_LOOK_S: Final = 1.0
# A step this long gets a line of its own when it ends; shorter ones (a message
# between steps, a cached build) are told by the next step's start alone.
DONE_FROM_S: Final = 1.0


class StepLines:
    """``__call__(message)`` starts a step; used as a context, a ticker says "still ..." each
    ``every_s`` of one step. ``say`` prints one line; ``clock`` is monotonic seconds;
    ``stamp=False`` for a ``say`` that puts its own time in front; ``ends`` where every
    message is a set-up step (not a run's news), so each long one's end is a line too."""

    def __init__(
        self,
        say: Callable[[str], None],
        *,
        every_s: float = HEARTBEAT_S,
        clock: Callable[[], float] = time.monotonic,
        stamp: bool = True,
        ends: bool = False,
    ) -> None:
        self._say = say
        self._stamp = stamp
        self._ends = ends
        self._every_s = every_s
        self._clock = clock
        self._lock = threading.Lock()
        self._began = clock()
        self._step: str | None = None
        self._step_since = self._began
        self._last_line = self._began
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __call__(self, message: str) -> None:
        with self._lock:
            now = self._clock()
            self._say_done(now)
            self._step, self._step_since, self._last_line = message, now, now
            self._say(self._stamped(now, message))

    def end(self) -> None:
        """The last step is over: its line of how long it took, if it took long."""
        with self._lock:
            self._say_done(self._clock())
            self._step = None

    def _say_done(self, now: float) -> None:
        if not self._ends or self._step is None or now - self._step_since < DONE_FROM_S:
            return
        took = format_duration(timedelta(seconds=round(now - self._step_since, 1)))
        self._say(self._stamped(now, f"  done: {self._step} ({took})"))

    def tick(self) -> None:
        """One look: a line when the current step has been silent for ``every_s``."""
        with self._lock:
            now = self._clock()
            if self._step is None or now - self._last_line < self._every_s:
                return
            self._last_line = now
            running = format_duration(timedelta(seconds=round(now - self._step_since)))
            self._say(self._stamped(now, f"  ... still: {self._step} ({running} so far)"))

    def _stamped(self, now: float, text: str) -> str:
        return f"{now - self._began:7.1f}s {text}" if self._stamp else text

    def __enter__(self) -> StepLines:
        self._stop.clear()
        self._ticker = threading.Thread(target=self._run, name="step-lines", daemon=True)
        self._ticker.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=timeouts.TICKER_STOP)
        if kind is None:
            self.end()

    def _run(self) -> None:
        while not self._stop.wait(_LOOK_S):
            self.tick()


class SetupProgress:
    """One spinner line per set-up step, each with its elapsed time; piped (a log, CI, ssh
    without a terminal), where a spinner shows nothing until it stops, a plain line per step
    as it starts and a line a minute while one runs long."""

    def __init__(self, console: Console) -> None:
        self._lines: StepLines | None = None
        if not console.is_terminal:
            self._lines = StepLines(lambda line: console.print(line, highlight=False), ends=True)
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self._current: TaskID | None = None

    def __enter__(self) -> SetupProgress:
        if self._lines is not None:
            self._lines.__enter__()
        else:
            self._progress.start()
        return self

    def __exit__(self, *_: object) -> None:
        if self._lines is not None:
            self._lines.__exit__(None, None, None)
            return
        self._finish_current()
        self._progress.stop()

    def step(self, message: str) -> None:
        if self._lines is not None:
            self._lines(message)
            return
        self._finish_current()
        self._current = self._progress.add_task(message, total=1)

    def _finish_current(self) -> None:
        if self._current is not None:
            self._progress.update(self._current, completed=1)
            self._progress.stop_task(self._current)
