"""The overhead analysis: readings to numbers (pure), the sweep's plan and its outputs."""

from __future__ import annotations

import dataclasses
import itertools
import json
from datetime import timedelta
from pathlib import Path

import pytest

from crashloop_harness.cluster.profiles import load_cluster_spec
from crashloop_harness.core.conventions import SAMPLED_LABEL
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.resources import spec_path
from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.overhead.analysis import (
    EVENT_BACKLOG_QPS,
    PEAK_INTERVALS,
    Overshoot,
    ProcessTimes,
    RequestSample,
    Restart,
    UsageSample,
    allowed_restarts,
    cpu_between,
    curve_breaks_at,
    event_write_rate,
    kubelet_cores_over_time,
    overshoot,
    parse_proc_stats,
    parse_request_counts,
    request_rates,
    requests_over_time,
    restarts_to_cap,
    rss_of,
    talk_ratios,
    time_to_cap,
)
from crashloop_harness.overhead.output import (
    OVERHEAD_FILE,
    overhead_table,
    ratio_text,
    write_overhead,
)
from crashloop_harness.overhead.plan import (
    OverheadPlan,
    OverheadRequest,
    WorkerTarget,
    check_overhead_request,
    parse_pod_counts,
    window_for,
)
from crashloop_harness.overhead.pods import SAMPLED_PODS, overhead_pod
from tests.unit.overhead.factories import CELLS

FAST = BackoffCurve(timedelta(seconds=1), timedelta(seconds=2))
DEFAULT = BackoffCurve(timedelta(seconds=10), timedelta(seconds=300))


def _stat(pid: int, comm: str, utime: int, stime: int, *, cutime: int = 0, rss: int = 0) -> str:
    # Fields after the command: state ppid pgrp session tty tpgid flags minflt cminflt majflt
    # cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime vsize rss
    fields = ["S", "1", "1", "1", "0", "-1", "0", "0", "0", "0", "0"]
    fields += [str(utime), str(stime), str(cutime), "0", "20", "0", "9", "0", "5", "100"]
    fields += [str(rss)]
    return f"{pid} ({comm}) " + " ".join(fields)


def test_proc_stats_give_cpu_with_reaped_children_and_rss() -> None:
    text = "\n".join(
        [
            _stat(207, "kubelet", 350, 283, rss=22_966),
            _stat(301, "containerd-shim", 10, 5, cutime=40),
            _stat(9, "a (weird) name", 1, 1),
            "garbage line",
        ]
    )
    found = parse_proc_stats(text, ticks_per_s=100, page_bytes=4096)
    assert [p.comm for p in found] == ["kubelet", "containerd-shim", "a (weird) name"]
    assert found[0].cpu_s == pytest.approx(6.33)
    assert found[0].rss_bytes == 22_966 * 4096
    assert found[1].cpu_s == pytest.approx(0.55)  # runc runs reaped by the shim count


def test_cpu_between_counts_new_processes_from_zero_and_never_goes_negative() -> None:
    before = [ProcessTimes(1, "kubelet", 10.0, 0), ProcessTimes(2, "containerd-shim", 1.0, 0)]
    after = [
        ProcessTimes(1, "kubelet", 12.5, 5),
        ProcessTimes(3, "containerd-shim", 0.4, 0),  # started in the window
        ProcessTimes(4, "workload", 9.0, 0),  # not the runtime
    ]
    assert cpu_between(before, after, ["kubelet"]) == pytest.approx(2.5)
    # The shim that ended in between is lost, not subtracted.
    assert cpu_between(before, after, ["containerd", "containerd-shim"]) == pytest.approx(0.4)
    assert rss_of(after, "kubelet") == 5


METRICS = """# HELP rest_client_requests_total ...
rest_client_requests_total{code="200",host="cp:6443",method="GET"} 166
rest_client_requests_total{code="404",host="cp:6443",method="GET"} 8
rest_client_requests_total{code="200",host="cp:6443",method="PATCH"} 235
rest_client_request_duration_seconds_bucket{verb="GET",le="1"} 99
"""


def test_request_counts_are_summed_per_verb() -> None:
    assert parse_request_counts(METRICS) == {"GET": 174.0, "PATCH": 235.0}


def test_request_rates_have_a_mean_and_a_peak_and_skip_a_counter_reset() -> None:
    samples = [
        RequestSample(0.0, {"GET": 0, "PATCH": 0}),
        RequestSample(10.0, {"GET": 10, "PATCH": 40}),  # 5 QPS
        RequestSample(20.0, {"GET": 20, "PATCH": 50}),  # 2 QPS
        RequestSample(30.0, {"GET": 1, "PATCH": 1}),  # the kubelet restarted: skipped
    ]
    rates = request_rates(samples[:3], peak_intervals=1)
    assert rates is not None
    assert rates.mean_qps == pytest.approx(3.5)
    assert rates.peak_qps == pytest.approx(5.0)
    assert rates.peak_by_verb == {"GET": 1.0, "PATCH": 4.0}
    with_reset = request_rates(samples, peak_intervals=1)
    assert with_reset is not None
    assert with_reset.peak_qps == pytest.approx(5.0)
    assert request_rates(samples[:1]) is None
    # Over two intervals, the only span without the reset is the first two.
    over_two = request_rates(samples, peak_intervals=2)
    assert over_two is not None
    assert over_two.peak_qps == pytest.approx(3.5)
    assert over_two.busiest_interval_qps == pytest.approx(5.0)


def _burst_at(offset_s: float) -> list[RequestSample]:
    """Samples every 10 s of a kubelet making 1 request a second, and 80 more in a 4 s burst
    that starts ``offset_s`` into the window."""
    samples = []
    for at in range(0, 61, 10):
        in_burst = min(max(at - offset_s, 0.0), 4.0) * 20.0
        samples.append(RequestSample(float(at), {"PATCH": at + in_burst}))
    return samples


def test_the_peak_does_not_depend_on_where_the_samples_fall() -> None:
    # The burst wholly inside one sample interval, or split across two.
    inside, split = request_rates(_burst_at(22.0)), request_rates(_burst_at(28.0))
    assert inside is not None
    assert split is not None
    # Over one interval the same burst reads 9 or 5 QPS: a run-to-run spread of 80 %.
    assert inside.busiest_interval_qps == pytest.approx(9.0)
    assert split.busiest_interval_qps == pytest.approx(5.0)
    # Over four intervals it reads the same: 1 QPS + 80 requests / 40 s.
    assert PEAK_INTERVALS == 4
    assert inside.peak_qps == pytest.approx(3.0)
    assert split.peak_qps == pytest.approx(3.0)
    assert inside.peak_by_verb == split.peak_by_verb == {"PATCH": pytest.approx(3.0)}
    # Over two as well (a burst up to one interval long), but not over one.
    for offset_s in (22.0, 28.0):
        peaks = request_rates(_burst_at(offset_s), peak_intervals=2)
        assert peaks is not None
        assert peaks.peak_qps == pytest.approx(5.0)


def test_the_peak_is_never_below_the_windows_mean() -> None:
    # Busy at both ends, quiet between: each 40 s span reads 25 QPS, the whole 50 s 28.
    counts = [0, 400, 600, 800, 1000, 1400]
    rates = request_rates([RequestSample(10.0 * i, {"GET": n}) for i, n in enumerate(counts)])
    assert rates is not None
    assert rates.mean_qps == pytest.approx(28.0)
    assert rates.peak_qps == pytest.approx(28.0)


def test_a_window_of_one_interval_takes_its_peak_over_that_interval() -> None:
    rates = request_rates([RequestSample(0.0, {"GET": 0}), RequestSample(10.0, {"GET": 30})])
    assert rates is not None
    assert rates.peak_qps == rates.busiest_interval_qps == pytest.approx(3.0)


def test_the_load_through_a_window_is_per_sample_interval() -> None:
    usage = [UsageSample(20.0, 3.0, 1.0), UsageSample(10.0, 1.0, 0.5), UsageSample(20.0, 3.0, 1.0)]
    # Cumulative from the window's start: 1 s of CPU in the first 10 s, 2 s in the next.
    assert kubelet_cores_over_time(usage) == [(10.0, 0.1), (20.0, 0.2)]
    assert kubelet_cores_over_time([]) == []
    samples = [
        RequestSample(0.0, {"PATCH": 0}),
        RequestSample(10.0, {"PATCH": 50}),
        RequestSample(20.0, {"PATCH": 3}),  # the kubelet restarted: left out
        RequestSample(30.0, {"PATCH": 23}),
    ]
    assert requests_over_time(samples) == [(10.0, 5.0), (30.0, 2.0)]


def test_allowed_restarts_follow_the_curve_from_the_pods_level() -> None:
    # Fast: restart 1 at once, then 1s, then 2s each.
    assert allowed_restarts(FAST, 0, timedelta(seconds=7)) == 5  # 0 + 1 + 2 + 2 + 2 = 7s
    assert allowed_restarts(FAST, 0, timedelta(seconds=6.9)) == 4
    # At the cap of the default curve, a minute allows nothing; ten minutes two.
    assert allowed_restarts(DEFAULT, 9, timedelta(minutes=1)) == 0
    assert allowed_restarts(DEFAULT, 9, timedelta(minutes=10)) == 2


REDUCED = BackoffCurve(timedelta(seconds=1), timedelta(seconds=60))


@pytest.mark.parametrize(
    ("curve", "level", "climb_s", "in_window"),
    [
        (FAST, 2, 1.0, 90),  # 0s, 1s, then 2s each: 90 in a window of 180s
        (REDUCED, 7, 63.0, 3),  # 0 + 1 + 2 + 4 + 8 + 16 + 32, then 60s each, 3 caps
        (DEFAULT, 6, 310.0, 1),  # 0 + 10 + 20 + 40 + 80 + 160, then 300s each
    ],
)
def test_a_pod_is_at_its_cap_after_climbing_every_lower_wait(
    curve: BackoffCurve, level: int, climb_s: float, in_window: int
) -> None:
    assert restarts_to_cap(curve) == level
    assert curve.delay_before_restart(level + 1) == curve.maximum
    assert curve.delay_before_restart(level) < curve.maximum
    assert time_to_cap(curve) == timedelta(seconds=climb_s)
    # From there a cell's window allows each pod one restart, or one per cap it holds.
    window = timedelta(seconds=window_for(curve, None))
    assert allowed_restarts(curve, level, window) == in_window


def test_overshoot_is_against_each_restarts_own_delay() -> None:
    restarts = [Restart(5, 2.5), Restart(6, 2.7), Restart(7, 9.0)]
    found = overshoot(FAST, restarts)
    assert found.restarts == 3
    assert found.median_s == pytest.approx(0.7)
    assert found.max_s == pytest.approx(7.0)
    assert found.on_curve_share == pytest.approx(2 / 3)
    assert found.keeps_curve is False
    none = overshoot(FAST, [])
    assert none.keeps_curve is None  # no restart seen: no evidence either way


NO_RESTARTS = Overshoot(0, None, None, None, None)


def test_the_talks_ratios_come_from_the_largest_crashing_cell_and_its_baseline() -> None:
    fast = talk_ratios(CELLS, "fast")
    assert fast[0].measured == pytest.approx(2.5)  # 0.25 / 0.10 cores at 60 pods
    assert fast[0].talk == "2x"
    assert fast[1].measured == pytest.approx(10.0)  # peak QPS at 60 pods
    assert talk_ratios(CELLS, "reduced") == []


def test_where_a_config_stops_keeping_its_curve() -> None:
    assert curve_breaks_at(CELLS, "fast") == 60
    assert curve_breaks_at(CELLS, "default") is None


def test_the_outputs_are_written_and_say_what_was_measured(tmp_path: Path) -> None:
    report = write_overhead(
        tmp_path, run_id="r1", status="measured", reason="", plan={"pods": [0, 30, 60]}, cells=CELLS
    )
    document = json.loads((tmp_path / OVERHEAD_FILE).read_text())
    assert len(document["cells"]) == len(CELLS)
    assert document["curve_breaks_at"] == {"fast": 60, "default": None}
    assert document["cells"][3]["keeps_curve"] is False
    assert document["cells"][3]["kubelet_cores"] == pytest.approx(0.25)
    # The readings behind the totals are kept, so the run can be recomputed later.
    assert document["cells"][3]["request_samples"][1] == {"at_s": 10.0, "counts": {"PATCH": 50}}
    assert document["cells"][3]["usage_samples"][0]["kubelet_cpu_s"] == pytest.approx(1.5)
    stems = ("overhead-cpu", "overhead-qps", "overhead-overshoot")
    for stem in (*stems, "overhead-cpu-time", "overhead-qps-time"):
        assert (tmp_path / f"{stem}.png").stat().st_size > 0
    text = (tmp_path / "report.md").read_text()
    assert "the talk: 2x" in text
    assert "fast: stopped keeping its curve at 60 pods" in text
    assert report.name == "report.html"
    assert overhead_table(CELLS).rows[0][0] == "baseline (fast)"


def test_the_table_says_how_long_the_pods_climbed_and_when_they_never_reached_the_cap() -> None:
    reached = dataclasses.replace(CELLS[4], at_cap=True, climb_s=321.4)
    short = dataclasses.replace(CELLS[4], at_cap=False, climb_s=800.2)
    rows = overhead_table([CELLS[0], reached, short]).rows
    assert [row[-2] for row in rows] == ["-", "321", "not in 800"]


def test_the_table_says_when_the_events_drained_and_when_they_never_did() -> None:
    drained = dataclasses.replace(CELLS[4], events_drained=True, drained_s=233.6)
    never = dataclasses.replace(CELLS[4], events_drained=False, drained_s=301.0)
    table = overhead_table([CELLS[0], drained, never])
    assert table.headers[-1] == "events drained after (s)"
    assert [row[-1] for row in table.rows] == ["-", "234", "not in 301"]


def _counts(at_s: float, get: float, patch: float, post: float = 0.0) -> RequestSample:
    return RequestSample(at_s, {"GET": get, "PATCH": patch, "POST": post})


def test_event_writes_are_the_posts_and_patches_no_get_came_before() -> None:
    # 40 s of status updates alone (a GET before each PATCH): no event written.
    steady = [_counts(10.0 * i, 100 + 30 * i, 100 + 30 * i) for i in range(5)]
    assert event_write_rate(steady) == pytest.approx(0.0)
    # The same, plus 400 event PATCHes and 40 event POSTs over 40 s: 11 events/s.
    onset = [_counts(10.0 * i, 100 + 30 * i, 100 + 130 * i, 10 * i) for i in range(5)]
    assert event_write_rate(onset) == pytest.approx(11.0)
    # Only the first and last readings count, in time order whatever the input order.
    assert event_write_rate(list(reversed(onset))) == pytest.approx(11.0)
    # More GETs than writes (a cache refill, a node read) is no negative event rate.
    assert event_write_rate([_counts(0, 0, 0), _counts(10, 50, 10)]) == 0.0


def test_an_event_rate_needs_two_readings_apart_and_counters_that_never_went_down() -> None:
    assert event_write_rate([]) is None
    assert event_write_rate([_counts(0, 0, 10)]) is None
    assert event_write_rate([_counts(5, 0, 10), _counts(5, 0, 90)]) is None
    restarted = [_counts(0, 500, 900), _counts(10, 20, 30), _counts(20, 40, 60)]
    assert event_write_rate(restarted) is None  # the kubelet restarted in between
    # A verb missing from one reading counts as none sent yet.
    assert event_write_rate([RequestSample(0, {}), _counts(10, 0, 0, 50)]) == pytest.approx(5.0)


def test_the_backlog_line_lets_a_steady_kubelet_through_and_holds_an_onset() -> None:
    # The onset measured with 108 pods: 65 PATCH/s against 14 GET/s in one reading.
    onset = [_counts(0, 0, 0), _counts(10, 140, 652)]
    steady = [_counts(0, 0, 0), _counts(40, 160, 170, 4)]  # 0.35 event writes/s
    assert (event_write_rate(onset) or 0) > EVENT_BACKLOG_QPS
    assert (event_write_rate(steady) or 0) <= EVENT_BACKLOG_QPS


def test_a_cell_says_why_its_window_may_not_read_the_steady_cost() -> None:
    clean = dataclasses.replace(CELLS[3], at_cap=True, climb_s=20, events_drained=True)
    assert clean.unclean == []
    assert dataclasses.replace(CELLS[3]).unclean == []  # a run from before the waits
    short = dataclasses.replace(clean, at_cap=False, climb_s=400.4)
    assert short.unclean == ["not every pod reached its cap in 400s"]
    noisy = dataclasses.replace(clean, events_drained=False, drained_s=300.2)
    assert noisy.unclean == ["the kubelet's event writes had not drained in 300s"]


def test_a_talk_figure_carries_its_windows_caveats() -> None:
    noisy_base = dataclasses.replace(CELLS[1], events_drained=False, drained_s=300.0)
    short = dataclasses.replace(CELLS[3], at_cap=False, climb_s=400.0)
    cpu, peak = talk_ratios([CELLS[0], noisy_base, CELLS[2], short], "fast")
    assert cpu.caveats == (
        "not every pod reached its cap in 400s",
        "baseline: the kubelet's event writes had not drained in 300s",
    )
    assert peak.caveats == ("not every pod reached its cap in 400s",)  # no baseline in a peak
    assert "NOT a steady figure: not every pod reached its cap" in ratio_text(peak)
    assert "NOT" not in ratio_text(talk_ratios(CELLS, "fast")[0])


def test_pod_counts_take_numbers_and_full_and_refuse_the_rest() -> None:
    assert parse_pod_counts("0, 10,full") == [0, 10, None]
    for bad in ("ten", "-1", "", "10,,20"):
        with pytest.raises(HarnessError, match=r"pod count|empty"):
            parse_pod_counts(bad)


def test_a_window_must_hold_one_capped_restart() -> None:
    assert window_for(FAST, None) == 180.0  # long enough for its readings to average out
    assert window_for(REDUCED, None) == 180.0  # three caps: one would leave the peak to chance
    assert window_for(DEFAULT, None) == pytest.approx(330.0)  # one cap and its margin
    assert window_for(FAST, 60.0) == 60.0  # a shorter window, given, that still holds a cap
    assert window_for(DEFAULT, 400.0) == 400.0
    with pytest.raises(HarnessError, match=r"too short.*300s") as refused:
        window_for(DEFAULT, 120.0)
    assert "--duration 330" in refused.value.fix


def test_the_plan_runs_each_baseline_beside_its_crashing_cells_and_none_of_zero_pods() -> None:
    fast = WorkerTarget("fast", "n1", FAST, 110, 2)
    default = WorkerTarget("default", "n3", DEFAULT, 110, 2)
    plan = OverheadPlan(
        (fast, default), (0, 10, 30), 30.0, {"fast": 60.0, "default": 330.0}, "fast"
    )
    cells = [(t.worker, n, crashing) for t, n, crashing in plan.cells()]
    assert cells == [
        ("fast", 0, False),
        ("fast", 10, False),
        ("default", 10, True),
        ("fast", 10, True),
        ("fast", 30, False),
        ("default", 30, True),
        ("fast", 30, True),
    ]
    assert fast.room == 108


def test_with_three_workers_no_cell_follows_one_on_its_own_node() -> None:
    targets = (
        WorkerTarget("fast", "n1", FAST, 110, 2),
        WorkerTarget("reduced", "n2", FAST, 110, 2),
        WorkerTarget("default", "n3", DEFAULT, 110, 2),
    )
    windows = {"fast": 180.0, "reduced": 180.0, "default": 330.0}
    plan = OverheadPlan(targets, (0, 10, 108), 30.0, windows, "fast")
    nodes = [t.node for t, _, _ in plan.cells()]
    assert all(a != b for a, b in itertools.pairwise(nodes[1:])), nodes
    per_count = [(t.worker, crashing) for t, n, crashing in plan.cells() if n == 10]
    assert per_count == [("fast", False), ("reduced", True), ("fast", True), ("default", True)]


def test_one_worker_alone_runs_its_baseline_then_its_crashing_cells() -> None:
    fast = WorkerTarget("fast", "n1", FAST, 110, 2)
    plan = OverheadPlan((fast,), (0, 10), 30.0, {"fast": 180.0}, "fast")
    cells = [(t.worker, n, crashing) for t, n, crashing in plan.cells()]
    assert cells == [("fast", 0, False), ("fast", 10, False), ("fast", 10, True)]


def test_only_a_few_pods_per_cell_are_watched_and_the_baseline_writes_no_heartbeat() -> None:
    crashing = [overhead_pod("fast", "r", "img", i, crashing=True) for i in range(5)]
    sampled = [p for p in crashing if p["metadata"]["labels"].get(SAMPLED_LABEL) == "true"]
    assert len(sampled) == SAMPLED_PODS
    args = overhead_pod("fast", "r", "img", 0, crashing=False)["spec"]["containers"][0]["args"]
    assert args[-2:] == ["--termination-log", ""]


def _request(**changes: object) -> OverheadRequest:
    asked: dict[str, object] = {
        "workers": ["fast", "default"],
        "pods": "0,10,full",
        "duration_s": None,
        "warmup_s": 30.0,
        **changes,
    }
    spec = load_cluster_spec(spec_path("crashloop"))
    return check_overhead_request(spec, **asked)  # type: ignore[arg-type]


def test_a_request_is_checked_against_the_spec_before_any_cluster_exists() -> None:
    request = _request()
    assert request.counts == (0, 10, None)
    with pytest.raises(HarnessError, match=r"unknown worker\(s\) \['slow'\]") as unknown:
        _request(workers=["fast", "slow"])
    assert "fast, reduced, default" in unknown.value.fix
    with pytest.raises(HarnessError, match="do not fit one node"):
        _request(pods="10,500")
    with pytest.raises(HarnessError, match="too short to see one capped restart"):
        _request(duration_s=90.0)  # the default worker caps at 300s
    assert _request(workers=["fast"], duration_s=90.0).duration_s == 90.0
    with pytest.raises(HarnessError, match="negative"):
        _request(warmup_s=-1.0)
