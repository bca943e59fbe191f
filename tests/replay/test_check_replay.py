"""Recorded checks from real clusters, replayed through the real recorder, loop and verdict.

Each trace under tests/data/traces/ is a real run (its README says which);
the replay must reach the verdict the live run reached, for the same reason,
and a changed expectation or a hidden input must change it the way the
verdict's rules say. See tests/replay/driver.py for how a replay runs.
"""

from __future__ import annotations

import dataclasses
import re
import signal
import statistics
from datetime import timedelta
from pathlib import Path

import pytest

from crashloop_harness.cli.app import interrupt_on_hangup_and_terminate
from crashloop_harness.cluster.target import RunEnding
from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.model.releases import AT_EXPIRY
from crashloop_harness.model.subject import is_bare
from crashloop_harness.recording.trace import TraceEntry
from crashloop_harness.runs.check import CheckResult, coverage
from crashloop_harness.verdict import judge_worker
from crashloop_harness.verdict.evidence import cap_median_bound
from crashloop_harness.verdict.tolerances import MAX_JUDGEABLE_PACE, clock
from tests.replay.driver import (
    TRACE_ENDED,
    Changes,
    Trace,
    hide_backoff_messages,
    host_load,
    replay_check,
    rewrite_backoff_messages,
)
from tests.unit.factories import neighbour_curve

QUICK_135 = "v1.35.8-quick-check"
STOPPED_135 = "v1.35.8-kubelet-stopped"
EXISTING_135 = "v1.35.8-existing-quick-check"
FIRST_FIVE_135 = "v1.35.8-cap-median-first-five"
STOPPED_BUSY_135 = "v1.35.8-kubelet-stopped-busy-host"


@pytest.fixture(scope="module")
def quick() -> Trace:
    return Trace.load(QUICK_135)


def _assert_as_live(trace: Trace, result: CheckResult, status: str | None = None) -> None:
    """The same bytes give the same attempts, delays and confirmed levels as the live run.

    ``status``: the run's status today where a rule changed since the trace was kept.
    """
    assert result.status == (status or trace.outcome["status"]), result.reason
    live = {w["worker"]: w for w in trace.summary["workers"]}
    assert set(live) == set(result.verdicts)
    for subject, verdict in result.verdicts.items():
        assert verdict.passed == live[subject]["passed"], (subject, verdict.failures)
        assert len(result.attempts[subject]) == live[subject]["attempts_recorded"], subject
        assert verdict.reported_seen == live[subject]["reported_seen"], subject
        # summary.json keeps milliseconds.
        measured = [
            None if c.measured_s is None else round(c.measured_s, 3) for c in verdict.checks
        ]
        assert measured == live[subject]["measured_s"][: len(measured)], subject


def test_a_clean_quick_check_replays_to_its_live_verdict(quick: Trace, tmp_path: Path) -> None:
    result = replay_check(quick, tmp_path / "run")
    assert result.status == "passed", result.reason
    _assert_as_live(quick, result)


def test_a_late_median_over_the_first_five_at_the_cap_decides_nothing_early(
    tmp_path: Path,
) -> None:
    # The live check decided fast/runs-5s early on its first five restarts at the cap and
    # then passed it on all of them: an early decision must be one no later restart undoes.
    trace = Trace.load(FIRST_FIVE_135)
    result = replay_check(trace, tmp_path / "run")
    subject = "fast/runs-5s"
    curve = result.curves[subject]
    cap_s = curve.maximum.total_seconds()
    checks = result.verdicts[subject].checks
    at_cap = [c for c in checks if c.curve_n >= 2 and c.expected_s == cap_s]
    first_five = sorted(c.margin_s for c in at_cap[:5] if c.margin_s is not None)
    # Decided live against the bound then (1.2 s measured plus the share of five): 1.436 s.
    assert first_five[2] > 1.436, "the trace holds what decided it live"
    assert result.decided == {}, result.decided
    _assert_as_live(trace, result)


@pytest.mark.parametrize(
    ("worker", "told", "restart"),
    [
        # The kubelet on the neighbour's curve: fast told 3s, reduced told a
        # 30s max, default told a 40s max. Each is caught at the first restart
        # whose delay or reported level the neighbour curve does not allow.
        ("fast", neighbour_curve(3), "restart 2"),
        ("reduced", neighbour_curve(30, reduced=True), "restart 7"),
        ("default", neighbour_curve(40), "restart 5"),
    ],
)
def test_a_neighbour_curve_is_caught_at_its_first_wrong_restart(
    quick: Trace, tmp_path: Path, worker: str, told: BackoffCurve, restart: str
) -> None:
    result = replay_check(quick, tmp_path / "run", Changes(curves={worker: told}))
    assert result.status == "failed", result.reason
    verdict = result.verdicts[worker]
    assert not verdict.passed
    assert restart in verdict.messages[0], verdict.failures
    assert worker in result.decided, "caught before the window ended"
    others = [v for s, v in result.verdicts.items() if s != worker and is_bare(s)]
    assert all(v.passed for v in others), [v.failures for v in others]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_mid_check_keeps_its_attempts_and_claims_no_verdict(
    quick: Trace, tmp_path: Path, signum: int
) -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    # As the CLI's main installs them. SIGINT too: a process started in the background
    # inherits it ignored (an xdist worker of such a run among them), and it raised
    # KeyboardInterrupt here only when an earlier test in the process had called cli.main.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    interrupt_on_hangup_and_terminate()
    try:
        result = replay_check(quick, tmp_path / "run", Changes(signal_after_s=20, signal=signum))
    finally:
        for restored, handler in before.items():
            signal.signal(restored, handler)
    assert result.status == "interrupted"
    # What was measured in those 20 seconds is judged and kept, no pass or fail claimed.
    assert 5 < sum(len(a) for a in result.attempts.values()) < 40
    assert all(v.passed for v in result.verdicts.values())
    assert (tmp_path / "run" / "attempts.jsonl").stat().st_size > 0


def test_a_kubelet_restart_reported_at_the_end_makes_the_run_an_error(
    quick: Trace, tmp_path: Path
) -> None:
    ending = RunEnding(("the kubelet of node crashloop-worker restarted during the run",), {}, None)
    result = replay_check(quick, tmp_path / "run", Changes(ending=ending))
    assert result.status == "error"
    assert "restarted" in result.reason


def _as_clock_times(message: str) -> str:
    """A message of an older verdict with its epoch seconds ("1796402318.920s (Unix)", or
    "...335.420s;" after "due by" and "none by") written as clock times."""

    def clock_of(match: re.Match[str]) -> str:
        return clock(round(float(match[1]) * 1000) * 1_000_000)

    message = re.sub(r"(\d{10}\.\d{3})s \(Unix\)", clock_of, message)
    return re.sub(r"(?<=by )(\d{10}\.\d{3})s", clock_of, message)


def test_a_stopped_kubelet_is_overdue_on_its_node(tmp_path: Path) -> None:
    trace = Trace.load(STOPPED_135)
    result = replay_check(trace, tmp_path / "run")
    # Live, before a stopped kubelet made the run an error (as JUnit already
    # said of its worker), the run was recorded "failed".
    assert trace.outcome["status"] == "failed"
    assert result.status == "error"
    node = trace.context["nodes"]["default"]
    assert "overdue" in result.decided["default"][1]
    assert f"the kubelet of node {node} stopped" in result.reason
    # Decided on the same restart as live. Which of two true readings came
    # first (the restart too early, or the pending 1s level) depends on when
    # the loop looked between two inputs, which a replay does not repeat.
    live = trace.outcome["decided"]
    assert set(result.decided) == set(live) == {"fast", "default"}
    # The same restart and exit: live wrote them as epoch seconds, the verdict now as UTC clock
    # times. Its due instant is later by what its node's measured cost adds (live, before the
    # cost was measured, it was the reference host's 1.5 s).
    due = re.compile(r"due by [0-9:.]+ UTC; none by ([0-9:.]+) UTC, [0-9.]+s past")
    assert due.sub(r"due by -; none by \1", _as_clock_times(live["default"][1])) == due.sub(
        r"due by -; none by \1", result.decided["default"][1]
    )
    assert "UTC" in result.decided["default"][1]
    assert "(Unix)" not in result.decided["default"][1]
    assert live["fast"][1].startswith("fast: restart 2")
    assert result.decided["fast"][1].startswith("fast: restart 2")
    _assert_as_live(trace, result, status="error")


def test_a_hidden_level_leaves_only_the_delays_to_judge(quick: Trace, tmp_path: Path) -> None:
    pods = {pod for pod, subject in quick.context["pods"].items() if subject == "reduced"}

    def drop_nothing(entry: TraceEntry) -> bool:
        del entry
        return False

    result = replay_check(
        quick,
        tmp_path / "run",
        Changes(edit=hide_backoff_messages(pods), drop=drop_nothing),
    )
    # The reduced worker's levels from 5s on must be confirmed: hidden, they are not.
    assert not result.verdicts["reduced"].passed
    assert result.status == "failed"


def test_an_existing_cluster_check_replays_from_the_api_alone(tmp_path: Path) -> None:
    trace = Trace.load(EXISTING_135)
    assert trace.context["observer"] == "selfreport"
    result = replay_check(trace, tmp_path / "run")
    assert result.status == "passed", result.reason
    # Every attempt merged from the workload's own reports, as live.
    _assert_as_live(trace, result)


def test_late_restarts_on_a_saturated_host_are_the_machine_s_not_the_kubelet_s(
    quick: Trace, tmp_path: Path
) -> None:
    # Told a 0.5s curve (no kubelet takes it), the fast kubelet's 2s restarts are all late.
    half_second = timedelta(milliseconds=500)
    told = {"fast": BackoffCurve(initial=half_second, maximum=half_second)}
    # Its "back-off 2s" messages made to say 500ms: the delays alone fail it.
    quiet = rewrite_backoff_messages({"crash-fast"}, "500ms")
    idle = replay_check(quick, tmp_path / "idle", Changes(curves=told, edit=quiet))
    assert idle.status == "failed"
    assert "too late" in idle.decided["fast"][1]
    # The same restarts with every core busy throughout: the machine's lateness.
    busy = replay_check(
        quick,
        tmp_path / "busy",
        Changes(curves=told, edit=quiet, add=host_load(quick, busy=0.98)),
    )
    # Every late restart set aside, none judged: the check observes on for restarts in
    # their place, past the recording's end (live, a host busy to the end of the longer
    # window is an error: tests/unit/runs/test_check_status.py).
    assert (busy.status, busy.reason) == ("interrupted", TRACE_ENDED)
    fast = busy.verdicts["fast"]
    aside = [c for c in fast.checks if c.set_aside is not None]
    # No failure; only the machine's errors (a restart still overdue across a node
    # silence when the recording ended).
    assert aside
    assert not fast.problems
    assert all(e.code == "environment" for e in fast.errors), fast.errors
    assert all("the host was saturated (its CPUs 98% busy)" in (c.set_aside or "") for c in aside)
    # Busy below the threshold excuses nothing.
    half = replay_check(
        quick, tmp_path / "half", Changes(curves=told, edit=quiet, add=host_load(quick, busy=0.5))
    )
    assert half.status == "failed"


@pytest.mark.parametrize(
    ("name", "status", "says"),
    [
        # The kubelet restarted mid-run: its back-off state wiped, an error at once.
        ("v1.35.8-kubelet-restarted", "error", "restarted during the run"),
        # Every watch connection reset: the watch resumed, nothing lost.
        ("v1.35.8-watch-dropped", "passed", ""),
        # The API server paused: the runtime's events kept every attempt.
        ("v1.35.8-api-unreachable", "passed", ""),
    ],
)
def test_every_ending_replays_to_its_live_verdict(
    name: str, status: str, says: str, tmp_path: Path
) -> None:
    trace = Trace.load(name)
    result = replay_check(trace, tmp_path / "run")
    assert result.status == status, result.reason
    assert says in result.reason
    _assert_as_live(trace, result)


def test_a_kubelet_restart_ends_the_run_when_it_is_seen_not_at_the_window_s_end(
    tmp_path: Path,
) -> None:
    trace = Trace.load("v1.35.8-kubelet-restarted")
    result = replay_check(trace, tmp_path / "run")
    node = trace.context["nodes"]["fast"]
    assert f"the kubelet of node {node} restarted during the run" in result.reason
    # The node's pulse saw a new process (its pid named), and the run ended then,
    # long before its window: no verdict is claimed on a wiped curve.
    assert re.search(r"\(pid \d+ -> \d+\)", result.reason), result.reason
    assert result.status == "error"
    assert sum(len(a) for a in result.attempts.values()) < 40


def test_a_frozen_node_s_late_restart_is_set_aside_and_the_check_observes_on(
    tmp_path: Path,
) -> None:
    """The node paused 12 s: live, its late restart ended the run an error (no answer).
    Today it is set aside, not judged, and the check owes a restart in its place: it
    observes past the moment the live run ended, so the replay runs out of recording."""
    trace = Trace.load("v1.35.8-node-frozen")
    assert trace.outcome["status"] == "error"
    result = replay_check(trace, tmp_path / "run")
    assert (result.status, result.reason) == ("interrupted", TRACE_ENDED)
    fast = result.verdicts["fast"]
    late = [c for c in fast.checks if c.set_aside is not None]
    assert late, "the restart late across the freeze is set aside"
    assert all("node frozen" in (c.set_aside or "") for c in late)
    assert result.set_aside["fast"] == len(late)
    # Set aside is neither a failure nor an error: the rest of the worker is judged.
    assert not fast.problems
    assert not fast.errors
    assert all(c.passed for c in fast.checks)


def test_an_engine_stopped_mid_run_ends_it_an_error_naming_the_silent_nodes(
    tmp_path: Path,
) -> None:
    trace = Trace.load("v1.35.8-engine-stopped")
    result = replay_check(trace, tmp_path / "run")
    assert result.status == "error", result.reason
    assert "has not answered for 60s" in result.reason
    assert "is the Docker engine running?" in result.reason
    assert "the Docker engine stopped answering during the run" in result.reason
    _assert_as_live(trace, result)


def test_a_pod_deleted_by_someone_else_is_an_error_not_the_kubelet_s_failure(
    tmp_path: Path,
) -> None:
    trace = Trace.load("v1.35.8-pod-deleted")
    result = replay_check(trace, tmp_path / "run")
    assert result.status == "error", result.reason
    assert "pod crash-fast (worker fast) was deleted during the run" in result.reason
    assert "overdue" not in result.reason.split(";")[0]


def test_a_v1_34_check_replays_to_its_live_verdict(tmp_path: Path) -> None:
    trace = Trace.load("v1.34.11-quick-check")
    result = replay_check(trace, tmp_path / "run")
    assert result.status == "passed", result.reason
    _assert_as_live(trace, result)


def test_v1_34_restarts_judged_with_v1_35_s_requeue_are_too_late(tmp_path: Path) -> None:
    # The same kubelet configs, judged as if the pod worker requeued at the
    # back-off's expiry (v1.35) instead of retrying every 10-15 s (v1.34):
    # the release's semantics, not only its config, set each restart's bound.
    trace = Trace.load("v1.34.11-quick-check")
    curves = trace.curves()
    assert {c.requeue for c in curves.values()} == {"every-10-15s"}
    at_expiry = {s: dataclasses.replace(c, requeue=AT_EXPIRY) for s, c in curves.items()}
    result = replay_check(trace, tmp_path / "run", Changes(curves=at_expiry))
    assert result.status == "failed"
    # Each caught waiting past the v1.35 bound: overdue before it came, or too late.
    late = [m for _, m in result.decided.values() if "overdue" in m or "too late" in m]
    assert late, result.decided
    assert "fast" in result.decided


def test_a_stopped_runtime_ends_the_run_an_error_naming_the_node(tmp_path: Path) -> None:
    trace = Trace.load("v1.35.8-containerd-stopped")
    result = replay_check(trace, tmp_path / "run")
    node = trace.context["nodes"]["fast"]
    assert result.status == "error", result.reason
    assert f"the container runtime of node {node} stopped answering" in result.reason
    _assert_as_live(trace, result)


def test_a_fast_worker_whose_levels_are_hidden_fails_for_want_of_them_not_its_delays(
    quick: Trace, tmp_path: Path
) -> None:
    pods = {pod for pod, subject in quick.context["pods"].items() if subject == "fast"}
    result = replay_check(quick, tmp_path / "run", Changes(edit=hide_backoff_messages(pods)))
    fast = result.verdicts["fast"]
    assert result.status == "failed"
    # Below 5s no single restart needs its level; together most must show it.
    assert all(check.passed for check in fast.checks)
    (problem,) = [p.words for p in fast.problems]
    assert problem.startswith("levels unconfirmed: the kubelet's back-off level was seen before 0")
    # A sound kubelet's delays: the cap's median is not what failed it.
    assert not any("cap came" in p.words for p in fast.problems)
    assert result.verdicts["reduced"].passed


def test_a_curve_a_tick_short_fails_on_its_windows_and_its_median_is_within_the_tick(
    quick: Trace, tmp_path: Path
) -> None:
    # The fast kubelet's 2s restarts judged as a 1.3s kubelet's: a few pass the
    # 1.3s level's window (up to 3.45s); their median, 1.38s past the 1.3s cap, is
    # within what one sync tick lets a sound kubelet's reach, so the windows decide.
    told = {"fast": BackoffCurve(initial=timedelta(seconds=1.3), maximum=timedelta(seconds=1.3))}
    levels = rewrite_backoff_messages({"crash-fast"}, "1.3s")
    result = replay_check(quick, tmp_path / "run", Changes(curves=told, edit=levels))
    fast = result.verdicts["fast"]
    assert result.status == "failed"
    late = [check for check in fast.checks if not check.passed]
    assert 0 < len(late) < len(fast.checks) // 4, fast.failures
    assert not any("cap came" in p.words for p in fast.problems), fast.problems
    # Told the truth, the same restarts pass.
    assert replay_check(quick, tmp_path / "told-2s").verdicts["fast"].passed


NEIGHBOURS_135 = "v1.35.8-neighbour-caps"


def test_a_real_3s_kubelet_with_its_messages_hidden_fails_on_its_missing_levels(
    tmp_path: Path,
) -> None:
    """The fast worker's kubelet ran at 3s, told 2s; the watch made to miss every level."""
    trace = Trace.load(NEIGHBOURS_135)
    live = replay_check(trace, tmp_path / "as-live")
    assert live.status == "failed"
    assert "3s back-off" in live.decided["fast"][1]
    pods = {pod for pod, subject in trace.context["pods"].items() if subject == "fast"}
    result = replay_check(trace, tmp_path / "hidden", Changes(edit=hide_backoff_messages(pods)))
    fast = result.verdicts["fast"]
    assert result.status == "failed"
    assert "fast" in result.decided
    assert any(p.words.startswith("levels unconfirmed") for p in fast.problems), fast.problems
    # Its delays alone do not give it away: their median at the 2s cap sits within
    # the one sync tick a sound kubelet's may add (bound sync_tick).
    cap_s = result.curves["fast"].maximum.total_seconds()
    margins = [c.margin_s for c in fast.checks if c.expected_s == cap_s and c.curve_n >= 2]
    median = statistics.median(m for m in margins if m is not None)
    assert 1.0 < median < cap_median_bound(result.curves["fast"], len(margins)), median
    assert not any("cap came" in p.words for p in fast.problems)


def test_an_existing_cluster_s_paused_node_is_an_error_read_from_its_lease(
    tmp_path: Path,
) -> None:
    trace = Trace.load("v1.35.8-existing-node-paused")
    assert trace.outcome["status"] == "error"
    result = replay_check(trace, tmp_path / "as-live")
    # The restart overdue across the pause decides nothing while the check observes
    # on (it is set aside when it comes); the recording ends first, and the restart
    # still overdue across the pause the Lease showed is the machine's error.
    assert (result.status, result.reason) == ("interrupted", TRACE_ENDED)
    errors = [e.words for v in result.verdicts.values() for e in v.errors]
    assert any("overdue, but node frozen 25.599s" in words for words in errors), errors
    assert not any(v.problems for v in result.verdicts.values())
    # Without the Lease's renewals the same silence reads as the kubelet's failure.
    blind = replay_check(
        trace, tmp_path / "blind", Changes(drop=lambda entry: entry.kind == "lease")
    )
    assert blind.status == "failed", blind.reason
    assert "overdue" in blind.reason


FIRST_RESTART_135 = "v1.35.8-first-restart-backoff"


def test_a_first_restart_that_waits_is_caught_on_fast_and_reduced_by_the_level_it_posts(
    tmp_path: Path,
) -> None:
    """The kept mutant on a real kubelet: restart 1 waited 3.2 s on fast and 2.1 s on reduced,
    both inside the flat 5 s bound restart 1 had before each node's cost was measured. Now fast's
    is over its node's measured bound as well (2.5 s at its slowdown of 1); reduced's 2.1 s is
    still inside it, and the back-off level the kubelet posted before it gives it away."""
    trace = Trace.load(FIRST_RESTART_135)
    result = replay_check(trace, tmp_path / "as-live")
    _assert_as_live(trace, result)
    for worker, over_bound in (("fast", True), ("reduced", False)):
        first = result.verdicts[worker].checks[0]
        assert first.n == 1
        assert first.measured_s is not None
        assert first.upper_bound_s < 5.0, "bounded by the node's measure, not the flat 5 s"
        assert (first.measured_s > first.upper_bound_s) is over_bound, first.reason
        assert not first.passed
        assert "but restart 1 of the curve does not wait" in first.reason
        assert result.decided[worker][1].startswith(f"{worker}: restart 1:")
    assert result.verdicts["default"].passed


def test_a_first_restart_that_waits_with_its_levels_hidden_fails_on_the_shifted_curve(
    tmp_path: Path,
) -> None:
    """Without the kubelet's messages, reduced's later levels give the shifted curve away on
    delays alone; fast's curve is unchanged after restart 1, so it fails for want of its
    levels (never a pass without them)."""
    trace = Trace.load(FIRST_RESTART_135)
    pods = {pod for pod, subject in trace.context["pods"].items() if subject in ("fast", "reduced")}
    result = replay_check(trace, tmp_path / "hidden", Changes(edit=hide_backoff_messages(pods)))
    assert result.status == "failed"
    reduced = result.verdicts["reduced"]
    assert not reduced.passed
    late = [c for c in reduced.checks if not c.passed and "too late" in c.reason]
    assert late, reduced.failures
    # Decided on its delays: restart 3 came after 4.6 s, just over the 2 s level's 4.5 s bound
    # on the reference host, inside the 4.6 s its node's measured cost gives; restart 4 (the
    # shifted curve's 4 s wait, not the 2 s of the curve told) is then overdue.
    decision = result.decided["reduced"][1]
    assert decision.startswith("reduced: restart 4 overdue"), decision
    assert not any("the kubelet reported a" in failure for failure in reduced.messages)
    fast = result.verdicts["fast"]
    assert not fast.passed
    assert any("levels unconfirmed" in problem.words for problem in fast.problems), fast.failures
    assert result.verdicts["default"].passed


LONG_ATTEMPT_135 = "v1.35.8-existing-long-attempt"


def test_an_attempt_still_running_is_not_read_as_an_overdue_restart_from_the_api_alone(
    tmp_path: Path,
) -> None:
    """Through a kubeconfig alone an attempt is recorded when it exits: a 5 s attempt running
    at the end of the run must not make its restart look overdue (it did, live, by 36 ms)."""
    trace = Trace.load(LONG_ATTEMPT_135)
    assert trace.outcome["status"] == "failed"
    result = replay_check(trace, tmp_path / "now")
    assert result.status == "passed", result.reason
    assert all(verdict.passed for verdict in result.verdicts.values())


SLOW_NODE_135 = "v1.35.8-slow-node"


def test_a_sound_kubelet_on_a_starved_node_is_named_too_slow_never_failed(
    tmp_path: Path,
) -> None:
    """The fast worker's node at 0.15 of a core: its restarts with no back-off (the subjects'
    restart 1 and 8 probes) took 5x the reference host's. The verdict names the node too slow
    to judge; the same restarts at the reference host's constant bounds fail the kubelet."""
    trace = Trace.load(SLOW_NODE_135)
    result = replay_check(trace, tmp_path / "run")
    # Live, the run was an error too (its slowdown then read from the runtime alone).
    assert trace.outcome["status"] == "error"
    node = trace.context["nodes"]["fast"]
    cost = result.costs[node]
    # The 2 subjects' restart 1 and the probes' that restarted before the run ended (8 started).
    assert len(cost.first_restarts_s) >= 9
    assert cost.too_slow, cost.describe()
    assert result.status == "error"
    for subject in ("fast", "fast/runs-5s"):
        verdict = result.verdicts[subject]
        assert verdict.in_error, verdict.failures
        assert any(f"node {node} too slow to judge back-off 2s" in e.words for e in verdict.errors)
    # The other nodes, unthrottled, were judged at their own (reference-like) cost and passed.
    for subject in ("reduced", "default"):
        assert result.verdicts[subject].passed, result.verdicts[subject].failures
        assert not result.costs[trace.context["nodes"][subject]].too_slow
    # Before the cost was measured: the same fast restarts, judged at the reference host's
    # bounds, were the kubelet's failure.
    before = judge_worker(result.attempts["fast"], result.curves["fast"], worker="fast")
    assert not before.passed
    assert not before.in_error
    assert any("too late" in failure for failure in before.messages), before.failures


def test_a_restart_after_the_level_watch_stopped_is_judged_without_its_level(
    tmp_path: Path,
) -> None:
    """A demo's last restart on the reduced worker (its 1m level) was created after the pod
    watch stopped; the run's last listing found it. Live, its unseen level ended the run."""
    trace = Trace.load("v1.35.8-demo-last-level")
    assert trace.outcome["status"] == "error"
    assert "reduced: restart 10" in trace.outcome["reason"]
    result = replay_check(trace, tmp_path / "run")
    assert result.status == "passed", result.reason
    reduced = result.verdicts["reduced"]
    last = result.attempts["reduced"][-1]
    assert last.attempt == 10
    assert last.created_at_ns is not None
    assert last.created_at_ns > result.levels_until_ns["reduced"]
    assert reduced.checks[-1].reported_s is None
    assert reduced.checks[-1].passed
    assert reduced.checks[-1].reason.endswith("its level not read: made after the watch stopped")


def test_a_stopped_kubelet_is_caught_on_a_busy_host_whose_nodes_kept_their_pace(
    tmp_path: Path,
) -> None:
    """The host's CPUs read 100% busy through the whole drill (four hashers on two cores);
    every node's pace probes read 1.0x through it. A busy host the nodes did not feel
    excuses nothing: the stopped kubelet's overdue restart is its failure, decided while
    the check observes, not an error when its pod is evicted minutes later."""
    trace = Trace.load(STOPPED_BUSY_135)
    assert trace.outcome["status"] == "error"  # live: excused as the host's lateness
    result = replay_check(trace, tmp_path / "run")
    assert "default" in result.decided, result.reason
    decided_at, words = result.decided["default"]
    assert "restart 2 overdue" in words
    assert "saturated" not in words
    # Decided within a minute of the pods' creation, as on a quiet host; live, the pod was
    # deleted after six.
    assert decided_at < 60.0
    assert not result.verdicts["default"].in_error, result.verdicts["default"].failures


BURST_SET_ASIDE_135 = "v1.35.8-existing-startup-burst-set-aside"


def test_restarts_late_across_another_team_s_start_up_burst_are_set_aside_and_owed(
    tmp_path: Path,
) -> None:
    """Forty-five pods of another namespace started as an existing-cluster check's did: two
    restarts of sound kubelets came late while their sandboxes were made. Read from the
    kubelets' own pod lists, each is set aside naming the pods, and the check passes on the
    restarts observed in their place; without the lists (the verdict before them) it fails
    the sound kubelets as too late."""
    trace = Trace.load(BURST_SET_ASIDE_135)
    result = replay_check(trace, tmp_path / "run")
    _assert_as_live(trace, result)
    assert result.status == "passed", result.reason
    aside = {
        (subject, check.n): check.set_aside
        for subject, verdict in result.verdicts.items()
        for check in verdict.set_aside
    }
    # The fast node's restart 2 (6.165 s, live past its 4.958 s bound) is within its window
    # since the pace pods' waits read the node during the burst (1.49x, not 1.05x): only
    # restart 1 of the reduced node's runs-5s, which no pace reading widens, is set aside.
    assert set(aside) == {("crashloop-worker2/runs-5s", 1)}
    assert result.costs["crashloop-worker"].wait_pace > 1.4
    assert all("other pod(s) once it was due (burst-" in str(words) for words in aside.values())
    blind = replay_check(
        trace, tmp_path / "blind", Changes(drop=lambda entry: entry.kind == "node-pods")
    )
    assert blind.status == "failed"
    assert "crashloop-worker2/runs-5s: restart 1" in blind.reason
    assert "too late" in blind.reason


ONE_PROBE_135 = "v1.35.8-max-ignored-one-probe"


def test_one_slow_pace_probe_does_not_make_a_node_too_slow_to_judge(tmp_path: Path) -> None:
    """A drill decided 7 s in, on a host kept busy: the default node had run one pace probe,
    78 ms (27x the reference). Live it was "too slow to judge" from that one probe and its
    sound kubelet an error; a median needs three probes, so it is judged on what it did."""
    trace = Trace.load(ONE_PROBE_135)
    assert "too slow to judge" in trace.outcome["reason"]
    result = replay_check(trace, tmp_path / "run")
    assert result.status == "failed", result.reason
    assert "fast: restart 2" in result.decided["fast"][1]
    for worker in ("reduced", "default"):
        assert result.verdicts[worker].passed, result.verdicts[worker].failures
    assert "too slow" not in result.reason


TAINT_NO_IMAGE_135 = "v1.35.8-existing-taint-and-no-image"


def test_a_tainted_node_and_one_without_the_image_are_errors_naming_why_never_failures(
    tmp_path: Path,
) -> None:
    """Through a ServiceAccount: one node cannot pull the workload image, one carries an
    untolerated NoExecute taint, one is sound. No kubelet is blamed: each blocked subject is
    an error naming its cause, and the sound node is checked and passes. Live, the tainted
    node's runs-5s pod (evicted before its node admitted it, its container terminated with
    no start) was counted as having run, and the run failed it."""
    trace = Trace.load(TAINT_NO_IMAGE_135)
    assert trace.outcome["status"] == "failed"
    result = replay_check(trace, tmp_path / "run")
    assert result.status == "error", result.reason
    causes = {
        "crashloop-worker": "ImagePullBackOff",
        "crashloop-worker/runs-5s": "ImagePullBackOff",
        # Its trace kept no status reason (traces keep it since): the refusal, unnamed.
        "crashloop-worker2": "the node refused the pod",
        "crashloop-worker2/runs-5s": "the node refused the pod",
    }
    for subject, cause in causes.items():
        verdict = result.verdicts[subject]
        assert verdict.in_error, (subject, verdict.failures)
        assert cause in verdict.errors[0].words, subject
    for subject in ("crashloop-worker3", "crashloop-worker3/runs-5s"):
        assert result.verdicts[subject].passed, result.verdicts[subject].failures


UNMEASURED_FIFTH_135 = "v1.35.8-existing-unmeasured-fifth-core"


def test_a_node_whose_pace_went_unmeasured_is_an_error_never_its_kubelet_s_failure(
    tmp_path: Path,
) -> None:
    """Through a ServiceAccount, the fast node held to 0.2 of a core: its pace pods were
    refused (a CPU limit whose quota was above the node's), so nothing of its pace was
    measured, and live its sound kubelet was failed at the reference host's cost, by 4 ms
    to 194 ms. Judged now, its lateness is within what a node at the slowest pace judged
    makes: an error naming the unmeasured node; the other two nodes are judged and pass."""
    trace = Trace.load(UNMEASURED_FIFTH_135)
    assert trace.outcome["status"] == "failed"
    result = replay_check(trace, tmp_path / "run")
    assert result.status == "error", result.reason
    node = trace.context["nodes"]["crashloop-worker"]
    assert not result.costs[node].measured, result.costs[node].describe()
    for subject, verdict in result.verdicts.items():
        if result.nodes[subject] == node:
            assert verdict.in_error, (subject, verdict.failures)
            assert all(f.code == "node-unmeasured" for f in verdict.failures), verdict.failures
            assert f"measured nothing of node {node}'s pace" in verdict.failures[0].words
        else:
            assert verdict.passed, (subject, verdict.failures)


EXISTING_TENTH_135 = "v1.35.8-existing-paced-tenth-core"


def test_a_node_at_a_tenth_of_a_core_read_through_the_api_is_paced_by_its_pods_waits(
    tmp_path: Path,
) -> None:
    """Through a ServiceAccount, the fast node held to 0.1 of a core. Its pace pods' bursts
    were as fast as ever in median and waited a CFS period at p95: read from the median alone
    (3.24x), a sound kubelet failed restart 1 by 0.556 s and the cap's median. The pods'
    bursts' mean excess, at pod_burst_wait_to_start, paces the node at about 6.7x: passed,
    and the node's windows still well inside the widest judged."""
    trace = Trace.load(EXISTING_TENTH_135)
    assert trace.outcome["status"] == "failed"
    result = replay_check(trace, tmp_path / "run")
    assert result.status == "passed", result.reason
    node = trace.context["nodes"]["crashloop-worker"]
    cost = result.costs[node]
    # The bursts' median alone reads the node barely slower than the reference's.
    assert statistics.median(cost.pace_s) / cost.pace_reference_s < 2.5
    assert 5.0 < cost.wait_pace < 8.0, cost.describe()
    assert not cost.too_slow
    # The unthrottled nodes are read at about the reference's pace.
    others = {n: c.pace for n, c in result.costs.items() if n != node}
    assert all(pace < 1.6 for pace in others.values()), others


STARTUP_BURST_135 = "v1.35.8-existing-startup-burst"


def test_a_start_up_burst_the_pace_pods_waited_through_widens_that_node_s_windows(
    tmp_path: Path,
) -> None:
    """The talk's scenarios started in the same second as an existing-cluster check (a trace
    from before the kubelets' pod lists were read): a sound fast node's restart 1 came at
    2.986 s against 2.973 s, and live the check failed it. Its pace pods' bursts waited
    through the same start-ups, and their waits read the nodes at 1.1-1.4x: passed."""
    trace = Trace.load(STARTUP_BURST_135)
    assert trace.outcome["status"] == "failed"
    assert not any(entry.kind == "node-pods" for entry in trace.entries)
    result = replay_check(trace, tmp_path / "run")
    assert result.status == "passed", result.reason
    assert max(cost.wait_pace for cost in result.costs.values()) > 1.2


TENTH_LEVELS_135 = "v1.35.8-existing-tenth-core-levels-behind"


def test_levels_missed_on_a_node_past_the_widest_window_are_the_node_s_error(
    tmp_path: Path,
) -> None:
    """The fast node at a tenth of a core through the API: its pods' bursts read 3.6x in
    median, 64x at the median's upper bound, so its windows were cut to the widest judged
    (10x). Its runs-5s subject's levels were seen before 5 of 11 restarts, and live the check
    failed the sound kubelet for it. Past the widest window a node's status writes fall
    behind its restarts: the unseen levels are an error naming the node, not a failure."""
    trace = Trace.load(TENTH_LEVELS_135)
    assert trace.outcome["status"] == "failed"
    assert "levels unconfirmed" in trace.outcome["reason"]
    result = replay_check(trace, tmp_path / "run")
    assert result.status == "error", result.reason
    node = trace.context["nodes"]["crashloop-worker"]
    cost = result.costs[node]
    assert cost.pace > 10 > cost.pace_median, cost.describe()
    assert not cost.too_slow
    assert cost.levels_fall_behind
    runs_5s = result.verdicts["crashloop-worker/runs-5s"]
    assert runs_5s.in_error, runs_5s.failures
    (error,) = runs_5s.failures
    assert "levels unconfirmed" in error.words
    assert "fall behind its restarts" in error.words
    for subject in ("crashloop-worker2", "crashloop-worker3"):
        assert result.verdicts[subject].passed, result.verdicts[subject].failures


def test_a_pass_with_its_windows_cut_to_the_widest_says_it_did_not_cover_them(
    tmp_path: Path,
) -> None:
    """A kubelet sleeping 1 s before each creation, on a fifth of a core: its node's pace
    read 25.80x, the windows were cut to the widest judged, and it passed. The pass is what
    it was (no bound moved for it), and it says which part it did not cover."""
    trace = Trace.load("v1.35.8-creation-late-fifth-core")
    assert trace.outcome["status"] == "passed"
    result = replay_check(trace, tmp_path / "run")
    assert result.status == "passed", result.reason
    node = trace.context["nodes"]["fast"]
    assert result.costs[node].pace > MAX_JUDGEABLE_PACE
    rules = {rule.rule: rule for rule in coverage(result)["fast"]}
    assert not rules["windows"].covered
    assert "past the 10x its windows are judged at" in rules["windows"].detail
    # The unthrottled nodes' passes cover their windows: nothing is said of them.
    assert "windows" not in {rule.rule for rule in coverage(result)["reduced"]}
