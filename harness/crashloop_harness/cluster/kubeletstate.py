"""Notice a kubelet restart during a run, and make one on purpose.

Restarting the kubelet wipes its in-memory back-off state: restarts after it
start a fresh curve, and a verdict against the old curve would be wrong in a
way that looks like a kubelet bug. A run therefore records which kubelet
process served each node at its start and end, and refuses a verdict when one
changed, unless the run itself restarted it (:func:`restart_kubelet`) and
the process found is the one its restart started.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from crashloop_harness.cluster.nodecommand import run_in_node
from crashloop_harness.core import timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.polling import poll_true

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
    return parse_systemctl_show(run_in_node(node, argv))


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
    before: Mapping[str, KubeletProcess | None],
    after: Mapping[str, KubeletProcess | None],
    made: Mapping[str, KubeletProcess] | None = None,
) -> KubeletChanges:
    """What happened to every node's kubelet during the run.

    ``made``: by node, the process a restart the run itself made started; that
    node is judged against it instead of its first process (a restart after it
    is still one). Until the node is read again it still shows its first one,
    which is no change either.
    """
    restarted: list[str] = []
    stopped: dict[str, str] = {}
    for node, found in before.items():
        last = after.get(node)
        ours = (made or {}).get(node)
        first = ours if ours is not None and last != found else found
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


@dataclass(frozen=True)
class KubeletRestart:
    """A restart of a node's kubelet that a run made on purpose.

    ``asked_ns``: when the restart was asked; ``active_ns``: when systemd
    said the new process active; ``back_ns``: when the new kubelet first
    answered its /healthz through the API server (None: not within the
    wait). Host clock, ns: a kind node's clock is the host's.
    """

    node: str
    before: KubeletProcess | None
    after: KubeletProcess | None
    asked_ns: int
    active_ns: int
    back_ns: int | None

    @property
    def restarted(self) -> bool:
        """A new kubelet process serves the node."""
        return self.after is not None and self.after.pid != 0 and self.after != self.before

    def describe(self) -> str:
        pids = f"pid {self.before.pid if self.before else '?'} -> " + (
            str(self.after.pid) if self.after else "?"
        )
        back = (
            f"answering /healthz {(self.back_ns - self.asked_ns) / 1e9:.1f}s after it was asked"
            if self.back_ns is not None
            else "not answering /healthz"
        )
        return f"the kubelet of node {self.node} restarted by the run ({pids}), {back}"


def restart_from_fields(fields: Mapping[str, Any]) -> KubeletRestart:
    """A :class:`KubeletRestart` as a trace wrote it (``dataclasses.asdict``)."""

    def process(raw: Any) -> KubeletProcess | None:
        return None if raw is None else KubeletProcess(int(raw["pid"]), int(raw["active_since_us"]))

    back = fields.get("back_ns")
    return KubeletRestart(
        node=str(fields["node"]),
        before=process(fields.get("before")),
        after=process(fields.get("after")),
        asked_ns=int(fields["asked_ns"]),
        active_ns=int(fields["active_ns"]),
        back_ns=None if back is None else int(back),
    )


def restart_kubelet(
    node: str, answers: Callable[[], bool], exec_in_node: ExecInNode | None = None
) -> KubeletRestart:
    """``systemctl restart kubelet`` in ``node``, then until ``answers()`` (its /healthz).

    The wait is on a condition under :data:`timeouts.KUBELET_BACK`; a kubelet
    that does not come back is said in the result (``back_ns`` None), not raised.
    """

    def show() -> KubeletProcess | None:
        try:
            return kubelet_process(node, exec_in_node)
        except (HarnessError, ValueError):
            return None

    before = show()
    asked_ns = time.time_ns()
    argv = ["systemctl", "restart", "kubelet"]
    if exec_in_node is not None:
        exec_in_node(node, argv)
    else:
        run_in_node(node, argv)
    active_ns = time.time_ns()
    after = show()

    def healthy() -> bool:
        try:
            return answers()
        except Exception:  # its server not up yet: not yet
            return False

    back = poll_true(healthy, within=timeouts.KUBELET_BACK, every=0.5)
    return KubeletRestart(
        node, before, after, asked_ns, active_ns, time.time_ns() if back else None
    )
