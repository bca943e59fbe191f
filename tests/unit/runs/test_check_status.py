"""How a check turns what it observed into its status, and when it decides a worker early."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pytest

from crashloop_harness.cluster.remote import RemoteCluster
from crashloop_harness.core import timeouts
from crashloop_harness.recording.hostcpu import SaturatedSpan
from crashloop_harness.recording.nodepods import PodStartup
from crashloop_harness.recording.pace import PaceSample
from crashloop_harness.recording.recorder import Recorder
from crashloop_harness.recording.records import AttemptRecord
from crashloop_harness.runs import check
from crashloop_harness.runs.check import CheckResult, decide_early, judge, summary_of, take_sample
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES, CheckProfile
from crashloop_harness.verdict.coverage import uncovered
from crashloop_harness.verdict.nodecost import REFERENCE_PACE_S, NodeCost
from tests.unit.factories import FAST, NS, attempts, expected_reports


def _result(status: str, delays: list[float], tmp_path: Path) -> CheckResult:
    result = CheckResult(
        run_id="run",
        run_dir=tmp_path,
        profile=CHECK_PROFILES["quick"],
        rows=[],
        curves={"fast": FAST},
        nodes={"fast": "crashloop-worker"},
        status=status,
    )
    result.attempts = {"fast": attempts(delays)} if delays else {}
    # Its node's pace probed at the reference host's, as every kind node's is: a node the
    # run measured nothing of cannot fail its kubelet for lateness (verdict/slowness.py).
    result.pace = {"crashloop-worker": [REFERENCE_PACE_S] * 10}
    return result


ON_CURVE = [0.9, 2.9, 3.0, 2.8]
OFF_CURVE = [0.9, 2.9, 9.0, 2.8]
SEEN = {"fast": len(ON_CURVE)}


@pytest.mark.parametrize(
    ("status", "delays", "required", "expected"),
    [
        ("observed", ON_CURVE, SEEN, "passed"),
        ("observed", OFF_CURVE, SEEN, "failed"),
        # The window ended: never a pass, even on what was seen.
        ("timeout", ON_CURVE, SEEN, "failed"),
        # Fewer restarts than the profile needs, however the run ended.
        ("observed", ON_CURVE, {"fast": 10}, "failed"),
        ("timeout", ON_CURVE, {"fast": 10}, "failed"),
        # A pod that never ran its container.
        ("observed", [], SEEN, "failed"),
        # A silent node or a dead engine: no pass or fail is claimed.
        ("error", ON_CURVE, SEEN, "error"),
        ("error", OFF_CURVE, SEEN, "error"),
        ("interrupted", OFF_CURVE, {"fast": 10}, "interrupted"),
    ],
)
def test_the_status_after_judging(
    status: str, delays: list[float], required: dict[str, int], expected: str, tmp_path: Path
) -> None:
    result = _result(status, delays, tmp_path)
    judge(result, required)
    assert result.status == expected
    assert set(result.verdicts) == {"fast"}, "every worker is judged in every case"


def test_a_node_left_out_makes_a_pass_an_error_naming_it_and_a_failure_stays_one(
    tmp_path: Path,
) -> None:
    blocked = {"crashloop-worker3": "its kubelet's config could not be read: Read timed out."}
    passed = _result("observed", ON_CURVE, tmp_path)
    passed.left_out = dict(blocked)
    judge(passed, SEEN)
    assert passed.status == "error"
    assert passed.verdicts["fast"].passed, "the nodes judged keep their verdicts"
    assert "node crashloop-worker3 left out: its kubelet's config could not be read" in (
        passed.reason
    )
    failed = _result("observed", OFF_CURVE, tmp_path)
    failed.left_out = dict(blocked)
    judge(failed, SEEN)
    assert failed.status == "failed"
    assert "crashloop-worker3 left out" in failed.reason


def test_an_incomplete_worker_is_named_with_its_last_restart(tmp_path: Path) -> None:
    result = _result("timeout", ON_CURVE, tmp_path)
    judge(result, {"fast": 10})
    assert "fast: incomplete" in result.reason
    assert "last restart seen was 4" in result.reason
    assert "restart 5" in result.reason


def test_an_interrupted_run_is_not_judged_incomplete(tmp_path: Path) -> None:
    result = _result("interrupted", ON_CURVE, tmp_path)
    judge(result, {"fast": 10})
    assert result.verdicts["fast"].passed


def _measured_by_its_restarts(result: CheckResult) -> CheckResult:
    """The node measured by its runtime's timestamps instead of pace probes (a kind run
    recorded before them): its windows stay at its own cost while the check observes,
    where a paced node's early decisions are judged at the slowest pace judged."""
    result.pace = {}
    result.attempts = {
        subject: [
            dataclasses.replace(a, created_at_ns=a.started_at_ns - 50_000_000) for a in records
        ]
        for subject, records in result.attempts.items()
    }
    return result


def test_an_overdue_restart_decides_the_worker_at_once(tmp_path: Path) -> None:
    result = _measured_by_its_restarts(_result("running", ON_CURVE, tmp_path))
    last_exit = result.attempts["fast"][-1].finished_at_ns
    assert last_exit is not None
    # The fast curve's bound is 2 + 1 + 1.5 = 4.5s; the node listed 5s after the exit.
    result.node_now_ns["fast"] = last_exit + 5 * NS
    decide_early(result, elapsed_s=30.0)
    elapsed, message = result.decided["fast"]
    assert elapsed == 30.0
    assert "restart 5 overdue" in message


def test_a_restart_still_within_its_window_decides_nothing(tmp_path: Path) -> None:
    result = _result("running", ON_CURVE, tmp_path)
    last_exit = result.attempts["fast"][-1].finished_at_ns
    assert last_exit is not None
    result.node_now_ns["fast"] = last_exit + 4 * NS
    decide_early(result, elapsed_s=30.0)
    assert result.decided == {}


def test_an_off_curve_restart_decides_the_worker_at_once(tmp_path: Path) -> None:
    result = _measured_by_its_restarts(_result("running", OFF_CURVE, tmp_path))
    decide_early(result, elapsed_s=12.0)
    assert "restart 3" in result.decided["fast"][1]


def test_a_pod_that_never_runs_is_decided_after_the_pod_running_timeout(tmp_path: Path) -> None:
    result = _result("running", [], tmp_path)
    decide_early(result, elapsed_s=timeouts.POD_RUNNING - 1)
    assert result.decided == {}
    decide_early(result, elapsed_s=timeouts.POD_RUNNING + 1)
    assert "never ran" in result.decided["fast"][1]


def test_a_pending_level_off_the_model_decides_the_worker(tmp_path: Path) -> None:
    result = _result("running", ON_CURVE, tmp_path)
    result.pending["fast"] = (5, 3.0)
    decide_early(result, elapsed_s=20.0)
    message = result.decided["fast"][1]
    assert "restart 5 (pending)" in message
    assert "3s" in message


class _RecorderNow:
    """What a recorder knows at one moment: its records and the pending back-offs."""

    def __init__(
        self, records: list[AttemptRecord], pending: dict[tuple[str, str], tuple[int, float]]
    ):
        self.records = records
        self.pending = pending

    def attempts(self) -> list[AttemptRecord]:
        return self.records

    def created_unstarted(self) -> dict[tuple[str, str], tuple[int, int]]:
        return {}

    def pending_backoffs(self) -> dict[tuple[str, str], tuple[int, float]]:
        return self.pending

    def not_running(self) -> dict[str, str]:
        return {}

    def listed_at_ns(self, _node: str) -> int | None:
        return None

    def levels_until_ns(self, _node: str) -> int | None:
        return None

    def unobserved(self, _node: str) -> list[tuple[int, int]]:
        return []

    def saturated(self) -> tuple[SaturatedSpan, ...]:
        return ()

    def pace_samples(self) -> dict[str, list[PaceSample]]:
        return {}

    def pod_startups(self) -> dict[str, list[PodStartup]]:
        return {}


def test_a_pending_level_is_dropped_once_its_restart_happened(tmp_path: Path) -> None:
    result = _result("running", [], tmp_path)
    result.pods = {"crashloop-fast": "fast"}
    records = attempts(ON_CURVE)
    key = (records[0].pod_uid, records[0].container)
    # Restart 4 pending with its 2s, then restart 4 happens and nothing is pending.
    take_sample(result, cast(Recorder, _RecorderNow(records[:4], {key: (4, 2.0)})))
    assert result.pending["fast"] == (4, 2.0)
    take_sample(result, cast(Recorder, _RecorderNow(records, {})))
    assert "fast" not in result.pending
    # A level recorded for an older attempt is never taken for the next one.
    take_sample(result, cast(Recorder, _RecorderNow(records, {key: (3, 2.0)})))
    assert "fast" not in result.pending


def test_late_only_across_a_frozen_node_is_set_aside_and_owed(tmp_path: Path) -> None:
    result = _result("observed", OFF_CURVE, tmp_path)  # restart 3 took 9s, bound 4.5s
    exit_2 = result.attempts["fast"][2].finished_at_ns
    assert exit_2 is not None
    result.unobserved["fast"] = ((exit_2 + NS, exit_2 + 7 * NS),)
    decide_early(result, elapsed_s=30.0)
    # Not decided: set aside, one more restart owed in its place.
    assert "fast" not in result.decided
    assert result.set_aside == {"fast": 1}
    # Without it when the window ended: an error naming the freeze, no failure.
    judge(result, SEEN)
    assert result.status == "error"
    assert "1 restart(s) set aside" in result.reason
    assert "node frozen 6.000s" in result.reason
    assert result.verdicts["fast"].in_error


def test_a_restart_set_aside_at_the_node_s_pace_is_owed_while_the_check_observes(
    tmp_path: Path,
) -> None:
    """Restart 3 after 5.5 s: within the widest window an early decision judges at (9 s),
    past the node's own (4.5 s at the reference's pace), while another run's pod started on
    the node once it was due. It is owed at once, so the check observes on for one more."""
    result = _result("observed", [0.9, 2.9, 5.5, 2.8], tmp_path)
    result.pace = {"crashloop-worker": [REFERENCE_PACE_S] * 10}
    exit_2 = result.attempts["fast"][2].finished_at_ns
    assert exit_2 is not None
    result.startups = {
        "crashloop-worker": [PodStartup("other/p", exit_2 + 2 * NS, exit_2 + 4 * NS)]
    }
    decide_early(result, elapsed_s=30.0)
    assert "fast" not in result.decided
    assert result.set_aside == {"fast": 1}
    # Without the start-up it is no set-aside but a failure, at the end.
    result.startups = {}
    decide_early(result, elapsed_s=31.0)
    assert result.set_aside == {"fast": 0}


def test_a_restart_in_place_of_one_set_aside_earns_the_pass(tmp_path: Path) -> None:
    result = _result("observed", [], tmp_path)
    result.attempts = {"fast": attempts([*OFF_CURVE, 2.7], reported=expected_reports(FAST, 5))}
    exit_2 = result.attempts["fast"][2].finished_at_ns
    assert exit_2 is not None
    result.unobserved["fast"] = ((exit_2 + NS, exit_2 + 7 * NS),)
    judge(result, SEEN)
    assert result.status == "passed", result.reason
    fast = result.verdicts["fast"]
    assert [c.n for c in fast.set_aside] == [3]
    assert "set aside" in fast.checks[2].reason


def test_a_frozen_span_elsewhere_does_not_excuse_a_late_restart(tmp_path: Path) -> None:
    result = _result("observed", OFF_CURVE, tmp_path)
    first_exit = result.attempts["fast"][0].finished_at_ns
    assert first_exit is not None
    result.unobserved["fast"] = ((first_exit - 10 * NS, first_exit - 5 * NS),)
    judge(result, SEEN)
    assert result.status == "failed"


def test_a_worker_decided_early_is_not_also_incomplete(tmp_path: Path) -> None:
    result = _result("observed", OFF_CURVE, tmp_path)
    result.decided["fast"] = (12.0, "fast: restart 3: ...")
    judge(result, {"fast": 10})
    assert result.status == "failed"
    assert "incomplete" not in result.reason
    assert "restart 3" in result.reason


CLUSTER = RemoteCluster(
    kubeconfig=Path("kubeconfig"),
    context=None,
    nodes=("crashloop-worker",),
    workload_image="workload:x",
    name="existing",
)
READER_ENDED = "reading crashloop-worker: the node's reader ended (exit code 0); starting it again"


def test_a_passed_check_keeps_the_recorders_notes_out_of_its_reason(tmp_path: Path) -> None:
    result = _result("observed", ON_CURVE, tmp_path)
    result.recorder_errors = [READER_ENDED]
    judge(result, SEEN)
    summary = summary_of(result, CLUSTER)
    assert summary.status == "passed"
    assert summary.reason == ""
    assert summary.recorder_notes == (READER_ENDED,)


def test_a_failed_check_names_the_recorders_first_notes_in_its_reason(tmp_path: Path) -> None:
    result = _result("observed", OFF_CURVE, tmp_path)
    result.recorder_errors = [READER_ENDED]
    judge(result, SEEN)
    summary = summary_of(result, CLUSTER)
    assert summary.status == "failed"
    assert summary.reason.endswith(READER_ENDED)


@pytest.mark.parametrize("name", ["quick", "full", "demo", "mutation", "drill"])
def test_a_checks_summary_names_the_profile_it_ran(name: str, tmp_path: Path) -> None:
    result = _result("observed", ON_CURVE, tmp_path)
    result.profile = CheckProfile(name, 60.0, CHECK_PROFILES["quick"].rule)
    judge(result, SEEN)
    assert summary_of(result, CLUSTER).profile == name


# Six restarts at the fast worker's 2s cap, each inside its 4.5s window, 2.45s past the cap in
# median: over the bound for six (the jitter's share, a sync tick, the cost and the start
# latency), which more restarts can still overturn.
LATE_IN_MEDIAN = [0.9, 2.9, 4.45, 4.45, 4.45, 4.45, 4.45]


def test_a_median_more_restarts_can_overturn_decides_nothing_early(tmp_path: Path) -> None:
    result = _result("running", LATE_IN_MEDIAN, tmp_path)
    decide_early(result, elapsed_s=20.0)
    assert result.decided == {}, "the cap's median is judged on every restart, at the end"


def test_a_median_late_at_the_end_fails_the_worker(tmp_path: Path) -> None:
    result = _result("observed", LATE_IN_MEDIAN, tmp_path)
    judge(result, {"fast": len(LATE_IN_MEDIAN)})
    assert result.status == "failed"
    assert any("in median" in failure for failure in result.verdicts["fast"].messages)


def test_an_early_decision_on_a_paced_node_is_made_at_its_widest_window(tmp_path: Path) -> None:
    # Paced at the reference's pace: restart 3 after 6 s is over its final 4.5 s bound, but
    # within the widest window a later pace reading could give it: not decided early.
    result = _result("observed", [0.9, 2.9, 6.0, 2.8], tmp_path)
    result.pace = {"crashloop-worker": [REFERENCE_PACE_S] * 10}
    decide_early(result, elapsed_s=30.0)
    assert "fast" not in result.decided
    judge(result, SEEN)
    assert result.status == "failed", "judged at its own pace in the end"
    # Past even the widest window, it is decided at once.
    late = _result("observed", [0.9, 2.9, 12.0, 2.8], tmp_path)
    late.pace = {"crashloop-worker": [REFERENCE_PACE_S] * 10}
    decide_early(late, elapsed_s=30.0)
    assert "restart 3" in late.decided["fast"][1]


@dataclass(frozen=True)
class _Paced:
    """Just what the coverage reads of a node's cost."""

    pace: float
    paced: bool = True


def test_a_pass_on_a_node_whose_windows_were_cut_to_the_widest_says_so() -> None:
    """A kubelet 1 s late on every creation passed on a fifth of a core read at 25.80x (run
    20261208T005424Z-check-quick-4eaa): its pass must not read as covering that."""
    (cut,) = check._windows(cast(NodeCost, _Paced(25.8)))
    assert (cut.rule, cut.covered) == ("windows", False)
    assert "25.80x, past the 10x its windows are judged at" in cut.detail
    assert uncovered({"fast": (cut,)}) == [f"fast: windows ({cut.detail})"]
    assert check._windows(cast(NodeCost, _Paced(9.9))) == ()
    assert check._windows(cast(NodeCost, _Paced(25.8, paced=False))) == ()
    assert check._windows(None) == ()
