"""The published JSON Schema of summary.json is the typed reader's own, and kept runs meet it."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

from tests.unit.scripts import load_script

ROOT = Path(__file__).resolve().parents[3]


def _script() -> ModuleType:
    return load_script("summary-schema")


def test_the_published_schema_is_the_model_s() -> None:
    script = _script()
    assert script.SCHEMA.read_text() == script.render(), "run scripts/summary-schema.py"


def test_the_schema_names_what_a_reader_relies_on() -> None:
    schema = json.loads(_script().render())
    required = set(schema["required"])
    assert {"run_id", "status", "cluster", "workers"} <= required
    assert schema["properties"]["status"]["enum"] == ["passed", "failed", "interrupted", "error"]
    # The live config keeps the kubelet's own field names.
    assert "maxContainerRestartPeriod" in schema["$defs"]["LiveConfig"]["properties"]


def test_the_published_fleet_schema_is_the_model_s_and_names_its_table() -> None:
    script = _script()
    assert script.FLEET_SCHEMA.read_text() == script.render_fleet(), "run scripts/summary-schema.py"
    schema = json.loads(script.render_fleet())
    assert {"fleet_id", "verdict", "clusters", "groups"} <= set(schema["required"])
    group = schema["$defs"]["GroupSummary"]["properties"]
    assert group["verdict"]["enum"] == ["passed", "outlier", "failed", "error"]
