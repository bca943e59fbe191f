"""The version matrix: one check per Kubernetes release, side by side (pure, plus matrix.json).

Each release's check is judged on its own (its kubelet's release decides the
tolerance); this module lines the runs up: per release and worker the first
delays, the median delay, overshoot median and max and the reported back-off
levels, and the behaviour changes between adjacent releases found in the data
(for example "fast, 1.34 -> 1.35: median delay 12.6s -> 2.9s").
"""

from __future__ import annotations

import itertools
import json
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

from packaging.version import Version
from pydantic import TypeAdapter, ValidationError

from crashloop_harness.core.atomicfile import write_atomically
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.version import produced_by
from crashloop_harness.outputs.summary import RunSummary, WorkerSummary

MATRIX_FILE: Final = "matrix.json"
FIRST_DELAYS: Final = 6
# A change in a worker's median delay between adjacent releases is reported
# when it is this large, both absolutely and relative to the smaller one:
# below it the difference is the noise one release shows from run to run.
CHANGE_ABSOLUTE_S: Final = 2.0
CHANGE_RELATIVE: Final = 0.5

# matrix.json's layout; bumped when a field changes meaning or goes.
MATRIX_SCHEMA_VERSION: Final = 1


@dataclass(frozen=True)
class WorkerLine:
    """One worker on one release, as the matrix shows it."""

    worker: str
    passed: bool
    restarts: int
    first_delays_s: tuple[float | None, ...]
    median_delay_s: float | None  # over restarts that waited
    overshoot_median_s: float | None
    overshoot_max_s: float | None
    reported_levels_s: tuple[float, ...]  # distinct back-off levels the kubelet posted
    delays_s: tuple[float | None, ...] = ()  # every restart's measured delay, restart 1 first


@dataclass(frozen=True)
class MatrixEntry:
    """One release's check: where it ran, how it ended, each worker."""

    version: str
    cluster: str
    run_dir: str
    status: str
    reason: str
    workers: tuple[WorkerLine, ...] = ()


@dataclass
class Matrix:
    """Every release's entry, in version order, and what changed between neighbours."""

    profile: str
    entries: list[MatrixEntry] = field(default_factory=list)

    @property
    def changes(self) -> list[str]:
        return behaviour_changes(self.entries)

    @property
    def passed(self) -> bool:
        return bool(self.entries) and all(e.status == "passed" for e in self.entries)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": MATRIX_SCHEMA_VERSION,
            **produced_by(),
            "profile": self.profile,
            "passed": self.passed,
            "entries": [asdict(entry) for entry in self.entries],
            "changes": self.changes,
        }


def worker_line(worker: WorkerSummary) -> WorkerLine:
    waited = [
        c.measured_s
        for c in worker.checks
        if c.measured_s is not None and c.expected_s > 0 and not c.error
    ]
    reported = sorted({c.reported_s for c in worker.checks if c.reported_s is not None})
    return WorkerLine(
        worker=worker.worker,
        passed=worker.passed,
        restarts=len(worker.checks),
        first_delays_s=tuple(worker.measured_s[:FIRST_DELAYS]),
        median_delay_s=statistics.median(waited) if waited else None,
        overshoot_median_s=worker.overshoot_median_s,
        overshoot_max_s=worker.overshoot_max_s,
        reported_levels_s=tuple(reported),
        delays_s=tuple(worker.measured_s),
    )


def entry_of(version: str, summary: RunSummary, run_dir: Path) -> MatrixEntry:
    return MatrixEntry(
        version=version,
        cluster=summary.cluster.name,
        run_dir=str(run_dir),
        status=summary.status,
        reason=summary.reason,
        workers=tuple(worker_line(w) for w in summary.workers),
    )


def matrix_of_runs(runs: Sequence[tuple[RunSummary, Path]]) -> Matrix:
    """A matrix of check runs already made (one per release), in release order.

    The nightly workflow runs each release in a job of its own; this lines
    their summaries up as one matrix. Runs of one release beyond the first are
    kept too, in the order given: a release checked twice shows twice.
    """
    ordered = sorted(runs, key=lambda run: _version_key(run[0].cluster.kubernetes_version))
    profiles = sorted({summary.profile for summary, _ in ordered})
    matrix = Matrix(profile="+".join(profiles) or "none")
    for summary, run_dir in ordered:
        matrix.entries.append(entry_of(summary.cluster.kubernetes_version, summary, run_dir))
    return matrix


def moved_beyond_noise(before_s: float, after_s: float) -> bool:
    """Whether a median delay moved by more than run-to-run noise: both far enough in seconds
    and as a share of the smaller."""
    apart = abs(before_s - after_s)
    return apart >= CHANGE_ABSOLUTE_S and apart >= CHANGE_RELATIVE * min(before_s, after_s)


def behaviour_changes(entries: Sequence[MatrixEntry]) -> list[str]:
    """Per worker, the median-delay changes between adjacent releases that exceed the noise."""
    return [
        f"{worker}, {_minor(before.version)} -> {_minor(after.version)}: "
        f"median delay {a:.1f}s -> {b:.1f}s"
        for before, after in itertools.pairwise(entries)
        for worker, a, b in medians_moved(before, after)
    ]


def medians_moved(before: MatrixEntry, after: MatrixEntry) -> list[tuple[str, float, float]]:
    """(worker, median before, median after) for each worker whose median delay moved beyond
    the noise between two entries; a worker either did not measure is passed over."""
    old = {line.worker: line for line in before.workers}
    moved = []
    for line in after.workers:
        was = old.get(line.worker)
        if was is None or was.median_delay_s is None or line.median_delay_s is None:
            continue
        if moved_beyond_noise(was.median_delay_s, line.median_delay_s):
            moved.append((line.worker, was.median_delay_s, line.median_delay_s))
    return moved


def table_rows(matrix: Matrix) -> list[tuple[str, ...]]:
    """release, worker, result, restarts, first delays, median, overshoot median/max, levels."""
    rows: list[tuple[str, ...]] = []
    for entry in matrix.entries:
        if not entry.workers:
            rows.append((entry.version, "-", entry.status, "-", entry.reason[:60], "", "", ""))
        for line in entry.workers:
            rows.append(
                (
                    entry.version,
                    line.worker,
                    "pass" if line.passed else entry.status if entry.status != "passed" else "FAIL",
                    str(line.restarts),
                    ", ".join(_s(d) for d in line.first_delays_s),
                    _s(line.median_delay_s),
                    f"{_s(line.overshoot_median_s)} / {_s(line.overshoot_max_s)}",
                    ", ".join(f"{level:g}" for level in line.reported_levels_s),
                )
            )
    return rows


TABLE_HEADERS: Final = (
    "release",
    "worker",
    "result",
    "restarts",
    "first delays (s)",
    "median delay (s)",
    "overshoot median / max (s)",
    "reported levels (s)",
)


def markdown_table(matrix: Matrix) -> str:
    """The table and the behaviour changes as GitHub-flavoured Markdown (a job summary)."""
    lines = [
        f"### Version matrix ({matrix.profile} check): "
        f"{'passed' if matrix.passed else 'NOT passed'}",
        "",
        "| " + " | ".join(TABLE_HEADERS) + " |",
        "|" + "---|" * len(TABLE_HEADERS),
    ]
    lines += [
        "| " + " | ".join(cell.replace("|", "/") for cell in row) + " |"
        for row in table_rows(matrix)
    ]
    lines += ["", "Behaviour changes between adjacent releases:", ""]
    lines += [f"- {change}" for change in matrix.changes] or ["- none beyond the run-to-run noise"]
    return "\n".join(lines) + "\n"


def write_matrix(directory: Path, matrix: Matrix) -> Path:
    return write_atomically(
        directory / MATRIX_FILE, json.dumps(matrix.to_dict(), indent=2).encode("utf-8")
    )


def _minor(version: str) -> str:
    return ".".join(version.lstrip("v").split(".")[:2])


def _version_key(version: str) -> Version:
    """v1.34.11, 1.34 or v1.38.0-beta.0 in release order (a pre-release before its release)."""
    return Version(version.lstrip("v"))


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def read_matrix(path: Path) -> Matrix:
    """A matrix.json read back (a kept one under docs/matrix/, or a run's); HarnessError naming
    the file and its first bad field."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise HarnessError(
            f"{path} is not a readable matrix.json: {error}",
            "name a matrix.json a matrix run wrote, or one kept under docs/matrix/",
        ) from error
    if not isinstance(raw, dict) or raw.get("schema_version", 1) != MATRIX_SCHEMA_VERSION:
        raise HarnessError(
            f"{path}: not a matrix.json of layout {MATRIX_SCHEMA_VERSION}",
            "read it with the harness version that wrote it",
        )
    try:
        entries = _ENTRIES.validate_python(raw.get("entries"), strict=False)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise HarnessError(f"{path}: entries.{where}: {first['msg']}") from error
    return Matrix(profile=str(raw.get("profile", "")), entries=list(entries))


_ENTRIES: Final = TypeAdapter(list[MatrixEntry])


def against(published: Matrix, new: Matrix) -> list[str]:
    """What moved between a published matrix and a new one, release minor by minor and worker
    by worker: a result that changed, a median delay beyond the noise, a release only one has."""

    def by_minor(matrix: Matrix) -> dict[str, MatrixEntry]:
        return {_minor(entry.version): entry for entry in matrix.entries}

    old, now = by_minor(published), by_minor(new)
    moved: list[str] = []
    for minor in sorted(set(old) | set(now), key=_version_key):
        before, after = old.get(minor), now.get(minor)
        if before is None or after is None:
            side = "the new run" if before is None else "the published matrix"
            moved.append(f"{minor}: only in {side}")
            continue
        if before.status != after.status:
            moved.append(
                f"{minor}: {before.status} ({before.version}) -> {after.status} ({after.version})"
            )
        moved += [
            f"{minor} {worker}: median delay {a:.1f}s -> {b:.1f}s"
            for worker, a, b in medians_moved(before, after)
        ]
    return moved
