"""What a check judges: a worker's bare container, or a variant beside it (pure).

A subject is named ``<worker>`` or ``<worker>/<variant>`` wherever a run is
written down (summary.json, JUnit, the tables); this module is the one place
that writes or reads that name. The variants' names live here too, because the
verdict's coverage (which rule a variant shows) and the check's profiles (what
each variant runs, crashloop_harness.runs.checkprofiles) both need them, and
the model is the floor both stand on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

_SEPARATOR: Final = "/"
# Each attempt runs 5 s: the back-off counts from the exit (runs beside every worker).
RUNS_5S: Final = "runs-5s"
# Three quick crashes, then one attempt past the 600 s reset threshold, and its control.
RESET_610S: Final = "reset-610s"
CONTROL_590S: Final = "control-590s"
RESET_VARIANTS: Final = (RESET_610S, CONTROL_590S)


@dataclass(frozen=True, order=True)
class Subject:
    """One judged container: its worker, and the variant beside it (None: the bare one)."""

    worker: str
    variant: str | None = None

    def __post_init__(self) -> None:
        if not self.worker or _SEPARATOR in self.worker:
            raise ValueError(f"a worker is named without {_SEPARATOR!r}, got {self.worker!r}")
        if self.variant is not None and (not self.variant or _SEPARATOR in self.variant):
            raise ValueError(f"a variant is named without {_SEPARATOR!r}, got {self.variant!r}")

    @classmethod
    def parse(cls, name: str) -> Subject:
        """The subject a written name stands for."""
        worker, separator, variant = name.partition(_SEPARATOR)
        return cls(worker, variant if separator else None)

    @property
    def bare(self) -> bool:
        """Whether it is the worker's own crashing container, not a variant beside it."""
        return self.variant is None

    def beside(self, variant: str) -> Subject:
        """The subject of ``variant`` beside this one's worker."""
        return Subject(self.worker, variant)

    def __str__(self) -> str:
        return self.worker if self.variant is None else f"{self.worker}{_SEPARATOR}{self.variant}"


def is_bare(name: str) -> bool:
    """Whether a written subject name is a worker's bare container."""
    return Subject.parse(name).bare


def worker_of(name: str) -> str:
    """The worker a written subject name belongs to."""
    return Subject.parse(name).worker
