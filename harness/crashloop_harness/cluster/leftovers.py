"""Run namespaces another run left behind, and whether they may be removed.

A run's namespace holds crash-looping pods on every worker. Left behind (a
closed terminal, a killed harness), they keep loading the kubelets and the
runtime and so skew every delay the next run measures. Every run namespace is
labelled with its run and annotated with the process that owns it; a new run
removes the namespaces whose owner is gone and refuses to start beside a
live one. Pure: the caller lists the namespaces and deletes them.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from crashloop_harness.core.conventions import OWNER_ANNOTATION, RUN_LABEL


@dataclass(frozen=True)
class RunNamespace:
    """A labelled run namespace as the API lists it."""

    name: str
    run_id: str
    owner: str  # "<host>/<pid>", "" when unknown
    terminating: bool = False


@dataclass(frozen=True)
class Leftovers:
    """What to do about other runs' namespaces before a new run starts."""

    remove: tuple[RunNamespace, ...] = ()
    busy: tuple[RunNamespace, ...] = ()  # owned by a live process: refuse to start


def owner_of_this_process() -> str:
    return f"{socket.gethostname()}/{os.getpid()}"


def run_labels(run_id: str) -> dict[str, str]:
    return {RUN_LABEL: run_id}


def run_annotations() -> dict[str, str]:
    return {OWNER_ANNOTATION: owner_of_this_process()}


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def from_metadata(
    name: str, labels: Mapping[str, str] | None, annotations: Mapping[str, str] | None, phase: str
) -> RunNamespace | None:
    """The run namespace a listed namespace is, None when it is not one."""
    run_id = (labels or {}).get(RUN_LABEL)
    if run_id is None:
        return None
    owner = (annotations or {}).get(OWNER_ANNOTATION, "")
    return RunNamespace(name, run_id, owner, terminating=phase == "Terminating")


def classify(
    namespaces: Sequence[RunNamespace],
    *,
    me: str,
    alive: Callable[[int], bool] = pid_alive,
) -> Leftovers:
    """Split other runs' namespaces into removable ones and ones a live run still uses.

    This process's own namespaces (the demo runs the check and the scenarios
    side by side) are left alone; so are namespaces already terminating. An
    owner on another host cannot be checked, so its namespace counts as busy.
    """
    host = me.split("/", 1)[0]
    remove: list[RunNamespace] = []
    busy: list[RunNamespace] = []
    for namespace in namespaces:
        if namespace.owner == me or namespace.terminating:
            continue
        owner_host, _, pid_text = namespace.owner.partition("/")
        if owner_host != host or not pid_text.isdigit():
            # Unknown owner: an old harness, or another machine.
            if namespace.owner:
                busy.append(namespace)
            else:
                remove.append(namespace)
        elif alive(int(pid_text)):
            busy.append(namespace)
        else:
            remove.append(namespace)
    return Leftovers(tuple(remove), tuple(busy))
