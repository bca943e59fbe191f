"""The expected CrashLoopBackOff curve of a kubelet (v1.35 unless a release is given).

A pure model of ``newCrashLoopBackOff`` (pkg/kubelet/kubelet.go) and the
client-go ``flowcontrol.Backoff`` it builds, driven by a kubelet config: either
the live one (``GET /api/v1/nodes/<node>/proxy/configz``) or a
KubeletConfiguration document. Nothing here reads files or the network.

Curve parameters:

* start from initial 10s, maximum 300s;
* gate ``ReduceDefaultCrashLoopBackOffDecay`` on: initial 1s, maximum 60s;
* gate ``KubeletCrashLoopBackOffMax`` on: maximum = ``crashLoopBackOff.
  maxContainerRestartPeriod`` (defaulted to 300s when unset), and the initial
  delay is lowered to the maximum when the maximum is smaller (never raised).

Restart #1 after the first exit is immediate; restart #n (n >= 2) waits
``min(initial * 2**(n-2), maximum)`` after the previous container finished. A
run longer than 600s resets the curve.

Tolerance (what the verdict may accept as "on the curve"): the kubelet does not
restart at the exact expiry. For a nominal backoff ``B`` the true delay ``D`` is

    B <= D <= B + 0.5 * min(B, 60s) + 1.5s

because v1.35 requeues the pod worker at the expiry plus up to half the backoff
(bounded by the 1 min sync frequency), then a 1s sync ticker picks the pod up
and creating and starting the container adds 0.1-0.5s (the 1.5s term). Before
v1.35 the pod worker looks again every 10-15s whatever the backoff, so
``B <= D <= B + 15s + 1.5s`` (:mod:`crashloop_harness.model.releases`). Restart #1
(``B = 0``) is bounded by :data:`FIRST_RESTART_UPPER_BOUND` instead. Each of
these numbers, and where it comes from (a kubelet source line, a measured run,
or neither), is in :mod:`crashloop_harness.model.bounds`; the harness exists to check
them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Final, cast

from crashloop_harness.model.bounds import BOUNDS
from crashloop_harness.model.durations import format_duration, parse_duration
from crashloop_harness.model.kubeletconfig import (
    KubeletBackoffConfig,
    KubeletConfigError,
    kubelet_rejections,
)
from crashloop_harness.model.releases import (
    AT_EXPIRY,
    DEFAULT_RELEASE,
    KUBELET_CRASHLOOP_BACKOFF_MAX,
    REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY,
    KubeletRelease,
    Requeue,
)

DEFAULT_INITIAL: Final = timedelta(seconds=10)
DEFAULT_MAXIMUM: Final = timedelta(seconds=300)
REDUCED_INITIAL: Final = timedelta(seconds=1)
REDUCED_MAXIMUM: Final = timedelta(seconds=60)
# Before v1.35 the pod worker looks at a container in back-off again every
# 10-15s (Jitter(10s, 0.5)), whatever its back-off.
PERIODIC_RETRY_MAX: Final = BOUNDS["periodic_retry_max"].as_timedelta()
# A container that ran longer than this before exiting starts a fresh curve;
# flat 10 minutes in 1.35 (older kubelets used 2 x maximum).
RESET_AFTER: Final = timedelta(seconds=600)
# Backoff entries not touched for this long are garbage-collected.
FORGET_AFTER: Final = timedelta(seconds=600)

# The upper window's terms; their values and sources are in crashloop_harness.model.bounds.
# Restart #1, which waits no back-off:
FIRST_RESTART_UPPER_BOUND: Final = BOUNDS["first_restart_upper_bound"].as_timedelta()
# The pod worker is requeued up to this fraction of the backoff after expiry...
REQUEUE_FRACTION: Final = BOUNDS["requeue_fraction"].as_fraction()
# ...of a backoff counted at most up to the kubelet's 1 min sync frequency.
REQUEUE_CAP: Final = BOUNDS["requeue_cap"].as_timedelta()
# The 1s sync ticker until the requeued pod is picked up, then the container's creation.
RESTART_OVERHEAD: Final = BOUNDS["restart_overhead"].as_timedelta()

# The generic PLEG's relist: how long an exit may go unnoticed before restart 1.
PLEG_RELIST_PERIOD: Final = BOUNDS["pleg_relist_period"].as_timedelta()
# The sync loop's ticker, a timer inside RESTART_OVERHEAD; the rest of it is work.
SYNC_TICK: Final = BOUNDS["sync_tick"].as_timedelta()
# What a restart's own work (the sync, the container's creation) costs on the
# reference host: RESTART_OVERHEAD less the tick's wait.
RESTART_WORK: Final = RESTART_OVERHEAD - SYNC_TICK


@dataclass(frozen=True)
class CostAllowance:
    """What a restart may cost its node on top of the kubelet's wait.

    ``after_requeue`` is added to a waited back-off and its jitter;
    ``first_restart`` bounds a restart that waits none. :data:`UNMEASURED` is
    the reference host's (the sources' terms, restart 1 at a flat bound): for
    a run that measured no cost of its own. :meth:`scaled` is a node measured
    ``slowdown`` times slower than the reference (crashloop_harness.verdict.nodecost).
    """

    after_requeue: timedelta = RESTART_OVERHEAD
    first_restart: timedelta = FIRST_RESTART_UPPER_BOUND
    slowdown: float = 1.0
    measured: bool = False
    # Whether its timers stay as the source names them and only the work is scaled
    # (:meth:`paced`); otherwise every term scales alike (:meth:`scaled`).
    timers_apart: bool = False

    def work(self, *, first: bool) -> timedelta:
        """The part of a term that is work, which a slower node does slower: all of it but
        the timers a paced allowance holds apart (restart 1's PLEG relist and the sync
        tick; the sync tick after a waited back-off)."""
        if not self.timers_apart:
            return self.first_restart if first else self.after_requeue
        if first:
            return self.first_restart - PLEG_RELIST_PERIOD - SYNC_TICK
        return self.after_requeue - SYNC_TICK

    @classmethod
    def scaled(cls, slowdown: float) -> CostAllowance:
        """Every term times ``slowdown``: for a node measured by its restarts that wait no
        back-off (runs recorded before pace probes), whose ratio holds the timers too."""
        if slowdown < 1.0:
            raise ValueError(f"a node's slowdown is never below the reference's, got {slowdown}")
        return cls(
            after_requeue=RESTART_OVERHEAD * slowdown,
            first_restart=(PLEG_RELIST_PERIOD + RESTART_OVERHEAD) * slowdown,
            slowdown=slowdown,
            measured=True,
        )

    @classmethod
    def paced(cls, pace: float, *, to_start: timedelta = timedelta(0)) -> CostAllowance:
        """The allowance on a node whose work runs ``pace`` times slower than the reference
        host's, measured beside the kubelet (crashloop_harness.recording.pace).

        Timers do not slow with the node: the PLEG's relist and the sync loop's tick
        fire on the clock (their source lines in bounds.py), so they stay as they are
        and only the work (RESTART_WORK) scales. The same as :meth:`scaled` at 1x;
        narrower on a slow node, so a kubelet off its curve does not hide in timers
        widened by the node's pace. ``to_start``: what a delay holds past the creation
        when it runs to the container's start (read through the API alone, with no
        creation time): the runtime's start, work too.
        """
        if pace < 1.0:
            raise ValueError(f"a node's pace is never below the reference's, got {pace}")
        work = (RESTART_WORK + to_start) * pace
        return cls(
            after_requeue=SYNC_TICK + work,
            first_restart=PLEG_RELIST_PERIOD + SYNC_TICK + work,
            slowdown=pace,
            measured=True,
            timers_apart=True,
        )


UNMEASURED: Final = CostAllowance()

# kuberuntime: "back-off %s restarting failed container=%s pod=%s".
_BACKOFF_MESSAGE: Final = re.compile(r"\bback-off (?P<duration>\S+) restarting failed container=")


@dataclass(frozen=True)
class BackoffCurve:
    """Delays the kubelet waits before each restart of one container.

    Restarts are numbered from 1 (the first restart after the first exit).
    """

    initial: timedelta
    maximum: timedelta
    reset_after: timedelta = RESET_AFTER
    # How the kubelet comes back to a container whose back-off expired: it
    # decides how late a restart may be (see upper_tolerance).
    requeue: Requeue = AT_EXPIRY

    def __post_init__(self) -> None:
        if self.initial <= timedelta(0):
            raise ValueError(f"initial backoff must be positive, got {self.initial}")
        if self.maximum < self.initial:
            raise ValueError(
                f"maximum backoff {self.maximum} is below the initial {self.initial}; "
                "the kubelet lowers the initial delay to the maximum"
            )
        if self.reset_after <= timedelta(0):
            raise ValueError(f"reset_after must be positive, got {self.reset_after}")

    def delay_before_restart(self, n: int) -> timedelta:
        """The nominal wait before restart #n, counted from the previous exit."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"restart numbers start at 1, got {n!r}")
        if n == 1:
            # The backoff entry is only created on the first restart (#133472).
            return timedelta(0)
        # Integer microseconds keep a huge n from overflowing timedelta.
        initial_us = self.initial // timedelta(microseconds=1)
        maximum_us = self.maximum // timedelta(microseconds=1)
        doubled_us = initial_us << min(n - 2, maximum_us.bit_length())
        return timedelta(microseconds=min(doubled_us, maximum_us))

    def upper_tolerance(
        self, nominal: timedelta, allowance: CostAllowance = UNMEASURED
    ) -> timedelta:
        """The longest true delay consistent with a nominal back-off on this kubelet."""
        return upper_tolerance(nominal, self.requeue, allowance)

    def expected_reported_backoff(self, n: int) -> timedelta | None:
        """The level in ``state.waiting.message`` while waiting for restart #n.

        None for restart #1, which does not wait and so shows no back-off message.
        """
        delay = self.delay_before_restart(n)
        return delay if n >= 2 else None

    def delays(self, count: int) -> list[timedelta]:
        """Nominal delays before restarts 1..count."""
        if count < 0:
            raise ValueError(f"count must not be negative, got {count}")
        return [self.delay_before_restart(n) for n in range(1, count + 1)]

    def restarts_until_cap(self) -> int:
        """The number of the first restart that waits the full maximum."""
        n = 2
        while self.delay_before_restart(n) < self.maximum:
            n += 1
        return n

    def describe(self) -> str:
        """Short text such as "0s, 2s, 2s, ... (initial 2s, max 2s)"."""
        shown = ", ".join(format_duration(d) for d in self.delays(self.restarts_until_cap() + 1))
        return (
            f"{shown}, ... (initial {format_duration(self.initial)}, "
            f"max {format_duration(self.maximum)}, "
            f"reset by a run over {format_duration(self.reset_after)})"
        )


def curve_for(
    config: KubeletBackoffConfig, release: KubeletRelease = DEFAULT_RELEASE
) -> BackoffCurve:
    """The curve a kubelet of ``release`` with this config uses.

    Raises KubeletConfigError for a config the kubelet would refuse to start with,
    since no curve exists for it. Unknown gates are not checked here; use
    :func:`validate_config`.
    """
    rejections = kubelet_rejections(config, release)
    if rejections:
        problem = rejections[0]
        raise KubeletConfigError(problem.field, f"{problem.message}; {problem.fix}")
    initial, maximum = DEFAULT_INITIAL, DEFAULT_MAXIMUM
    if config.gate_enabled(REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY, release):
        initial, maximum = REDUCED_INITIAL, REDUCED_MAXIMUM
    configured = config.effective_max_period(release)
    if config.gate_enabled(KUBELET_CRASHLOOP_BACKOFF_MAX, release) and configured is not None:
        maximum = configured
        initial = min(initial, maximum)
    return BackoffCurve(initial=initial, maximum=maximum, requeue=release.requeue)


def parse_backoff_message(message: str) -> timedelta | None:
    """The back-off level in a kubelet ``state.waiting.message``, or None.

    None means the message is not a CrashLoopBackOff message. A message that is
    one but carries an unreadable duration raises DurationError: that would mean
    the kubelet changed its format, which the harness must report, not skip.
    """
    match = _BACKOFF_MESSAGE.search(message)
    if match is None:
        return None
    return parse_duration(match.group("duration"))


def upper_tolerance(
    nominal: timedelta, requeue: Requeue = AT_EXPIRY, allowance: CostAllowance = UNMEASURED
) -> timedelta:
    """The longest true delay still consistent with a nominal backoff (see module doc).

    The kubelet's wait (the back-off and the jitter its release allows, from
    source) plus what the restart may cost its node (``allowance``).
    """
    if nominal < timedelta(0):
        raise ValueError(f"a backoff cannot be negative, got {nominal}")
    if nominal == timedelta(0):
        return allowance.first_restart
    if requeue == AT_EXPIRY:
        return nominal + min(nominal, REQUEUE_CAP) * REQUEUE_FRACTION + allowance.after_requeue
    return nominal + PERIODIC_RETRY_MAX + allowance.after_requeue


def curve_fields(curve: BackoffCurve) -> dict[str, float | str]:
    """A curve as plain values (seconds, the requeue's name), for traces and summaries."""
    return {
        "initial_s": curve.initial.total_seconds(),
        "maximum_s": curve.maximum.total_seconds(),
        "reset_after_s": curve.reset_after.total_seconds(),
        "requeue": curve.requeue,
    }


def curve_from_fields(fields: Mapping[str, object]) -> BackoffCurve:
    """The curve :func:`curve_fields` wrote; ValueError names a field that is missing or wrong."""
    try:
        return BackoffCurve(
            initial=timedelta(seconds=float(str(fields["initial_s"]))),
            maximum=timedelta(seconds=float(str(fields["maximum_s"]))),
            reset_after=timedelta(seconds=float(str(fields["reset_after_s"]))),
            requeue=cast(Requeue, str(fields["requeue"])),
        )
    except KeyError as error:
        raise ValueError(f"a curve without {error}") from error
