"""The one node command: every command run in a kind node is built in one module."""

from __future__ import annotations

import re
from pathlib import Path

from crashloop_harness.cluster.nodecommand import node_argv

PACKAGE = Path(__file__).resolve().parents[3] / "harness" / "crashloop_harness"
# The node image's build runs commands in a build container, not a cluster's node.
NOT_A_NODE = {"substrate/nodeimage/assemble.py"}


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


def test_no_other_module_writes_the_node_command() -> None:
    pattern = re.compile(r"""["']docker["'],\s*["']exec["']""")
    writers = {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if pattern.search(path.read_text(encoding="utf-8"))
    }
    assert writers - NOT_A_NODE == {"cluster/nodecommand.py"}
