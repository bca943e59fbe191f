"""A kind cluster's node containers as the engine sees them: their state, image and address."""

from __future__ import annotations

from crashloop_harness.cluster.kube import NodeStatus
from crashloop_harness.core import timeouts
from crashloop_harness.core.proc import run


def node_containers(name: str) -> dict[str, tuple[str, str]]:
    """Container name -> (state, image) for every node of a kind cluster."""
    out = run(
        [
            "docker",
            "ps",
            "-a",
            "--filter",
            f"label=io.x-k8s.kind.cluster={name}",
            "--format",
            "{{.Names}}\t{{.State}}\t{{.Image}}",
        ],
        timeout=timeouts.ENGINE_PROBE,
    )
    containers = {}
    for line in out.splitlines():
        container, state, image = line.split("\t")
        containers[container] = (state, image)
    return containers


def node_container_ips(containers: list[str]) -> dict[str, str]:
    """Container name -> its current IP address on the kind network."""
    if not containers:
        return {}
    out = run(
        [
            "docker",
            "inspect",
            "--format",
            "{{.Name}}\t{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}",
            *containers,
        ],
        timeout=timeouts.ENGINE_PROBE,
    )
    ips = {}
    for line in out.splitlines():
        container, addresses = line.split("\t")
        ips[container.removeprefix("/")] = addresses.split()[0] if addresses.split() else ""
    return ips


def moved_nodes(statuses: list[NodeStatus], container_ips: dict[str, str]) -> list[str]:
    """Nodes whose container has another address than the one the API server knows.

    The engine hands out addresses again when containers restart, in whatever
    order they start: two workers can swap addresses, and the API server then
    reaches one worker's kubelet under the other's name (its configz, logs,
    exec), which the run would take for a wrong kubelet config.
    """
    return [
        f"{status.name}: the API server has {status.internal_ip}, the container has {ip}"
        for status in statuses
        if status.internal_ip is not None
        and (ip := container_ips.get(status.name)) is not None
        and ip != status.internal_ip
    ]
