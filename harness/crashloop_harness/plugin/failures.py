"""How a fixture fails: the harness's message and fix once, with no library noise under it."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import NoReturn

import pytest

from crashloop_harness.core.errors import HarnessError


def fail_with(error: HarnessError) -> NoReturn:
    """A fixture's error as pytest shows it: the harness's message and fix, once."""
    # from None: pytest would print the chain of causes (urllib3's among them) under it.
    raise pytest.fail.Exception(str(error), pytrace=False) from None


@contextlib.contextmanager
def quiet_retries() -> Iterator[None]:
    """urllib3 logs a warning per retry, which pytest prints under a fixture's error; the
    error says what failed, once."""
    logger = logging.getLogger("urllib3.connectionpool")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)
