"""A fleet's reads: one node's unreadable config is that node's, and reads run at once."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from crashloop_harness.cluster.kube import NodeStatus
from crashloop_harness.cluster.liveconfig import NodeConfigRow
from crashloop_harness.fleet import read
from crashloop_harness.fleet.plan import plan_fleet
from tests.unit.factories import FAST

# Each read's latency on the fake API: long enough that reads in a row would show.
LATENCY_S = 0.05


def _status(name: str, version: str = "v1.35.8") -> NodeStatus:
    return NodeStatus(name=name, ready=True, kubelet_version=version, labels={})


def _row(name: str) -> NodeConfigRow:
    return NodeConfigRow(
        node=name,
        worker=name,
        profile=None,
        max_container_restart_period="2s",
        feature_gates={},
        curve=FAST,
        mismatches=(),
    )


@pytest.fixture
def fake_api(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Nodes n0..n39 on every context; n7's /configz answers 503; every read takes LATENCY_S."""
    in_flight = {"now": 0, "most": 0}
    lock = threading.Lock()

    def rows(_api: Any, nodes: Sequence[NodeStatus]) -> list[NodeConfigRow]:
        with lock:
            in_flight["now"] += 1
            in_flight["most"] = max(in_flight["most"], in_flight["now"])
        try:
            time.sleep(LATENCY_S)  # the fake API's latency, not a synchronisation
            (status,) = nodes
            if status.name == "n7":
                raise client.ApiException(status=503, reason="Service Unavailable")
            return [_row(status.name)]
        finally:
            with lock:
                in_flight["now"] -= 1

    monkeypatch.setattr(read, "remote_api", lambda *_: None)
    monkeypatch.setattr(read, "node_statuses", lambda _api: [_status(f"n{i}") for i in range(40)])
    monkeypatch.setattr(read, "live_rows", rows)
    return in_flight


def test_a_node_whose_config_cannot_be_read_is_left_out_and_its_cluster_planned(
    fake_api: dict[str, int],
) -> None:
    found = read.read_fleet(Path("kubeconfig"), ["one"])
    assert found.unreachable == {}
    plan = plan_fleet(found.nodes)
    reasons = {name: why for _, name, why in plan.skipped}
    assert set(reasons) == {"n7"}
    assert reasons["n7"].startswith("config not read: ")
    assert "503" in reasons["n7"]
    assert sum(len(g.nodes) for g in plan.groups) == 39


def test_nodes_and_contexts_are_read_at_once_within_their_bounds(
    fake_api: dict[str, int],
) -> None:
    started = time.monotonic()
    found = read.read_fleet(Path("kubeconfig"), [f"c{i}" for i in range(4)])
    took = time.monotonic() - started
    assert len(found.nodes) == 160
    # Reported, never a wall-clock limit: how many reads were in flight at once.
    print(f"[fleet read] 160 nodes over 4 contexts in {took:.2f}s, {fake_api['most']} at once")
    assert 1 < fake_api["most"] <= read.CONTEXTS_AT_ONCE * read.NODES_AT_ONCE


def test_two_contexts_of_one_cluster_are_read_once(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        """apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster: {server: "https://10.0.0.1:6443", certificate-authority-data: QUJD}
- name: prod-again
  cluster: {server: "https://10.0.0.1:6443", certificate-authority-data: QUJD}
- name: staging
  cluster: {server: "https://10.0.0.2:6443", certificate-authority-data: QUJD}
contexts:
- name: prod-admin
  context: {cluster: prod, user: admin}
- name: prod-ro
  context: {cluster: prod-again, user: reader}
- name: staging
  context: {cluster: staging, user: admin}
users: []
"""
    )
    assert read.aliases_of(kubeconfig, ["prod-admin", "prod-ro", "staging"]) == {
        "prod-ro": "prod-admin"
    }
