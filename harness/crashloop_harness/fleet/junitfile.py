"""The fleet's JUnit XML: a suite per cluster, a case per group.

A group whose curve failed on its nodes, or that has an outlier node, is a
``<failure>`` (its type the group's verdict, its message the line that says
which); a group that could not be judged, and a cluster that could not be
reached, an ``<error>``. Each ``--expect`` is a case of an ``expectations`` suite,
a ``<failure>`` when not met, so the file fails where fleet.json does. Built from
the fleet summary alone.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Final

from crashloop_harness.core.atomicfile import write_atomically
from crashloop_harness.fleet.summary import FleetSummary, GroupSummary
from crashloop_harness.outputs.junit import xml_safe

FLEET_JUNIT_FILE: Final = "junit.xml"


def fleet_junit_element(summary: FleetSummary) -> ET.Element:
    suites = ET.Element("testsuites", name=xml_safe(f"crashloop-fleet {summary.fleet_id}"))
    for cluster in summary.clusters:
        suite = ET.SubElement(suites, "testsuite", name=xml_safe(cluster.cluster))
        suite.set("timestamp", summary.started_at)
        groups = [g for g in summary.groups if g.cluster == cluster.cluster]
        for group in groups:
            _add_group(suite, group)
        if not groups:
            case = ET.SubElement(suite, "testcase", classname="fleet", name="cluster")
            kind = "unreachable" if cluster.reason.startswith("unreachable") else "nothing-checked"
            ET.SubElement(case, "error", message=xml_safe(cluster.reason), type=kind)
        suite.set("tests", str(max(len(groups), 1)))
        _count(suite)
    if summary.expectations:
        suite = ET.SubElement(suites, "testsuite", name="expectations")
        suite.set("timestamp", summary.started_at)
        for judged in summary.expectations:
            case = ET.SubElement(
                suite, "testcase", classname="fleet.expect", name=xml_safe(judged.expectation)
            )
            if judged.met:
                ET.SubElement(case, "system-out").text = xml_safe(judged.words)
            else:
                ET.SubElement(
                    case, "failure", message=xml_safe(judged.words), type="expectation"
                ).text = xml_safe("\n".join(judged.off) or judged.words)
        suite.set("tests", str(len(summary.expectations)))
        _count(suite)
    return suites


def _count(suite: ET.Element) -> None:
    for tag in ("failures", "errors"):
        suite.set(tag, str(len(suite.findall(f"testcase/{tag.removesuffix('s')}"))))


def _add_group(suite: ET.Element, group: GroupSummary) -> None:
    case = ET.SubElement(
        suite,
        "testcase",
        classname=xml_safe(f"fleet.{group.cluster}"),
        name=xml_safe(f"{group.group}: {group.curve}"),
        time=f"{group.elapsed_s:.1f}",
    )
    runs = "\n".join(
        f"{r.run_dir or '(no run)'}: {r.status} {r.reason}".rstrip() for r in group.rounds
    )
    detail = f"{group.words}\nchecked {', '.join(group.checked) or 'none'}\n{runs}"
    if group.verdict in ("failed", "outlier"):
        ET.SubElement(
            case, "failure", message=xml_safe(group.words), type=group.verdict
        ).text = xml_safe(detail)
    elif group.verdict == "error":
        ET.SubElement(case, "error", message=xml_safe(group.words), type="error").text = xml_safe(
            detail
        )
    else:
        ET.SubElement(case, "system-out").text = xml_safe(detail)


def write_fleet_junit(fleet_dir: Path, summary: FleetSummary) -> Path:
    element = fleet_junit_element(summary)
    ET.indent(element)
    data = ET.tostring(element, encoding="utf-8", xml_declaration=True)
    return write_atomically(fleet_dir / FLEET_JUNIT_FILE, data)
