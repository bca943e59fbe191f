"""``summary.json`` on disk: written atomically, read back checking every field.

Read with one typed reader for every dataclass of the summary (a pydantic
TypeAdapter of :class:`RunSummary`): strict about the schema version and the
fields' types, tolerant of fields newer harnesses added (ignored) and of
fields older ones did not write yet (their defaults), so a report or a
flakiness series can read runs of older and newer versions alike.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from crashloop_harness.core.atomicfile import write_atomically
from crashloop_harness.outputs.summary import (
    READABLE_SCHEMA_VERSIONS,
    SUMMARY_FILE,
    RunSummary,
    SummaryError,
)


def write_summary(run_dir: Path, summary: RunSummary) -> Path:
    """Write ``<run_dir>/summary.json`` atomically; returns its path."""
    return write_atomically(Path(run_dir) / SUMMARY_FILE, summary.to_json().encode("utf-8"))


@cache
def _reader() -> TypeAdapter[RunSummary]:
    return TypeAdapter(RunSummary)


def read_summary(path: Path) -> RunSummary:
    """Read a summary.json (or the one in a run directory), checking every field."""
    path = Path(path)
    if path.is_dir():
        path = path / SUMMARY_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise SummaryError(
            f"no run summary at {path}",
            "the run may still be going or was killed before it finished; "
            "its attempts.jsonl holds what it measured",
        ) from error
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SummaryError(f"{path} is not readable JSON: {error}") from error
    try:
        return summary_from(raw)
    except SummaryError as error:
        raise SummaryError(f"{path}: {error.problem}", error.fix) from error


def summary_from(raw: Any) -> RunSummary:
    """A RunSummary from summary.json's parsed JSON; SummaryError naming the first bad field."""
    if not isinstance(raw, dict):
        raise SummaryError(f"summary: expected an object, got {type(raw).__name__}")
    version = raw.get("schema_version")
    if version not in READABLE_SCHEMA_VERSIONS:
        raise SummaryError(
            f"schema_version {version}, this harness reads "
            f"{', '.join(map(str, READABLE_SCHEMA_VERSIONS))}",
            "read it with the harness version that wrote it",
        )
    # A summary written before the table of bounds was carried used none of
    # today's: read it as carrying none, not as the current table.
    raw = {"bounds": [], **raw}
    try:
        # Strict: "no" is not a boolean and 3 is not a string; JSON arrays are
        # still read as the tuples the dataclasses hold.
        return _reader().validate_json(json.dumps(raw), strict=True)
    except ValidationError as error:
        first = error.errors()[0]
        where = "summary" + "".join(
            f"[{part}]" if isinstance(part, int) else f".{part}" for part in first["loc"]
        )
        missing = first["type"] == "missing"
        message = "missing" if missing else first["msg"]
        # A dataclass's own check (kind, profile, status) reads as itself.
        if first["type"] == "value_error":
            message = str(first.get("ctx", {}).get("error", message))
        raise SummaryError(f"{where}: {message}") from error
