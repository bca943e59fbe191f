"""Notice a kubelet restart during a run.

Restarting the kubelet wipes its in-memory back-off state: restarts after it
start a fresh curve, and a verdict against the old curve would be wrong in a
way that looks like a kubelet bug. A run therefore records which kubelet
process served each node at its start and end, and refuses a verdict when one
changed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from crashloop_harness.core import timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.proc import run

ExecInNode = Callable[[str, list[str]], str]


@dataclass(frozen=True)
class KubeletProcess:
    """One kubelet process: its PID and when systemd saw it become active."""

    pid: int
    active_since_us: int


def parse_systemctl_show(text: str) -> KubeletProcess:
    """Read `systemctl show kubelet -p MainPID -p ActiveEnterTimestampMonotonic`."""
    values = dict(line.split("=", 1) for line in text.strip().splitlines() if "=" in line)
    try:
        return KubeletProcess(
            pid=int(values["MainPID"]), active_since_us=int(values["ActiveEnterTimestampMonotonic"])
        )
    except (KeyError, ValueError) as error:
        raise ValueError(f"unexpected `systemctl show kubelet` output: {text!r}") from error


def kubelet_process(node: str, exec_in_node: ExecInNode | None = None) -> KubeletProcess:
    argv = ["systemctl", "show", "kubelet", "-p", "MainPID", "-p", "ActiveEnterTimestampMonotonic"]
    if exec_in_node is not None:
        return parse_systemctl_show(exec_in_node(node, argv))
    return parse_systemctl_show(run(["docker", "exec", node, *argv], timeout=timeouts.NODE_EXEC))


def snapshot(nodes: list[str]) -> dict[str, KubeletProcess | None]:
    """The kubelet process of every node; None where it could not be read."""
    found: dict[str, KubeletProcess | None] = {}
    for node in nodes:
        try:
            found[node] = kubelet_process(node)
        except (HarnessError, ValueError):
            found[node] = None
    return found


@dataclass(frozen=True)
class KubeletChanges:
    """How the kubelets differ between a run's start and end.

    ``restarted``: a new process (or one that could not be identified) wiped
    the back-off state, so no verdict against the old curve holds: the run is
    an error. ``stopped``: the kubelet exited and nothing replaced it; the
    containers it should have restarted were not, which the verdict reports
    as the kubelet's failure (an overdue restart), never as a pass.
    """

    restarted: tuple[str, ...] = ()
    # node -> what is said of its kubelet
    stopped: dict[str, str] = field(default_factory=dict)


def changes_between(
    before: Mapping[str, KubeletProcess | None], after: Mapping[str, KubeletProcess | None]
) -> KubeletChanges:
    """What happened to every node's kubelet during the run."""
    restarted: list[str] = []
    stopped: dict[str, str] = {}
    for node, first in before.items():
        last = after.get(node)
        if first is None or last is None:
            restarted.append(f"the kubelet of node {node} could not be identified before and after")
        elif first.pid != 0 and last.pid == 0:
            stopped[node] = (
                f"the kubelet of node {node} stopped during the run (pid {first.pid} exited) "
                "and was not restarted"
            )
        elif first != last:
            restarted.append(
                f"the kubelet of node {node} restarted during the run (pid {first.pid} -> "
                f"{last.pid}): its back-off state was wiped, so later restarts follow a new curve"
            )
    return KubeletChanges(tuple(restarted), stopped)
