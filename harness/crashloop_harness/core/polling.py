"""Asking again until an answer is right: every wait on a condition, one way.

Each wait of the harness reads something (a node's state, a pod count, an
engine's answer) on a fixed period until it is what the caller waits for, or
until its named timeout (crashloop_harness.core.timeouts) has passed, or until the run
is asked to stop. The caller gets the last reading either way, so the error it
raises can say what was still missing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from tenacity import (
    RetryError,
    Retrying,
    retry_if_result,
    stop_after_delay,
    stop_when_event_set,
    wait_fixed,
)
from tenacity.stop import stop_base

T = TypeVar("T")


@dataclass(frozen=True)
class Polled(Generic[T]):
    """How a wait ended: ``done`` when the last reading was the one waited for."""

    done: bool
    last: T


def poll(
    read: Callable[[], T],
    until: Callable[[T], bool],
    *,
    within: float,
    every: float = 1.0,
    stop: threading.Event | None = None,
) -> Polled[T]:
    """``read()`` every ``every`` seconds until ``until`` accepts its answer.

    Gives up after ``within`` seconds, or as soon as ``stop`` is set. An
    exception ``read`` raises is not retried: it ends the wait, as itself (a
    reading that may fail for a moment catches that and answers "not yet").
    """
    give_up: stop_base = stop_after_delay(within)
    if stop is not None:
        give_up = give_up | stop_when_event_set(stop)
    try:
        last = Retrying(
            stop=give_up,
            wait=wait_fixed(every),
            retry=retry_if_result(lambda answer: not until(answer)),
        )(read)
    except RetryError as error:
        return Polled(False, error.last_attempt.result())
    return Polled(True, last)


def poll_true(
    check: Callable[[], bool],
    *,
    within: float,
    every: float = 1.0,
    stop: threading.Event | None = None,
) -> bool:
    """``check()`` every ``every`` seconds until it answers True; False if it never did."""
    return poll(check, bool, within=within, every=every, stop=stop).done
