"""`crashloop fleet`: the plan printed from what the clusters' APIs said, nothing created."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crashloop_harness import cli
from crashloop_harness.cli import fleet as fleet_cli
from crashloop_harness.fleet.read import FleetRead
from tests.unit.fleet.test_plan import DEFAULT, node


@pytest.fixture
def fleet_read(monkeypatch: pytest.MonkeyPatch) -> None:
    read = FleetRead((node("n1"), node("n2", DEFAULT)), {"gone": "connection refused"})
    monkeypatch.setattr(fleet_cli, "chosen_contexts", lambda _kubeconfig, asked: ["one", "gone"])
    monkeypatch.setattr(fleet_cli, "read_fleet", lambda _kubeconfig, _contexts: read)


@pytest.mark.usefixtures("fleet_read")
def test_the_plan_names_each_group_its_check_and_the_unreachable_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = tmp_path / "fleet"
    code = cli.main(["fleet", "--kubeconfig", str(kubeconfig), "--plan", "-o", "json"])
    assert code == 1  # a cluster could not be read
    out = capsys.readouterr()
    plan = json.loads(out.out)
    assert [(g["group"], g["chosen"]) for g in plan["groups"]] == [("g1", ["n1"]), ("g2", ["n2"])]
    assert plan["groups"][0]["check"] == (
        f"crashloop check --kubeconfig {kubeconfig} --context one --nodes n1"
    )
    assert plan["unreachable"] == {"gone": "connection refused"}
    assert "error: context gone unreachable: connection refused" in out.err


@pytest.mark.usefixtures("fleet_read")
def test_without_plan_it_says_what_is_not_built_and_what_to_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(["fleet", "--kubeconfig", str(tmp_path / "fleet")])
    assert code != 0
    err = capsys.readouterr().err
    assert "not built yet" in err
    assert "--plan" in err
