"""`make demo`: the talk's demo, live in the terminal, ending with plots and a report.

Set-up first (engine, kind, node image, cluster), each step with a spinner and
its elapsed time; then the bare crashing container and the scenarios on all
three workers at once for a fixed window, shown live; then the takeaways
table, the plots and a self-contained report in the run directory.
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Generic, TypeVar, cast

from rich.console import Console

from crashloop_harness.cluster import lifecycle
from crashloop_harness.cluster.profiles import ClusterSpec
from crashloop_harness.core import timeouts
from crashloop_harness.core.exitcodes import INTERRUPTED
from crashloop_harness.live.keys import HELP, KeyAction, keys_while_live
from crashloop_harness.live.replay import AsOf, load_recording, replay, with_endings
from crashloop_harness.live.scenarioview import PodMap, ScenarioCell, scenario_cells
from crashloop_harness.live.takeaways import (
    next_step,
    scenario_takeaways,
    takeaways,
    verdict_line,
)
from crashloop_harness.live.view import LiveView, Theme, states_from
from crashloop_harness.outputs.report import write_report
from crashloop_harness.outputs.steps import SetupProgress
from crashloop_harness.outputs.summary import machine_restart_cost
from crashloop_harness.pods.skeleton import pod_names
from crashloop_harness.recording.hostcpu import (
    HOST_CPU_FILE,
    SATURATED,
    CpuSample,
    busy_between,
    cores,
    read_cpu_times,
    read_samples,
    restarts_under_load,
    write_samples,
)
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.runs.check import CheckResult, run_check
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES, CheckProfile
from crashloop_harness.runs.scenarios import ScenarioRun, run_scenarios
from crashloop_harness.scenarios import REGISTRY, TALK_SCENARIOS
from crashloop_harness.scenarios.headline import headline_metrics

# The default window, announced before anything starts; the issue caps it at 6 minutes.
DEFAULT_DURATION_S: Final = 300.0
MAX_DURATION_S: Final = 360.0
_REFRESH_S: Final = 0.25
T = TypeVar("T")
# A host this busy delays every start: what is late then is not the kubelet's doing.


@dataclass(frozen=True)
class DemoOptions:
    spec: ClusterSpec
    duration_s: float = DEFAULT_DURATION_S
    scenarios: tuple[str, ...] = TALK_SCENARIOS
    keep_cluster: bool = True
    plain: bool = False
    image: str | None = None
    # Set up, say "ready", and start the live window only when Enter is pressed.
    wait_for_enter: bool = False
    theme: Theme = "dark"


def run_demo(options: DemoOptions, console: Console) -> int:
    duration = min(options.duration_s, MAX_DURATION_S)
    console.rule("crashloop-harness demo: A Tale of Two KEPs")
    console.print(
        f"Three workers, three kubelet backoff configs. The run takes {duration / 60:.1f} minutes "
        "after set-up (set-up: seconds when cached, about 20 minutes on a fresh machine). "
        "Ctrl-C stops it cleanly and keeps every result."
    )
    with SetupProgress(console) as setup:
        up = lifecycle.up(options.spec, setup.step, image=options.image)
        setup.step(f"cluster {up.name} ready")
    # For kubectl in a second pane: the cluster's own kubeconfig, never ~/.kube/config.
    console.print(f"export KUBECONFIG={up.kubeconfig}", soft_wrap=True, highlight=False)
    if options.wait_for_enter:
        wait_for_enter(console)

    profile = CheckProfile("demo", duration, CHECK_PROFILES["quick"].rule, fixed_window=True)
    stop = threading.Event()
    latest_check: Latest[CheckResult] = Latest()
    latest_scenarios: Latest[Sequence[AttemptRecord]] = Latest()
    check = in_thread(
        "demo-check",
        lambda: run_check(up, profile, _quiet, on_sample=latest_check.put, stop=stop),
    )
    # The window is over when the check is: the scenarios end with it (cut short, and
    # said so), so the live view never runs past the duration it announced.
    check.add_done_callback(lambda _done: stop.set())
    running: list[Future[Any]] = [check]
    scenario_future: Future[ScenarioRun] | None = None
    if options.scenarios:
        scenario_future = in_thread(
            "demo-scenarios",
            lambda: run_scenarios(
                up, _quiet, options.scenarios, stop=stop, on_sample=latest_scenarios.put
            ),
        )
        running.append(scenario_future)
    pods = scenario_pods(options.scenarios, [worker.name for worker in options.spec.workers])
    interrupted = _watch_live(
        running,
        latest_check,
        duration=duration,
        options=options,
        console=console,
        stop=stop,
        scenarios=lambda now_ns: scenario_cells(latest_scenarios.get() or (), pods, now_ns),
    )

    if not check.done() or check.exception() is not None:
        console.print("[red]the observation did not finish; partial records are in runs/[/red]")
        if check.done() and not interrupted:
            # A bug or a broken environment, not a verdict: raised with its traceback.
            raise cast(BaseException, check.exception())
        return INTERRUPTED if interrupted else 1
    result = check.result()
    scenario_run = _finished(scenario_future, console)
    if scenario_run is not None and scenario_run.status == "interrupted" and not interrupted:
        console.print(
            "scenarios cut short with the live window: what they measured by then is below; "
            "a longer --duration lets them finish"
        )
    _show_results(result, scenario_run, console)
    if not options.keep_cluster:
        lifecycle.delete(up.name, console.print)
    if interrupted:
        return INTERRUPTED
    # The exit code is the verdict, as for every measured command.
    return 0 if result.passed else 1


def scenario_pods(scenarios: Sequence[str], workers: Sequence[str]) -> PodMap:
    """Every scenario pod's name -> (scenario, worker), as the scenarios name their pods."""
    pods: dict[str, tuple[str, str]] = {}
    for name in scenarios:
        for worker in workers:
            for manifest in REGISTRY[name].manifests(worker, "-", "-"):
                for pod in pod_names(manifest):
                    pods[pod] = (name, worker)
    return pods


def wait_for_enter(console: Console) -> None:
    """Hold at "ready" until Enter (or the end of a piped input); Ctrl-C leaves as always."""
    console.print("[bold]ready.[/bold] Press Enter to start the live window.")
    sys.stdin.readline()


def _watch_live(
    running: Sequence[Future[Any]],
    latest: Latest[CheckResult],
    *,
    duration: float,
    options: DemoOptions,
    console: Console,
    stop: threading.Event,
    scenarios: Callable[[int], Sequence[ScenarioCell]] = lambda _now_ns: (),
) -> bool:
    """The live view until the observations end; True when Ctrl-C stopped them."""
    started = time.monotonic()
    view_console = Console(force_terminal=False) if options.plain else console
    paused = False
    cpu = CpuWatch()
    try:
        with (
            keys_while_live() as keys,
            LiveView(duration, console=view_console, theme=options.theme) as view,
        ):
            if keys.enabled:
                console.print(HELP, style="dim")
            while not all(future.done() for future in running):
                action = keys.poll()
                if action == "quit":
                    raise KeyboardInterrupt("q")
                if action == "skip":
                    # The window ends now; what was measured is judged as at its end.
                    stop.set()
                if action == "pause":
                    paused = not paused
                current = latest.get()
                if current is not None and not paused:
                    now_ns = time.time_ns()
                    view.update(
                        states_from(current, current.curves, now_ns),
                        time.monotonic() - started,
                        scenarios(now_ns),
                        cpu.sample(),
                    )
                # Redraw at the view's pace until the observations end.
                wait(running, timeout=_REFRESH_S, return_when=FIRST_COMPLETED)
    except KeyboardInterrupt:
        # Stop first: after SIGHUP the terminal is gone and printing may fail, yet the
        # namespaces and their crash-looping pods must still be cleaned up.
        stop.set()
        with contextlib.suppress(OSError):
            console.print("[yellow]stopping: judging what was measured, cleaning up...[/yellow]")
        wait(running, timeout=timeouts.NAMESPACE_GONE + timeouts.API_REQUEST)
        return True
    finally:
        if cpu.samples:
            current = latest.get()
            if current is not None:
                write_samples(current.run_dir / HOST_CPU_FILE, cpu.samples)
            with contextlib.suppress(OSError):
                console.print(cpu.summary())
    return False


class Latest(Generic[T]):
    """The newest sample an observing thread handed over, for the view to draw."""

    def __init__(self) -> None:
        self._value: T | None = None
        self._lock = threading.Lock()

    def put(self, value: T) -> None:
        with self._lock:
            self._value = value

    def get(self) -> T | None:
        with self._lock:
            return self._value


def in_thread(name: str, work: Callable[[], T]) -> Future[T]:
    """``work`` on a daemon thread of its own, its result (or exception) handed back as a future.

    Daemon: a demo ended by a second Ctrl-C or a lost terminal must not hang on a
    thread that is still cleaning up its namespace.
    """
    future: Future[T] = Future()
    future.set_running_or_notify_cancel()

    def body() -> None:
        try:
            future.set_result(work())
        except BaseException as error:  # handed to the waiter, which decides
            future.set_exception(error)

    threading.Thread(target=body, name=name, daemon=True).start()
    return future


def _finished(future: Future[ScenarioRun] | None, console: Console) -> ScenarioRun | None:
    """The scenarios' run if it ended; one that raised is shown with its traceback, and the
    check's results still follow (what was measured is never lost)."""
    if future is None or not future.done():
        return None
    error = future.exception()
    if error is not None:
        console.print("[red]the scenarios ended in an error of the harness:[/red]")
        console.print("".join(traceback.format_exception(error)), highlight=False)
        return None
    return future.result()


class CpuWatch:
    """The host's busy share, sampled at most once a second while the demo is live."""

    def __init__(self) -> None:
        self._last = read_cpu_times()
        self._at = time.monotonic()
        self.samples: list[CpuSample] = []
        self.latest: float | None = None

    def sample(self) -> float | None:
        if self._last is None or time.monotonic() - self._at < 1.0:
            return self.latest
        now = read_cpu_times()
        if now is not None:
            busy = busy_between(self._last, now)
            if busy is not None:
                self.samples.append(CpuSample(time.time_ns(), busy))
                self.latest = busy
            self._last, self._at = now, time.monotonic()
        return self.latest

    def summary(self) -> str:
        ordered = sorted(sample.busy for sample in self.samples)
        saturated = sum(busy >= SATURATED for busy in ordered) / len(ordered)
        return (
            f"host CPU during the window ({cores()} cores): median "
            f"{statistics.median(ordered):.0%}, max {ordered[-1]:.0%}, at {SATURATED:.0%} or "
            f"more {saturated:.0%} of the time: restarts late then are the machine's lateness"
        )


def _show_results(result: CheckResult, scenario_run: ScenarioRun | None, console: Console) -> None:
    """The takeaways, the report and where everything was written."""
    summary = result.written_summary()
    samples = read_samples(result.run_dir / HOST_CPU_FILE)
    console.print(takeaways(summary, restarts_under_load(samples, result.attempts)))
    metrics = headline_metrics(scenario_run.results) if scenario_run is not None else []
    if metrics:
        console.print(scenario_takeaways(metrics, machine_restart_cost(summary)))
    report = write_report(result.run_dir, summary, result.attempts, metrics, samples)
    console.print(f"report: {report}")
    console.print(f"results: {result.run_dir}")
    if scenario_run is not None:
        console.print(f"scenario records: {scenario_run.run_dir}")
    console.print(verdict_line(summary))
    console.print(next_step(str(result.run_dir), replayed=False), highlight=False)


def _quiet(_message: str) -> None:
    """The live view shows progress; the check's own messages would tear it."""


def run_replay(run_dir: Path, *, speed: float, console: Console, plain: bool, theme: Theme) -> int:
    """A recorded demo, through the same live view, then the same takeaways; no cluster."""
    recording = load_recording(run_dir)
    console.rule(f"crashloop-harness demo (replay of {recording.summary.run_id}, {speed:g}x)")
    frame = threading.Event()  # never set: its wait paces the frames
    view_console = Console(force_terminal=False) if plain else console
    finished = False
    with (
        keys_while_live() as keys,
        LiveView(recording.duration_s, console=view_console, theme=theme) as view,
    ):
        if keys.enabled:
            console.print(HELP, style="dim")

        def show(seen: AsOf, now_ns: int, elapsed_s: float) -> None:
            states = states_from(
                seen,
                recording.curves,
                now_ns,
                start_ns=recording.start_ns,
                judged=recording.judged,
            )
            view.update(with_endings(states, seen, recording), elapsed_s)

        def wait_frame(seconds: float) -> KeyAction | None:
            frame.wait(seconds)
            return keys.poll()

        # Ctrl-C stops the replay as q does: the takeaways still follow.
        with contextlib.suppress(KeyboardInterrupt):
            finished = replay(recording, speed=speed, show=show, wait=wait_frame)
        if not finished:
            console.print("[yellow]replay stopped[/yellow]")
    samples = read_samples(run_dir / HOST_CPU_FILE)
    console.print(takeaways(recording.summary, restarts_under_load(samples, recording.attempts)))
    report = run_dir / "report.html"
    if report.is_file():
        console.print(f"report: {report}")
    console.print(verdict_line(recording.summary))
    console.print(next_step(str(run_dir), replayed=True), highlight=False)
    return 0 if finished else INTERRUPTED
