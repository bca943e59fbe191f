"""The one error type users see: what went wrong and how to fix it."""

from __future__ import annotations


class HarnessError(Exception):
    """A failure the user can act on.

    ``problem`` says what is wrong, ``fix`` what to do about it. The CLI prints
    both and exits non-zero; pytest shows them as the failure reason.
    """

    def __init__(self, problem: str, fix: str = "") -> None:
        self.problem = problem
        self.fix = fix
        super().__init__(f"{problem}\n  fix: {fix}" if fix else problem)


def first_line(error: BaseException) -> str:
    """The first line of an error's message, or its type when it has none: for one-line reports."""
    text = str(error)
    return text.splitlines()[0] if text.strip() else type(error).__name__
