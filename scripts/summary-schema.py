#!/usr/bin/env python3
"""Write docs/schema/summary.schema.json, the JSON Schema of summary.json.

    scripts/summary-schema.py           # write it
    scripts/summary-schema.py --check   # exit 1 if it differs from the typed model

Generated from the dataclasses the harness writes and reads summary.json with
(harness/crashloop_harness/outputs/summary.py, read through one pydantic TypeAdapter), so the
published schema is the reader's own contract; a unit test fails when it drifts.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "harness"))

from pydantic import TypeAdapter  # noqa: E402

from crashloop_harness.outputs.summary import READABLE_SCHEMA_VERSIONS, RunSummary  # noqa: E402

SCHEMA = ROOT / "docs" / "schema" / "summary.schema.json"


def render() -> str:
    schema = TypeAdapter(RunSummary).json_schema(mode="validation")
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://crashloop-harness.invalid/schema/summary.schema.json",
        "title": "crashloop-harness summary.json",
        "description": (
            "One run's verdict (scripts/summary-schema.py writes this from the harness's typed "
            f"model; schema_version {', '.join(map(str, READABLE_SCHEMA_VERSIONS))})."
        ),
        **{key: value for key, value in schema.items() if key != "title"},
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = render()
    if args.check:
        if not SCHEMA.is_file() or SCHEMA.read_text() != text:
            print(f"{SCHEMA} is out of date: run scripts/summary-schema.py", file=sys.stderr)
            return 1
        return 0
    SCHEMA.parent.mkdir(parents=True, exist_ok=True)
    SCHEMA.write_text(text)
    print(f"wrote {SCHEMA}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
