"""What a pool should run (--expect): parsed or refused with its form, judged over the nodes
read, and a pool that runs another curve failing the fleet apart from its kubelets."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from datetime import timedelta
from pathlib import Path

import pytest

from crashloop_harness.cli import app as cli
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.fleet.expect import judge_expectations, parse_expectation
from crashloop_harness.fleet.junitfile import write_fleet_junit
from crashloop_harness.fleet.report import write_fleet_report
from crashloop_harness.fleet.summary import (
    ClusterSummary,
    fleet_verdict,
    read_fleet_summary,
    write_fleet_summary,
)
from tests.unit.fleet.factories import DEFAULT, POOL, TWO_S, node, summary


def test_an_expectation_reads_its_label_value_and_curve() -> None:
    expectation = parse_expectation(f"{POOL}=batch:max=2s,initial=1s")
    assert (expectation.label, expectation.value) == (POOL, "batch")
    assert expectation.maximum == timedelta(seconds=2)
    assert expectation.initial == timedelta(seconds=1)
    # A label alone selects every node that carries it.
    assert parse_expectation("gpu:max=5m").value is None


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("pool=batch", "not a selector and a curve"),
        (":max=2s", "not a selector and a curve"),
        ("pool=batch:cap=2s", "'cap=2s' is not initial=D or max=D"),
        ("pool=batch:max=2", "invalid duration '2'"),
    ],
)
def test_a_malformed_expectation_is_refused_with_its_form(text: str, says: str) -> None:
    with pytest.raises(HarnessError, match=says) as refused:
        parse_expectation(text)
    assert "pool=batch:max=2s" in refused.value.fix


def test_a_pool_whose_nodes_run_another_curve_fails_its_expectation() -> None:
    nodes = [
        node("b1", DEFAULT, pool="batch"),
        node("b2", DEFAULT, pool="batch"),
        node("w1", TWO_S, pool="web"),
    ]
    batch, web, typo = judge_expectations(
        [
            parse_expectation(f"{POOL}=batch:max=2s"),
            parse_expectation(f"{POOL}=web:max=2s"),
            parse_expectation(f"{POOL}=bacth:max=2s"),
        ],
        nodes,
    )
    assert not batch.met
    assert batch.off == ("one/b1 runs max 5m", "one/b2 runs max 5m")
    assert "2 of 2 nodes run another curve" in batch.words
    assert web.met
    assert web.selected == 1
    assert not typo.met  # selects nothing: never a silent pass
    assert "no node selected" in typo.words


def test_an_unmet_expectation_fails_a_fleet_whose_clusters_passed() -> None:
    (unmet,) = judge_expectations(
        [parse_expectation(f"{POOL}=batch:max=2s")], [node("b1", DEFAULT, pool="batch")]
    )
    passed = [ClusterSummary("one", "passed", "1 groups passed", ("g1",), 1)]
    assert fleet_verdict(passed, interrupted=False) == (
        "passed",
        "every group of 1 clusters passed",
    )
    verdict, reason = fleet_verdict(passed, interrupted=False, expectations=[unmet])
    assert verdict == "failed"
    assert reason == unmet.words


def test_junit_fails_where_fleet_json_does_on_an_unmet_expectation(tmp_path: Path) -> None:
    """The expectations in fleet.json, its verdict and junit.xml agree: an unmet one is a
    failed fleet and a failure case, a met one a passed case."""
    judged = judge_expectations(
        [parse_expectation(f"{POOL}=batch:max=2s"), parse_expectation(f"{POOL}=web:max=2s")],
        [node("b1", DEFAULT, pool="batch"), node("w1", TWO_S, pool="web")],
    )
    passed = summary(reached=())
    verdict, reason = fleet_verdict(passed.clusters, False, judged)
    result = dataclasses.replace(passed, expectations=judged, verdict=verdict, reason=reason)
    assert result.verdict == "failed"
    write_fleet_summary(tmp_path, result)
    assert read_fleet_summary(tmp_path).expectations == judged
    write_fleet_junit(tmp_path, result)
    (suite,) = [
        s for s in ET.parse(tmp_path / "junit.xml").getroot() if s.get("name") == "expectations"
    ]
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    failed = suite.find("testcase/failure")
    assert failed is not None
    assert failed.get("message") == judged[0].words
    # The report a person reads lists them too, with the same words.
    write_fleet_report(tmp_path, result)
    markdown = (tmp_path / "report.md").read_text()
    assert "## Expectations" in markdown
    assert f"| {POOL}=batch:max=2s | 1 | FAIL | {judged[0].words} |" in markdown
    assert f"| {POOL}=web:max=2s | 1 | PASS | {judged[1].words} |" in markdown


def test_the_cli_refuses_a_malformed_expectation_before_reading_any_cluster(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = cli.main(["fleet", "--kubeconfig", "/nonexistent", "--expect", "pool=batch"])
    assert code == 2
    err = capsys.readouterr().err
    assert "--expect 'pool=batch'" in err
    assert "/nonexistent" not in err
