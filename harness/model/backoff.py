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
``B <= D <= B + 15s + 1.5s`` (:mod:`harness.model.releases`). Restart #1
(``B = 0``) is bounded by :data:`FIRST_RESTART_UPPER_BOUND` instead. These
bounds come from reading the code, not from measurement; the harness exists to
check them.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from harness.model.durations import DurationError, format_duration, parse_duration
from harness.model.releases import (
    ALL_ALPHA,
    ALL_BETA,
    AT_EXPIRY,
    DEFAULT_RELEASE,
    KUBELET_CRASHLOOP_BACKOFF_MAX,
    REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY,
    KubeletRelease,
    Requeue,
)

# The two gates that shape the curve.
BACKOFF_GATES: Final = (KUBELET_CRASHLOOP_BACKOFF_MAX, REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY)


def known_gates(release: KubeletRelease) -> frozenset[str]:
    """Feature gates a harness config may set on ``release``.

    Anything else is reported, because a misspelt gate is silently ignored by
    nobody but the harness's own model, and a gate the release lacks stops its
    kubelet ("unrecognized feature gate").
    """
    return frozenset(release.gates) | {ALL_ALPHA, ALL_BETA}


KNOWN_FEATURE_GATES: Final = known_gates(DEFAULT_RELEASE)

DEFAULT_INITIAL: Final = timedelta(seconds=10)
DEFAULT_MAXIMUM: Final = timedelta(seconds=300)
REDUCED_INITIAL: Final = timedelta(seconds=1)
REDUCED_MAXIMUM: Final = timedelta(seconds=60)
# What the kubelet defaults maxContainerRestartPeriod to while its gate is on.
DEFAULT_MAX_CONTAINER_RESTART_PERIOD: Final = timedelta(seconds=300)
# The kubelet's validation range, compared in whole (truncated) milliseconds.
MAX_CONTAINER_RESTART_PERIOD_MIN_MS: Final = 1_000
MAX_CONTAINER_RESTART_PERIOD_MAX_MS: Final = 300_000
# Before v1.35 the pod worker looks at a container in back-off again every
# 10-15s (Jitter(10s, 0.5)), whatever its back-off.
PERIODIC_RETRY_MAX: Final = timedelta(seconds=15)
# A container that ran longer than this before exiting starts a fresh curve;
# flat 10 minutes in 1.35 (older kubelets used 2 x maximum).
RESET_AFTER: Final = timedelta(seconds=600)
# Backoff entries not touched for this long are garbage-collected.
FORGET_AFTER: Final = timedelta(seconds=600)

# Upper bound of restart #1, which has no backoff: observed upstream at about
# 0.3-2s (pod worker wake-up plus container create/start); 3s leaves headroom
# without hiding a real 10s backoff.
FIRST_RESTART_UPPER_BOUND: Final = timedelta(seconds=3)
# The pod worker is requeued up to this fraction of the backoff after expiry...
REQUEUE_FRACTION: Final = 0.5
# ...of a backoff counted at most up to the kubelet's 1 min sync frequency.
REQUEUE_CAP: Final = timedelta(seconds=60)
# 1s sync ticker until the requeued pod is picked up, plus 0.1-0.5s to create
# and start the container.
RESTART_OVERHEAD: Final = timedelta(seconds=1.5)

_MAX_PERIOD_FIELD: Final = "crashLoopBackOff.maxContainerRestartPeriod"

# kuberuntime: "back-off %s restarting failed container=%s pod=%s".
_BACKOFF_MESSAGE: Final = re.compile(r"\bback-off (?P<duration>\S+) restarting failed container=")


class KubeletConfigError(ValueError):
    """A kubelet config field is malformed or would make the kubelet refuse to start."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.detail = message
        super().__init__(f"{field}: {message}")


@dataclass(frozen=True)
class ConfigProblem:
    """One thing wrong with a kubelet config, with the fix."""

    field: str
    message: str
    fix: str


@dataclass(frozen=True)
class KubeletBackoffConfig:
    """The parts of a kubelet config that shape the backoff curve, as written.

    ``feature_gates`` holds only the gates set explicitly (sorted by name), and
    ``max_container_restart_period`` is ``None`` when the field is unset; the
    kubelet's defaulting is applied by the properties, not stored.
    """

    feature_gates: tuple[tuple[str, bool], ...] = ()
    max_container_restart_period: timedelta | None = None

    @classmethod
    def from_configz(cls, payload: Mapping[str, Any]) -> KubeletBackoffConfig:
        """Build from the JSON of ``/api/v1/nodes/<node>/proxy/configz``."""
        inner = payload.get("kubeletconfig") if isinstance(payload, Mapping) else None
        if not isinstance(inner, Mapping):
            raise KubeletConfigError(
                "kubeletconfig",
                "missing or not an object; expected the JSON returned by "
                "GET /api/v1/nodes/<node>/proxy/configz",
            )
        return cls.from_kubelet_configuration(inner)

    @classmethod
    def from_kubelet_configuration(cls, doc: Mapping[str, Any]) -> KubeletBackoffConfig:
        """Build from a KubeletConfiguration document (no configz wrapper)."""
        return cls(
            feature_gates=_read_feature_gates(doc.get("featureGates")),
            max_container_restart_period=_read_max_period(doc.get("crashLoopBackOff")),
        )

    def explicit_gate(self, name: str) -> bool | None:
        """The value a gate is explicitly set to, or None."""
        return dict(self.feature_gates).get(name)

    def gate_enabled(self, name: str, release: KubeletRelease = DEFAULT_RELEASE) -> bool:
        """Whether a gate of ``release`` is on, as its kubelet resolves it.

        Set explicitly, else by its stage's pseudo-gate (AllAlpha, AllBeta),
        else its default; a locked gate is always its default.
        """
        gate = release.gates.get(name)
        if gate is None:
            raise ValueError(
                f"kubelet {release.name} has no feature gate {name!r}; "
                f"it has {', '.join(sorted(release.gates))}"
            )
        if gate.locked:
            return gate.default
        for source in (name, gate.stage_switch):
            value = self.explicit_gate(source) if source is not None else None
            if value is not None:
                return value
        return gate.default

    def effective_max_period(self, release: KubeletRelease = DEFAULT_RELEASE) -> timedelta | None:
        """The field after the kubelet's defaulting (300s while its gate is on)."""
        if self.max_container_restart_period is not None:
            return self.max_container_restart_period
        if self.gate_enabled(KUBELET_CRASHLOOP_BACKOFF_MAX, release):
            return DEFAULT_MAX_CONTAINER_RESTART_PERIOD
        return None

    @property
    def effective_max_container_restart_period(self) -> timedelta | None:
        """:meth:`effective_max_period` of the default release."""
        return self.effective_max_period()


def _read_feature_gates(raw: object) -> tuple[tuple[str, bool], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, Mapping):
        raise KubeletConfigError(
            "featureGates", f"expected a map of gate name to true/false, got {raw!r}"
        )
    gates = []
    for name, value in raw.items():
        # bool only: Go's map[string]bool rejects "true" strings and 0/1.
        if not isinstance(name, str) or not isinstance(value, bool):
            raise KubeletConfigError(
                f"featureGates.{name}", f"expected true or false, got {value!r}"
            )
        gates.append((name, value))
    return tuple(sorted(gates))


def _read_max_period(raw: object) -> timedelta | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise KubeletConfigError(
            "crashLoopBackOff",
            f"expected a map such as {{maxContainerRestartPeriod: 2s}}, got {raw!r}",
        )
    value = raw.get("maxContainerRestartPeriod")
    if value is None:
        return None
    if not isinstance(value, str):
        # metav1.Duration only decodes from a string; a bare 2 is not "2s".
        raise KubeletConfigError(
            _MAX_PERIOD_FIELD, f'expected a Go duration string such as "2s", got {value!r}'
        )
    try:
        return parse_duration(value)
    except DurationError as error:
        raise KubeletConfigError(_MAX_PERIOD_FIELD, str(error)) from error


def validate_config(
    config: KubeletBackoffConfig, release: KubeletRelease = DEFAULT_RELEASE
) -> tuple[ConfigProblem, ...]:
    """Everything wrong with a config on ``release``: unknown gates, then what it rejects."""
    known = known_gates(release)
    problems = [_unknown_gate_problem(name, known, release) for name, _ in config.feature_gates]
    return (
        tuple(p for p in problems if p is not None)
        + _gate_set_rejections(config, release)
        + _kubelet_rejections(config, release)
    )


def _unknown_gate_problem(
    name: str, known: frozenset[str], release: KubeletRelease
) -> ConfigProblem | None:
    if name in known:
        return None
    close = difflib.get_close_matches(name, sorted(known), n=1)
    hint = f'did you mean "{close[0]}"? ' if close else ""
    return ConfigProblem(
        field=f"featureGates.{name}",
        message=f"unknown feature gate {name!r}: kubelet {release.name} has no gate of that "
        "name and would not start",
        fix=f"{hint}gates of {release.name}: {', '.join(sorted(known))}; a gate of another "
        "release belongs in harness/model/releases.py once the model handles it",
    )


def _gate_set_rejections(
    config: KubeletBackoffConfig, release: KubeletRelease
) -> tuple[ConfigProblem, ...]:
    """Gate sets component-base refuses: a locked gate changed, a dependency disabled."""
    problems = []
    for name, value in config.feature_gates:
        gate = release.gates.get(name)
        if gate is not None and gate.locked and value != gate.default:
            problems.append(
                ConfigProblem(
                    field=f"featureGates.{name}",
                    message=f"{name} is GA and locked to {gate.default} in {release.name}; "
                    "the kubelet refuses to start",
                    fix=f"remove featureGates.{name}",
                )
            )
    for name, needs in release.dependencies.items():
        if not config.gate_enabled(name, release):
            continue
        off = [need for need in needs if not config.gate_enabled(need, release)]
        if off:
            problems.append(
                ConfigProblem(
                    field=f"featureGates.{name}",
                    message=f"{name} is enabled but depends on {', '.join(off)}, disabled in "
                    f"{release.name}; the kubelet refuses to start",
                    fix="also set " + ", ".join(f"featureGates.{gate}: true" for gate in off),
                )
            )
    return tuple(problems)


def _kubelet_rejections(
    config: KubeletBackoffConfig, release: KubeletRelease = DEFAULT_RELEASE
) -> tuple[ConfigProblem, ...]:
    """The kubelet's own validation of the field (it refuses to start on these)."""
    period = config.max_container_restart_period
    if period is None:
        return ()
    if not config.gate_enabled(KUBELET_CRASHLOOP_BACKOFF_MAX, release):
        return (
            ConfigProblem(
                field=_MAX_PERIOD_FIELD,
                message=f"set to {format_duration(period)} while feature gate "
                f"{KUBELET_CRASHLOOP_BACKOFF_MAX} is disabled in {release.name}; the kubelet "
                "refuses to start",
                fix=f"remove the field or set featureGates.{KUBELET_CRASHLOOP_BACKOFF_MAX}: true",
            ),
        )
    # Go's Duration.Milliseconds() truncates toward zero; floor matches it for
    # non-negative values and every negative value is out of range either way.
    millis = period // timedelta(milliseconds=1)
    if MAX_CONTAINER_RESTART_PERIOD_MIN_MS <= millis <= MAX_CONTAINER_RESTART_PERIOD_MAX_MS:
        return ()
    return (
        ConfigProblem(
            field=_MAX_PERIOD_FIELD,
            message=f"{format_duration(period)} is outside 1s..300s (inclusive, checked in "
            "milliseconds); the kubelet refuses to start",
            fix='use a value from "1s" to "300s", e.g. "2s", "1500ms" or "60s"',
        ),
    )


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

    def upper_tolerance(self, nominal: timedelta) -> timedelta:
        """The longest true delay consistent with a nominal back-off on this kubelet."""
        return upper_tolerance(nominal, self.requeue)

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
    rejections = _kubelet_rejections(config, release)
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


def upper_tolerance(nominal: timedelta, requeue: Requeue = AT_EXPIRY) -> timedelta:
    """The longest true delay still consistent with a nominal backoff (see module doc)."""
    if nominal < timedelta(0):
        raise ValueError(f"a backoff cannot be negative, got {nominal}")
    if nominal == timedelta(0):
        return FIRST_RESTART_UPPER_BOUND
    if requeue == AT_EXPIRY:
        return nominal + min(nominal, REQUEUE_CAP) * REQUEUE_FRACTION + RESTART_OVERHEAD
    return nominal + PERIODIC_RETRY_MAX + RESTART_OVERHEAD
