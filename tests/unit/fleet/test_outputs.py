"""The fleet's result: fleet.json read back typed, JUnit a suite per cluster, the report's table."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from crashloop_harness.core.errors import HarnessError
from crashloop_harness.fleet.junitfile import write_fleet_junit
from crashloop_harness.fleet.report import write_fleet_report
from crashloop_harness.fleet.summary import (
    read_fleet_summary,
    write_fleet_summary,
)
from tests.unit.fleet.factories import summary


def test_an_outlier_fails_its_cluster_and_the_fleet_not_the_other_cluster() -> None:
    result = summary()
    verdicts = {c.cluster: c.verdict for c in result.clusters}
    assert verdicts == {"one": "failed", "two": "passed"}
    assert result.verdict == "failed"
    assert "node a2: failed (others in its group sound" in result.reason
    assert (result.wall_s, result.slowest_group_s, result.groups_sum_s) == (120.0, 100.0, 300.0)


def test_an_unreachable_cluster_is_its_error_beside_the_others(tmp_path: Path) -> None:
    result = summary(unreachable={"three": "connection refused"})
    three = next(c for c in result.clusters if c.cluster == "three")
    assert (three.verdict, three.reason) == ("error", "unreachable: connection refused")
    write_fleet_junit(tmp_path, result)
    suites = ET.parse(tmp_path / "junit.xml").getroot()
    errors = suites.findall("testsuite[@name='three']/testcase/error")
    assert [e.get("type") for e in errors] == ["unreachable"]


def test_fleet_json_reads_back_as_written_and_refuses_another_version(tmp_path: Path) -> None:
    result = summary()
    write_fleet_summary(tmp_path, result)
    assert read_fleet_summary(tmp_path) == result
    raw = json.loads((tmp_path / "fleet.json").read_text())
    raw["schema_version"] = 2
    (tmp_path / "fleet.json").write_text(json.dumps(raw))
    with pytest.raises(HarnessError, match="schema_version 2"):
        read_fleet_summary(tmp_path)


def test_a_bad_field_is_named(tmp_path: Path) -> None:
    raw = json.loads(summary().to_json())
    raw["groups"][0]["verdict"] = "fine"
    (tmp_path / "fleet.json").write_text(json.dumps(raw))
    with pytest.raises(HarnessError, match=r"fleet\.groups\[0\]\.verdict"):
        read_fleet_summary(tmp_path)


def test_junit_has_a_suite_per_cluster_and_a_case_per_group(tmp_path: Path) -> None:
    write_fleet_junit(tmp_path, summary())
    suites = ET.parse(tmp_path / "junit.xml").getroot()
    assert [s.get("name") for s in suites] == ["one", "two"]
    one = suites.find("testsuite[@name='one']")
    assert one is not None
    assert (one.get("tests"), one.get("failures"), one.get("errors")) == ("2", "1", "0")
    failure = one.find("testcase/failure")
    assert failure is not None
    assert failure.get("type") == "outlier"
    assert "node a2" in (failure.get("message") or "")


def test_the_reports_first_table_is_cluster_by_group(tmp_path: Path) -> None:
    write_fleet_report(tmp_path, summary())
    markdown = (tmp_path / "report.md").read_text()
    table = markdown.split("\n\n")[2].splitlines()
    assert table[0] == "| cluster | group | curve | nodes | checked | verdict | outliers |"
    assert table[2].startswith("| one | g1 | v1.35.8, back-off 2s, cap 2s")
    assert table[2].endswith("| 2 | a1, a2 | FAIL | a2 |")


def test_a_reached_cluster_with_no_node_to_check_is_an_error_never_a_pass(tmp_path: Path) -> None:
    """Every node of cluster three left out (cordoned, NotReady): nothing of it was checked."""
    result = summary(reached=("one", "two", "three"))
    three = next(c for c in result.clusters if c.cluster == "three")
    assert three.verdict == "error"
    assert three.reason.startswith("no node of it checked")
    write_fleet_junit(tmp_path, result)
    suites = ET.parse(tmp_path / "junit.xml").getroot()
    errors = suites.findall("testsuite[@name='three']/testcase/error")
    assert [e.get("type") for e in errors] == ["nothing-checked"]
