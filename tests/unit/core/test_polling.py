"""The one wait on a condition (crashloop_harness.core.polling), on a fake clock."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from freezegun import freeze_time
from freezegun.api import FrozenDateTimeFactory

from crashloop_harness.core.polling import poll, poll_true
from tests.fakeclock import REAL_TIME_FOR


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[FrozenDateTimeFactory]:
    """A frozen clock that a wait's sleep moves on, so no test waits for real."""
    with freeze_time("2026-12-05 00:00:00", ignore=REAL_TIME_FOR) as frozen:
        assert isinstance(frozen, FrozenDateTimeFactory)
        monkeypatch.setattr(time, "sleep", frozen.tick)
        yield frozen


def test_poll_ends_at_the_first_accepted_reading(clock: FrozenDateTimeFactory) -> None:
    readings = iter([0, 1, 2, 3, 4])
    began = time.monotonic()
    polled = poll(lambda: next(readings), lambda count: count >= 3, within=60, every=2)
    assert polled.done
    assert polled.last == 3
    assert time.monotonic() - began == pytest.approx(6)  # three waits of 2 s


def test_poll_gives_up_after_its_timeout_with_the_last_reading(
    clock: FrozenDateTimeFactory,
) -> None:
    reads: list[float] = []

    def read() -> int:
        reads.append(time.monotonic())
        return len(reads)

    polled = poll(read, lambda count: count > 1000, within=10, every=1)
    assert not polled.done
    assert polled.last == len(reads)
    assert reads[-1] - reads[0] == pytest.approx(10)


def test_poll_true_stops_when_the_run_is_asked_to_stop(clock: FrozenDateTimeFactory) -> None:
    stop = threading.Event()
    reads = 0

    def check() -> bool:
        nonlocal reads
        reads += 1
        if reads == 3:
            stop.set()
        return False

    assert not poll_true(check, within=600, stop=stop)
    assert reads == 3


def test_an_exception_while_reading_ends_the_wait_as_itself(clock: FrozenDateTimeFactory) -> None:
    def read() -> bool:
        raise PermissionError("refused")

    with pytest.raises(PermissionError, match="refused"):
        poll_true(read, within=60)
