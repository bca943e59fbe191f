"""What a mutant run concluded, as data (mutants.json) and as a table."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final, Literal

from rich.table import Table

from crashloop_harness.core.atomicfile import write_atomically

MUTANTS_FILE: Final = "mutants.json"
SCHEMA_VERSION: Final = 1
Outcome = Literal["killed", "survived", "error", "interrupted"]


@dataclass(frozen=True)
class MutantResult:
    """What one mutant's check concluded."""

    name: str
    changes: str
    target: str
    outcome: Outcome
    expected: Outcome  # killed for a mutant, survived for the control
    # The first failure on the target worker, the restart it was at and how
    # long after the pods were created the check knew (None when survived).
    by: str | None
    restart: int | None
    decided_after_s: float | None
    controls_failed: tuple[str, ...]
    build_s: float
    kubelet_sha256: str
    check_run: str
    check_status: str

    @property
    def as_expected(self) -> bool:
        return self.outcome == self.expected


def mutants_document(
    results: Sequence[MutantResult], *, release: str, profile: str, status: str
) -> dict[str, object]:
    killable = [r for r in results if r.expected == "killed"]
    return {
        "schema_version": SCHEMA_VERSION,
        "release": release,
        "profile": profile,
        "status": status,
        "score": {
            "killed": sum(r.outcome == "killed" for r in killable),
            "of": len(killable),
            "control_survived": all(r.as_expected for r in results if r.expected == "survived"),
        },
        "mutants": [{**asdict(r), "as_expected": r.as_expected} for r in results],
    }


def write_mutants(run_dir: Path, document: dict[str, object]) -> Path:
    return write_atomically(
        run_dir / MUTANTS_FILE, (json.dumps(document, indent=2) + "\n").encode()
    )


def mutants_table(results: Sequence[MutantResult], profile: str) -> Table:
    table = Table(title=f"kubelet mutants, {profile} check")
    for column in ("mutant", "worker", "outcome", "restart", "after", "by", "build"):
        table.add_column(column)
    for r in results:
        outcome = r.outcome if r.as_expected else f"{r.outcome} (expected {r.expected})"
        table.add_row(
            r.name,
            r.target,
            outcome,
            "-" if r.restart is None else str(r.restart),
            "-" if r.decided_after_s is None else f"{r.decided_after_s:.0f}s",
            r.by or ("; ".join(r.controls_failed) or "-"),
            f"{r.build_s:.0f}s",
        )
    return table
