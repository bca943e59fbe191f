"""The one way into a kind node: a command run in its container (crashloop_harness.core.
containerexec writes the engine's command).

kind writes its node command once per provider (a node embeds ``exec.Cmder``);
so does this harness. Every reader, scenario and kubelet operation that runs a
command in a node builds it here, so a cluster whose nodes are reached some
other way replaces this module, not eight call sites in four packages. A
cluster reached through its API alone has no node command at all: its target
says so (crashloop_harness.cluster.target), and nothing here is asked of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from crashloop_harness.core import timeouts
from crashloop_harness.core.containerexec import exec_argv
from crashloop_harness.core.proc import run

# The host's argv that runs a command inside a node: the engine's exec (a node is a
# container), with stdin kept open for a long-lived reader and env set in the node.
node_argv: Final = exec_argv


def run_in_node(
    node: str,
    argv: Sequence[str],
    *,
    timeout: float = timeouts.NODE_EXEC,
    input_text: str | None = None,
) -> str:
    """Run ``argv`` in ``node`` and return its output; HarnessError (its output) on failure."""
    return run(
        node_argv(node, argv, stdin=input_text is not None),
        timeout=timeout,
        input_text=input_text,
    )
