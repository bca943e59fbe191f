"""Every matrix kept in docs/matrix/ reads back, and its table in the docs is its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from crashloop_harness.outputs.matrix import read_matrix
from tests.unit.scripts import ROOT, load_script

KEPT = sorted((ROOT / "docs" / "matrix").glob("*.json"))


def test_there_are_kept_matrices() -> None:
    assert KEPT, "docs/matrix/ holds no kept matrix.json"


@pytest.mark.parametrize("kept", KEPT, ids=lambda path: path.name)
def test_a_kept_matrix_names_runs_not_paths(kept: Path) -> None:
    matrix = read_matrix(kept)
    assert matrix.entries
    for entry in matrix.entries:
        assert "/" not in str(entry.run_dir), f"{entry.version}: {entry.run_dir} is a path"


@pytest.mark.parametrize("kept", KEPT, ids=lambda path: path.name)
def test_the_docs_table_is_the_kept_matrix(kept: Path) -> None:
    table = kept.with_suffix(".md")
    expected = load_script("keep-matrix").kept_table(read_matrix(kept), kept.name)
    assert table.exists(), f"run scripts/keep-matrix.py again: {table.name} is missing"
    assert table.read_text(encoding="utf-8") == expected, (
        f"{table.name} drifted from {kept.name}: write it again with scripts/keep-matrix.py"
    )
