"""Go ``time.Duration`` text, read the way the kubelet reads it.

KubeletConfiguration fields such as ``crashLoopBackOff.maxContainerRestartPeriod``
are ``metav1.Duration`` values, which Go decodes with ``time.ParseDuration``; the
kubelet's own messages ("back-off 1m20s restarting ...") use ``Duration.String``.
Both are parsed here with Go's rules, so a value this module accepts is one the
kubelet accepts and a value it rejects is one the kubelet would refuse too.

Representation: :func:`parse_duration_ns` returns integer nanoseconds, exact like
Go. :func:`parse_duration` returns a :class:`datetime.timedelta`, which the rest
of the harness uses; timedelta stops at microseconds, so the nanosecond part is
floored away. Nothing the kubelet does with backoff depends on sub-microsecond
precision (its own range check works in whole milliseconds).
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Final

# Go accepts both the micro sign (U+00B5) and the Greek mu (U+03BC) for
# microseconds; a user copying from Go docs may paste either.
_UNIT_NS: Final[dict[str, int]] = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,
    "\u03bcs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3_600 * 1_000_000_000,
}

# time.Duration is an int64 count of nanoseconds; Go refuses anything larger.
_MAX_NS: Final = 2**63 - 1

# One component: digits with an optional fraction, then a unit. Go takes every
# character that is neither a digit nor "." as part of the unit, so "1sec" is
# an unknown unit "sec", not "1s" followed by junk; the pattern does the same.
_COMPONENT: Final = re.compile(r"(?P<whole>[0-9]*)(?:\.(?P<frac>[0-9]*))?(?P<unit>[^0-9.]*)")

_HINT: Final = 'write a Go duration such as "2s", "1500ms" or "1m30s" (units: ns, us, ms, s, m, h)'

# Runtime and kubelet times are Unix nanoseconds; durations are timedelta
# (microsecond precision). These two convert between them everywhere.
NS_PER_S: Final = 1_000_000_000
_NS_PER_US: Final = 1_000


def to_ns(value: timedelta) -> int:
    """A duration in whole nanoseconds (exact: timedelta holds microseconds)."""
    return value // timedelta(microseconds=1) * _NS_PER_US


_US_PER_MS: Final = 1_000
_US_PER_S: Final = 1_000_000
_S_PER_MIN: Final = 60
_S_PER_HOUR: Final = 3_600


class DurationError(ValueError):
    """A text is not a Go duration; the message names the text and the fix."""

    def __init__(self, text: str, reason: str) -> None:
        self.text = text
        self.reason = reason
        super().__init__(f"invalid duration {text!r}: {reason}; {_HINT}")


def parse_duration_ns(text: str) -> int:
    """Parse Go duration text into exact integer nanoseconds.

    Follows ``time.ParseDuration``: an optional sign, then one or more
    ``<number><unit>`` components ("1m30s", ".5s", "1.s"); the bare text "0"
    is the only value allowed without a unit; whitespace is not allowed.
    """
    if not isinstance(text, str):
        raise DurationError(repr(text), f"expected a string, got {type(text).__name__}")
    body = text
    negative = False
    if body[:1] in ("-", "+"):
        negative = body[0] == "-"
        body = body[1:]
    if body == "0":
        return 0
    if not body:
        raise DurationError(text, "empty")

    total = 0
    position = 0
    while position < len(body):
        match = _COMPONENT.match(body, position)
        # The pattern can match the empty string; treat that as "no number here".
        if match is None or match.end() == position:
            raise DurationError(text, f"unexpected {body[position]!r}")
        whole, frac, unit = match.group("whole"), match.group("frac"), match.group("unit")
        if not whole and not frac:
            # Go requires a digit before or after the point: "." and "s" alone fail.
            raise DurationError(text, "a number is missing before a unit")
        if not unit:
            raise DurationError(text, "missing unit")
        unit_ns = _UNIT_NS.get(unit)
        if unit_ns is None:
            raise DurationError(text, f"unknown unit {unit!r}")
        total += int(whole or "0") * unit_ns
        if frac:
            total += _fraction_ns(frac, unit_ns)
        position = match.end()

    limit = _MAX_NS + 1 if negative else _MAX_NS
    if total > limit:
        raise DurationError(text, "out of range for a Go time.Duration (about 292 years)")
    return -total if negative else total


def _fraction_ns(digits: str, unit_ns: int) -> int:
    """The nanoseconds of a fractional part, computed the way Go computes them.

    Go keeps only the leading digits that fit in an int64, then scales in
    float64 and truncates; doing the same keeps odd inputs such as
    "0.3333333333333333333h" bit-for-bit equal to the kubelet's reading.
    """
    value = 0
    kept = 0
    for char in digits:
        candidate = value * 10 + int(char)
        if candidate > _MAX_NS + 1:  # Go's bound here is 1<<63, not 1<<63 - 1
            break
        value = candidate
        kept += 1
    return int(float(value) * (float(unit_ns) / float(10**kept)))


def parse_duration(text: str) -> timedelta:
    """Parse Go duration text into a timedelta (nanoseconds floored to microseconds)."""
    return timedelta(microseconds=parse_duration_ns(text) // 1_000)


def format_duration(value: timedelta) -> str:
    """Short human text for a duration: "0s", "500ms", "1.5s", "1m30s", "5m", "1h".

    The result is itself valid Go duration text, so ``parse_duration`` round-trips
    it; zero parts are left out ("5m", not Go's "5m0s") because it is for people.
    """
    total_us = value // timedelta(microseconds=1)
    if total_us < 0:
        return "-" + format_duration(-value)
    if total_us == 0:
        return "0s"
    if total_us < _US_PER_MS:
        return f"{total_us}\u00b5s"
    if total_us < _US_PER_S:
        return f"{_decimal(total_us, _US_PER_MS)}ms"
    whole_s, rest_us = divmod(total_us, _US_PER_S)
    hours, rest_s = divmod(whole_s, _S_PER_HOUR)
    minutes, seconds = divmod(rest_s, _S_PER_MIN)
    parts = []
    if hours:
        parts.append(f"{hours}h")
    if minutes:
        parts.append(f"{minutes}m")
    if seconds or rest_us:
        parts.append(f"{_decimal(seconds * _US_PER_S + rest_us, _US_PER_S)}s")
    return "".join(parts)


def _decimal(count: int, per_unit: int) -> str:
    """``count / per_unit`` as exact decimal text without trailing zeros."""
    whole, rest = divmod(count, per_unit)
    if not rest:
        return str(whole)
    width = len(str(per_unit)) - 1
    return f"{whole}.{rest:0{width}d}".rstrip("0")
