#!/usr/bin/env python3
"""Write summary.schema.json and fleet.schema.json, the JSON Schemas of summary.json and
of a fleet's fleet.json, into the package's resources/schema/ (the wheel ships them;
docs/schema links there, so the docs site publishes the same files).

    scripts/summary-schema.py           # write it
    scripts/summary-schema.py --check   # exit 1 if it differs from the typed model

Generated from the dataclasses the harness writes and reads them with
(harness/crashloop_harness/outputs/summary.py and fleet/summary.py, each read through one
pydantic TypeAdapter), so the published schema is the reader's own contract; a unit test
fails when it drifts.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "harness"))

from pydantic import TypeAdapter  # noqa: E402

from crashloop_harness.fleet.summary import FLEET_SCHEMA_VERSION, FleetSummary  # noqa: E402
from crashloop_harness.outputs.summary import READABLE_SCHEMA_VERSIONS, RunSummary  # noqa: E402

SCHEMAS = ROOT / "harness" / "crashloop_harness" / "resources" / "schema"
SCHEMA = SCHEMAS / "summary.schema.json"
FLEET_SCHEMA = SCHEMAS / "fleet.schema.json"


def _document(model: object, name: str, what: str, versions: str) -> str:
    schema = TypeAdapter(model).json_schema(mode="validation")
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://crashloop-harness.invalid/schema/{name.removesuffix('.json')}.schema.json",
        "title": f"crashloop-harness {name}",
        "description": (
            f"{what} (scripts/summary-schema.py writes this from the harness's typed "
            f"model; schema_version {versions})."
        ),
        **{key: value for key, value in schema.items() if key != "title"},
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def render() -> str:
    versions = ", ".join(map(str, READABLE_SCHEMA_VERSIONS))
    return _document(RunSummary, "summary.json", "One run's verdict", versions)


def render_fleet() -> str:
    return _document(
        FleetSummary,
        "fleet.json",
        "One fleet's verdict, per cluster and group",
        str(FLEET_SCHEMA_VERSION),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    stale = 0
    for path, text in ((SCHEMA, render()), (FLEET_SCHEMA, render_fleet())):
        if args.check:
            if not path.is_file() or path.read_text() != text:
                print(f"{path} is out of date: run scripts/summary-schema.py", file=sys.stderr)
                stale = 1
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        print(f"wrote {path}")
    return stale


if __name__ == "__main__":
    sys.exit(main())
