#!/usr/bin/env python3
"""Keep a matrix run as published data: docs/matrix/<name>.json, for `crashloop matrix --against`.

    scripts/keep-matrix.py runs/<id>-matrix-quick-<hex> v1.35.8-quick

Reads the run's matrix.json through the harness's own reader (a file it cannot
read is refused before anything is written) and writes it again with each
entry's run directory reduced to its run id: the published file names runs,
not the paths of the machine that made them. Beside it, docs/matrix/<name>.md
is its table as the docs show it (a unit test fails when the two drift).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "harness"))

from crashloop_harness.core.errors import HarnessError  # noqa: E402
from crashloop_harness.outputs.matrix import MATRIX_FILE, Matrix, markdown_table, read_matrix  # noqa: E402

KEPT = ROOT / "docs" / "matrix"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path, help="a matrix run's directory")
    parser.add_argument("name", help="the kept file's name, e.g. v1.35.8-quick")
    args = parser.parse_args()
    source = args.run_dir / MATRIX_FILE
    try:
        matrix = read_matrix(source)
    except HarnessError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    matrix.entries = [
        dataclasses.replace(entry, run_dir=Path(entry.run_dir).name) for entry in matrix.entries
    ]
    KEPT.mkdir(parents=True, exist_ok=True)
    target = KEPT / f"{args.name}.json"
    target.write_text(json.dumps(matrix.to_dict(), indent=2) + "\n", encoding="utf-8")
    table = target.with_suffix(".md")
    table.write_text(kept_table(matrix, target.name), encoding="utf-8")
    print(f"kept {source} as {target.relative_to(ROOT)}, its table as {table.relative_to(ROOT)}")
    return 0


def kept_table(matrix: Matrix, kept_as: str) -> str:
    """The kept matrix's table for the docs, naming its file and each release's run."""
    runs = ", ".join(f"{entry.version} `{entry.run_dir}`" for entry in matrix.entries)
    return (
        f"<!-- scripts/keep-matrix.py wrote this from {kept_as}; do not edit. -->\n"
        + markdown_table(matrix)
        # Linked as the docs pages that include it see it (docs/releases.md).
        + f"\nKept as [`matrix/{kept_as}`](matrix/{kept_as}); runs: {runs}.\n"
    )


if __name__ == "__main__":
    raise SystemExit(main())
