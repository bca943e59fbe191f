"""The version matrix on real clusters: the quick check on each pinned release.

Marked ``matrix`` and run only when asked for (``pytest tests/e2e -m matrix``,
``make matrix``): every release needs its own node image (10-20 minutes to
build offline the first time) and cluster, one after the other. The default
e2e run stays on the default release.
"""

from __future__ import annotations

import itertools

import pytest

from crashloop_harness.core.pins import KubernetesPin
from crashloop_harness.core.resources import CLUSTERS_DIR
from crashloop_harness.outputs.matrix import MATRIX_FILE
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES
from crashloop_harness.runs.matrix import run_matrix

pytestmark = [pytest.mark.e2e, pytest.mark.crashloop_matrix, pytest.mark.slow]

# From source (shared/notes/kubelet-versions.md): before 1.35 the pod worker
# retries a container in back-off every 10-15 s, so the 2 s worker's median
# delay drops where the matrix steps from such a release to a later one. The
# matrix must find that in the data.
RETRY_EVERY_10_15S = frozenset({"1.33", "1.34"})


def _progress(message: str) -> None:
    print(f"[crashloop] {message}", flush=True)


def test_every_release_keeps_its_own_release_s_curve(
    crashloop_versions: list[KubernetesPin],
) -> None:
    releases = crashloop_versions
    matrix, where = run_matrix(
        CLUSTERS_DIR / "crashloop.yaml",
        releases,
        CHECK_PROFILES["quick"],
        _progress,
    )
    _progress(f"matrix: {where / MATRIX_FILE}")
    assert [entry.version for entry in matrix.entries] == [pin.version for pin in releases]
    not_passed = [
        f"{entry.version}: {entry.status} ({entry.reason or 'see ' + entry.run_dir})"
        for entry in matrix.entries
        if entry.status != "passed"
    ]
    assert not not_passed, f"releases that did not pass: {not_passed}"
    for before, after in itertools.pairwise(releases):
        if before.minor in RETRY_EVERY_10_15S and after.minor not in RETRY_EVERY_10_15S:
            expected = f"fast, {before.minor} -> {after.minor}: "
            assert any(change.startswith(expected) for change in matrix.changes), (
                f"the requeue change ({expected}...) is not in the data: {matrix.changes}"
            )
