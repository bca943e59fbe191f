"""Go duration parsing and display (crashloop_harness.model.durations)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from crashloop_harness.model.durations import (
    DurationError,
    format_duration,
    parse_duration,
    parse_duration_ns,
)

NS = 1
US = 1_000
MS = 1_000_000
S = 1_000_000_000
M = 60 * S
H = 60 * M


# Expected values follow Go's time.ParseDuration (including its float handling
# of long fractions), since metav1.Duration is decoded with it.
@pytest.mark.parametrize(
    ("text", "expected_ns"),
    [
        ("0", 0),
        ("-0", 0),
        ("+0", 0),
        ("0s", 0),
        ("2s", 2 * S),
        ("1500ms", 1500 * MS),
        ("1m30s", 90 * S),
        ("300s", 300 * S),
        ("0.5s", 500 * MS),
        ("1h", H),
        ("10ns", 10 * NS),
        ("11us", 11 * US),
        ("12\u00b5s", 12 * US),
        ("12\u03bcs", 12 * US),
        ("13ms", 13 * MS),
        ("15m", 15 * M),
        ("3h30m", 3 * H + 30 * M),
        ("10.5s4m", 4 * M + 10 * S + 500 * MS),
        ("-2m3.4s", -(2 * M + 3 * S + 400 * MS)),
        ("+5s", 5 * S),
        ("5.s", 5 * S),
        (".5s", 500 * MS),
        ("1.004s", 1004 * MS),
        ("100.00100s", 100 * S + 1 * MS),
        ("1h2m3s4ms5us6ns", H + 2 * M + 3 * S + 4 * MS + 5 * US + 6 * NS),
        ("39h9m14.425s", 39 * H + 9 * M + 14 * S + 425 * MS),
        ("1m0s", M),
        ("2m40s", 2 * M + 40 * S),
        ("5m0s", 5 * M),
        ("0.3333333333333333333h", 20 * M),
        ("0.830103483285477580700h", 49 * M + 48 * S + 372539827 * NS),
        ("9223372036854775807ns", 2**63 - 1),
        ("9223372036854775.807us", 2**63 - 1),
        ("-9223372036854775808ns", -(2**63)),
    ],
)
def test_parse_duration_ns_matches_go(text: str, expected_ns: int) -> None:
    assert parse_duration_ns(text) == expected_ns


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("-", "empty"),
        ("+", "empty"),
        ("abc", "a number is missing"),
        ("s", "a number is missing"),
        (".s", "a number is missing"),
        (".", "a number is missing"),
        ("2", "missing unit"),
        ("1.5", "missing unit"),
        ("1.5.5s", "missing unit"),
        ("2S", "unknown unit 'S'"),
        ("2sec", "unknown unit 'sec'"),
        ("2 s", "unknown unit ' s'"),
        (" 2s", "a number is missing"),
        ("2s ", "unknown unit 's '"),
        ("1d", "unknown unit 'd'"),
        ("--2s", "a number is missing"),
        ("9223372036854775808ns", "out of range"),
        ("-9223372036854775809ns", "out of range"),
        ("3000000h", "out of range"),
    ],
)
def test_parse_duration_rejects_what_go_rejects(text: str, reason: str) -> None:
    with pytest.raises(DurationError) as caught:
        parse_duration_ns(text)
    message = str(caught.value)
    assert repr(text) in message
    assert reason in message
    assert '"2s"' in message  # says what a valid value looks like
    assert caught.value.text == text


def test_duration_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="invalid duration 'abc'"):
        parse_duration("abc")


def test_parse_duration_rejects_non_strings() -> None:
    with pytest.raises(DurationError, match="expected a string, got int"):
        parse_duration_ns(2)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2s", timedelta(seconds=2)),
        ("1500ms", timedelta(milliseconds=1500)),
        ("-1.5s", timedelta(seconds=-1.5)),
        ("1us", timedelta(microseconds=1)),
        ("1999ns", timedelta(microseconds=1)),  # floored, not rounded
        ("999ns", timedelta(0)),
    ],
)
def test_parse_duration_gives_timedelta_floored_to_microseconds(
    text: str, expected: timedelta
) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (timedelta(0), "0s"),
        (timedelta(microseconds=7), "7\u00b5s"),
        (timedelta(milliseconds=500), "500ms"),
        (timedelta(microseconds=1500), "1.5ms"),
        (timedelta(seconds=1), "1s"),
        (timedelta(seconds=1.5), "1.5s"),
        (timedelta(seconds=2), "2s"),
        (timedelta(seconds=59, microseconds=1), "59.000001s"),
        (timedelta(seconds=60), "1m"),
        (timedelta(seconds=90), "1m30s"),
        (timedelta(seconds=160), "2m40s"),
        (timedelta(seconds=300), "5m"),
        (timedelta(seconds=600), "10m"),
        (timedelta(hours=1), "1h"),
        (timedelta(hours=1, seconds=5), "1h5s"),
        (timedelta(hours=26, minutes=3, seconds=0.25), "26h3m0.25s"),
        (timedelta(seconds=-2), "-2s"),
    ],
)
def test_format_duration(value: timedelta, expected: str) -> None:
    assert format_duration(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        timedelta(0),
        timedelta(microseconds=1),
        timedelta(microseconds=123_456),
        timedelta(seconds=1.5),
        timedelta(seconds=299.999),
        timedelta(seconds=3723.5),
        timedelta(seconds=-90),
    ],
)
def test_format_duration_output_parses_back(value: timedelta) -> None:
    assert parse_duration(format_duration(value)) == value
