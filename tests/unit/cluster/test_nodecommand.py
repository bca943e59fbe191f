"""The one node command: every command run in a kind node is built in one module."""

from __future__ import annotations

import re
from pathlib import Path
from typing import cast

import pytest
from kubernetes import client

from crashloop_harness.cluster.nodecommand import node_argv
from crashloop_harness.cluster.target import API_ONLY, NODE_ACCESS
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.recording.norecorder import NoRecorder
from crashloop_harness.runs.liverun import LiveRun

PACKAGE = Path(__file__).resolve().parents[3] / "harness" / "crashloop_harness"


def test_a_command_in_a_node_is_docker_exec_with_its_options() -> None:
    assert node_argv("n1", ["cat", "/x"]) == ["docker", "exec", "n1", "cat", "/x"]
    assert node_argv("n1", ["bash"], stdin=True, env={"A": "1"}) == [
        "docker",
        "exec",
        "-i",
        "-e",
        "A=1",
        "n1",
        "bash",
    ]


def test_no_other_module_writes_the_engine_s_exec() -> None:
    """A kind node's commands and the node image's build container's alike."""
    pattern = re.compile(r"""["']docker["'],\s*["']exec["']""")
    writers = {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if pattern.search(path.read_text(encoding="utf-8"))
    }
    assert writers == {"core/containerexec.py"}


def test_a_cluster_reached_through_its_api_alone_refuses_what_it_lacks() -> None:
    assert NODE_ACCESS.node_command
    assert NODE_ACCESS.restart_kubelet
    live = LiveRun(cast(client.CoreV1Api, None), "ns", "run", "img", {"fast": "n1"}, NoRecorder())
    live.capabilities = API_ONLY
    with pytest.raises(HarnessError) as refused:
        live.restart_kubelet("fast")
    assert refused.value.problem == (
        "this cluster cannot restart a kubelet: it is reached through its API alone"
    )
    assert "harness's own cluster" in refused.value.fix
