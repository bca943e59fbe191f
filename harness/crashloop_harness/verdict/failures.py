"""A failure as a value: its rule's code, the restart it concerns, its numbers and its words.

Each check rule is declared once, where it is checked (``verdict/restart.py``,
``worker.py``, ``evidence.py``, ``apicheck.py``), with a code for CI rules and
dashboards and what its failure means to a reader. A failure carries its
rule's code beside the words the verdict wrote, so a JUnit case, a summary's
``failure_codes`` or the line printed under a failed run never have to read a
meaning back out of the words (Kubernetes' e2e framework keeps failures as
values for the same reason).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

# A failure whose rule is not known here: one read from a summary written before
# codes were kept per failure. Never a pass.
OTHER: Final = "other"
_RULES: dict[str, Rule] = {}


@dataclass(frozen=True)
class Failure:
    """One failure of a check: what a reader, a JUnit case and a dashboard each need.

    ``error``: the node's or the host's, not the kubelet's (a span the node was
    not observed, a node too slow to judge); the verdict is then an error.
    ``numbers``: the figures the words quote, by name, in seconds where a time.
    """

    code: str
    words: str
    restart: int | None = None
    error: bool = False
    numbers: dict[str, float] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.words

    @property
    def meaning(self) -> str | None:
        """What the failure means for a reader, from its rule; None for an unknown rule."""
        rule = _RULES.get(self.code)
        return None if rule is None else rule.meaning

    @property
    def names_restart(self) -> bool:
        """Whether it concerns one restart its rule names it by (see Rule.names_restart)."""
        rule = _RULES.get(self.code)
        return self.restart is not None and rule is not None and rule.names_restart

    def of(self, worker: str) -> Failure:
        """The same failure, its words naming the worker it belongs to."""
        return dataclasses.replace(self, words=f"{worker}: {self.words}")


@dataclass(frozen=True)
class Rule:
    """One check rule: its code and what a failure of it means. Declared where it is checked."""

    code: str
    meaning: str
    # A worker-level failure of this rule concerns one restart (an overdue one, a level
    # posted for it): its report case is named for that restart.
    names_restart: bool = False

    def __post_init__(self) -> None:
        if _RULES.setdefault(self.code, self) is not self:
            raise ValueError(f"two rules share the code {self.code!r}")

    def failed(
        self,
        words: str,
        *,
        restart: int | None = None,
        error: bool = False,
        numbers: Mapping[str, float] | None = None,
    ) -> Failure:
        return Failure(self.code, words, restart, error, dict(numbers or {}))


def rule_codes() -> frozenset[str]:
    """Every code a failure may carry (the rules declared so far, and ``other``)."""
    return frozenset({*_RULES, OTHER})
