"""A kubelet config as far as it shapes the back-off, and what its kubelet would refuse (pure).

Built from the live ``/configz`` or a KubeletConfiguration document; the
kubelet's defaulting is applied when a gate or the field is read, on a given
release (:mod:`crashloop_harness.model.releases`), never stored. :func:`validate_config`
lists everything a kubelet of that release would refuse to start with, each
with its fix.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

from crashloop_harness.model.durations import DurationError, format_duration, parse_duration
from crashloop_harness.model.releases import (
    ALL_ALPHA,
    ALL_BETA,
    DEFAULT_RELEASE,
    KUBELET_CRASHLOOP_BACKOFF_MAX,
    REDUCE_DEFAULT_CRASHLOOP_BACKOFF_DECAY,
    KubeletRelease,
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

# What the kubelet defaults maxContainerRestartPeriod to while its gate is on.
DEFAULT_MAX_CONTAINER_RESTART_PERIOD: Final = timedelta(seconds=300)
# The kubelet's validation range, compared in whole (truncated) milliseconds.
MAX_CONTAINER_RESTART_PERIOD_MIN_MS: Final = 1_000
MAX_CONTAINER_RESTART_PERIOD_MAX_MS: Final = 300_000
_MAX_PERIOD_FIELD: Final = "crashLoopBackOff.maxContainerRestartPeriod"


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
        + kubelet_rejections(config, release)
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
        "release belongs in harness/crashloop_harness/model/releases.py once the model handles it",
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


def kubelet_rejections(
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
