"""The tolerances a verdict judges with, and how its messages write times (pure).

Every value comes from :mod:`crashloop_harness.model.bounds`, where its source is;
this module says what each does in the verdict.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Final

from crashloop_harness.model.bounds import BOUNDS
from crashloop_harness.model.durations import NS_PER_S, format_duration

# The values and their sources are in crashloop_harness.model.bounds; what each does here:
#
# Lower slack. The kubelet restarts only once time.Now() - finishedAt has
# reached the back-off, so the true delay is never short; the two ends are
# stamped by different processes on a wall clock NTP may slew.
CLOCK_ROUNDING: Final = BOUNDS["clock_rounding"].as_timedelta()

# The kubelet decides a reset by comparing the exit with the time it last
# advanced the back-off (just before creating the attempt), not with the
# attempt's startedAt, which comes later by the create/start time. A run this
# close to reset_after may or may not have reset the curve, so both readings
# are accepted there.
RESET_LEAD: Final = BOUNDS["reset_lead"].as_timedelta()

# From this back-off on, the kubelet's waiting message stays posted long
# enough (a status update, then the watch) to be seen before the restart, and
# the windows of neighbouring levels overlap near the caps: the reported level
# is required. Below it (the fast worker's 2s) the message may come and go
# between two status updates and only the delay is judged.
CONFIRM_FROM: Final = BOUNDS["confirm_from"].as_timedelta()

# The pod status carries the runtime's times truncated to whole seconds. A
# disagreement up to this is rounding; beyond it the record mixes up two
# attempts (or a source changed), and the evidence cannot be trusted.
API_ROUNDING: Final = BOUNDS["api_rounding"].as_timedelta()
# How far the workload's own report may sit from the runtime's times it stands
# in for: tests/e2e/test_existing_cluster.py holds every attempt within it.
SELF_REPORT_SLACK: Final = BOUNDS["self_report_max"].as_timedelta()
ZERO: Final = timedelta(0)

# Evidence a worker needs beyond each restart's own window. Below CONFIRM_FROM
# a level's window holds its neighbour's delays, so most restarts must show
# the kubelet's own level (judged once LEVEL_SHARE_FROM should have), and the
# restarts at the cap must not sit, in median, further past it than a sound
# kubelet's do (judged from CAP_MEDIAN_FROM of them).
LEVEL_SHARE_MIN: Final = BOUNDS["level_share_min"].as_fraction()
LEVEL_SHARE_FROM: Final = 4
CAP_MEDIAN_CONFIDENCE: Final = BOUNDS["cap_median_confidence"].as_fraction()
CAP_MEDIAN_FROM: Final = 5
# The kubelet's sync ticker: a requeued pod is synced at its first tick, so a
# restart at the cap may wait up to one tick past its requeue, on every restart
# alike when the pod's requeues fall just after the ticks.
SYNC_TICK_S: Final = BOUNDS["sync_tick"].as_seconds()

# How slow a node may be, against the reference host, before the levels its
# status writes carry fall behind its restarts (a missing level is then the
# node's), and before its windows can no longer tell a curve from its
# neighbour (its workers end in error). crashloop_harness.verdict.nodecost measures it.
SLOW_LEVELS_FROM: Final = BOUNDS["slow_levels_from"].as_ratio()
MAX_JUDGEABLE_SLOWDOWN: Final = BOUNDS["max_judgeable_slowdown"].as_ratio()
MAX_JUDGEABLE_PACE: Final = BOUNDS["max_judgeable_pace"].as_ratio()

# A reported back-off is Go duration text, parsed to microseconds and carried
# as float seconds; anything closer than this is the same value.
REPORTED_EPSILON_S: Final = BOUNDS["reported_level_epsilon"].as_seconds()


def secs(ns: int) -> str:
    return f"{ns / NS_PER_S:.3f}s"


def clock(ns: int) -> str:
    """A node-clock instant as a reader's clock time: "05:11:22.259 UTC", never epoch seconds."""
    # Rounded to the millisecond, as secs() rounds its seconds.
    whole_s, ms = divmod(round(ns / 1_000_000), 1000)
    return f"{datetime.fromtimestamp(whole_s, UTC):%H:%M:%S}.{ms:03d} UTC"


def dur(value: timedelta) -> str:
    return format_duration(value)
