"""`crashloop fleet`: the plan printed from what the clusters' APIs said, nothing created."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from crashloop_harness import cli
from crashloop_harness.cli import fleet as fleet_cli
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.fleet.engine import CheckNodes
from crashloop_harness.fleet.judge import NodeOutcome, Round
from crashloop_harness.fleet.read import FleetRead
from crashloop_harness.fleet.summary import read_fleet_summary
from tests.unit.fleet.factories import DEFAULT, node


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


def _checks(failing: set[str]) -> Callable[..., CheckNodes]:
    def make(*_args: object, **_kwargs: object) -> CheckNodes:
        def check(context: str, nodes: tuple[str, ...], stop: threading.Event) -> Round:
            del context, stop
            outcomes: dict[str, NodeOutcome] = {
                n: "failed" if n in failing else "passed" for n in nodes
            }
            return Round(nodes, "r", "runs/r", "passed", "", outcomes)

        return check

    return make


@pytest.mark.usefixtures("fleet_read")
def test_without_plan_every_group_is_checked_and_the_fleet_judged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CRASHLOOP_RUNS_DIR", str(tmp_path / "runs"))
    asked: list[tuple[object, ...]] = []
    monkeypatch.setattr(fleet_cli, "refuse_what_cannot_run", lambda *a: asked.append(a))
    monkeypatch.setattr(fleet_cli, "remote_check", _checks(failing={"n2"}))
    code = cli.main(["fleet", "--kubeconfig", str(tmp_path / "fleet"), "--namespace", "ns"])
    assert code == 1
    assert asked == [(tmp_path / "fleet", ("one",), "ns")]
    err = capsys.readouterr().err
    assert "group one/g1: passed (1 of 1 nodes)" in err
    assert "group one/g2: failed (1 of 1 nodes)" in err
    fleet = read_fleet_summary(tmp_path / "runs" / "latest")
    assert [c.verdict for c in fleet.clusters] == ["error", "failed"]
    assert (tmp_path / "runs" / "latest" / "report.html").is_file()


@pytest.mark.usefixtures("fleet_read")
def test_a_refused_permission_stops_the_fleet_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_args: object) -> None:
        raise HarnessError("context one may not create pods (role crashloop-check)", "apply it")

    monkeypatch.setattr(fleet_cli, "refuse_what_cannot_run", refuse)
    monkeypatch.setattr(fleet_cli, "remote_check", lambda *a, **k: pytest.fail("checked"))
    code = cli.main(["fleet", "--kubeconfig", str(tmp_path / "fleet")])
    assert code == 2
    assert "role crashloop-check" in capsys.readouterr().err
