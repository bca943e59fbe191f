"""The version matrix: the same check on each pinned Kubernetes release, one after the other.

One release at a time (a 2-core machine judges one cluster's kubelets at a
time): its cluster (``crashloop-1-34``, ...) is brought up from its node image,
checked, and, unless kept, deleted before the next. matrix.json is rewritten
after every release, so an interrupted matrix keeps what it measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

from crashloop_harness.cluster import lifecycle
from crashloop_harness.cluster.profiles import load_cluster_spec
from crashloop_harness.core.errors import HarnessError, first_line
from crashloop_harness.core.pins import DEFAULT_KUBERNETES, KubernetesPin
from crashloop_harness.core.progress import Progress
from crashloop_harness.outputs.matrix import (
    Matrix,
    MatrixEntry,
    entry_of,
    matrix_of_runs,
    write_matrix,
)
from crashloop_harness.outputs.summary import (
    KIND_CONFORMANCE,
    SUMMARY_FILE,
    RunSummary,
    require_pooled_check,
)
from crashloop_harness.outputs.summaryfile import read_summary
from crashloop_harness.runs.check import run_check
from crashloop_harness.runs.checkprofiles import CheckProfile
from crashloop_harness.runs.lifecycle import new_run_dir

# matrix-delays.png / .svg beside matrix.json.
MATRIX_PLOT: Final = "matrix-delays"


def run_matrix(
    spec_path: Path,
    releases: Sequence[KubernetesPin],
    profile: CheckProfile,
    progress: Progress,
    *,
    keep_clusters: bool = False,
) -> tuple[Matrix, Path]:
    """Check every release in order; returns the matrix and the directory of matrix.json."""
    _run_id, matrix_dir = new_run_dir(f"matrix-{profile.name}")
    matrix = Matrix(profile=profile.name)
    for index, pin in enumerate(releases, start=1):
        progress(f"[{index}/{len(releases)}] Kubernetes {pin.version}")
        spec = load_cluster_spec(spec_path, pin)
        try:
            cluster = lifecycle.up(spec, progress)
        except HarnessError as error:
            matrix.entries.append(
                MatrixEntry(pin.version, spec.name, "", "error", f"cluster: {first_line(error)}")
            )
            write_matrix(matrix_dir, matrix)
            continue
        result = run_check(cluster, profile, progress)
        matrix.entries.append(entry_of(pin.version, result.written_summary(), result.run_dir))
        write_matrix(matrix_dir, matrix)
        _plot(matrix, matrix_dir)
        progress(f"Kubernetes {pin.version}: {result.status}; {result.run_dir}")
        if not keep_clusters and pin != DEFAULT_KUBERNETES:
            lifecycle.delete(spec.name, progress)
        elif not keep_clusters:
            # Said, not left silently: it keeps running beside the next release's cluster.
            progress(
                f"keeping cluster {spec.name} (the default release's, reused by the demo and "
                "the check); `crashloop down` deletes it"
            )
        if result.status == "interrupted":
            # Ctrl-C (or SIGTERM) ends the matrix, not just this release's check.
            break
    return matrix, matrix_dir


def matrix_from_runs(directories: Sequence[Path]) -> tuple[Matrix, Path]:
    """A matrix of the check runs found under ``directories`` (run nothing); written as above.

    Scenario runs are passed over: only a check judges a kubelet's curve. A
    check of another profile than quick or full (a demo, a drill) is refused
    by name: lined up beside the others it would pass for one of them.
    """
    runs: list[tuple[RunSummary, Path]] = []
    for directory in directories:
        if not directory.is_dir():
            raise HarnessError(
                f"{directory} is not a directory", "name directories that hold check runs"
            )
        for path in sorted(directory.rglob(SUMMARY_FILE)):
            summary = read_summary(path)
            if summary.kind == KIND_CONFORMANCE:
                require_pooled_check(summary, path.parent)
                runs.append((summary, path.parent))
    if not runs:
        raise HarnessError(
            f"no check run ({SUMMARY_FILE} of kind conformance) under "
            + ", ".join(map(str, directories)),
            "name the runs/ directories of finished checks (crashloop check or conformance)",
        )
    matrix = matrix_of_runs(runs)
    _run_id, matrix_dir = new_run_dir(f"matrix-{matrix.profile}")
    write_matrix(matrix_dir, matrix)
    _plot(matrix, matrix_dir)
    return matrix, matrix_dir


def _plot(matrix: Matrix, matrix_dir: Path) -> None:
    # Imported when drawn: matplotlib takes half a second to import, which every
    # command would otherwise pay at start-up (--help included).
    from crashloop_harness.outputs.plots import plot_matrix  # noqa: PLC0415

    plot_matrix(matrix, matrix_dir / MATRIX_PLOT)
