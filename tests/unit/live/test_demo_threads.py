"""The demo's observing threads hand back what they ended with, a result or an exception."""

from __future__ import annotations

import threading

import pytest

from crashloop_harness.live.demo import Latest, in_thread


def test_a_threads_result_comes_back_through_its_future() -> None:
    future = in_thread("t", lambda: 42)
    assert future.result(timeout=5) == 42


def test_a_threads_exception_comes_back_through_its_future_not_lost_on_stderr() -> None:
    def broken() -> int:
        raise ValueError("a bug")

    future = in_thread("t", broken)
    with pytest.raises(ValueError, match="a bug"):
        future.result(timeout=5)


def test_the_future_is_done_only_when_the_work_is() -> None:
    release = threading.Event()
    future = in_thread("t", lambda: release.wait(5))
    assert not future.done()
    release.set()
    assert future.result(timeout=5) is True


def test_the_latest_sample_is_the_last_put() -> None:
    latest: Latest[int] = Latest()
    assert latest.get() is None
    latest.put(1)
    latest.put(2)
    assert latest.get() == 2
