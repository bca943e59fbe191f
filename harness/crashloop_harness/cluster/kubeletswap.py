"""Put another kubelet binary in a kind node, and the node image's own back.

The image's binary is kept beside it (``/usr/bin/kubelet.image``) the first
time, so ``restore`` needs nothing from outside; a marker file in the node
says what runs there, so a reused cluster, and every run's summary, can say
which nodes run a kubelet that is not their image's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from crashloop_harness.cluster.nodecommand import run_in_node
from crashloop_harness.core import timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.proc import run

KUBELET: Final = "/usr/bin/kubelet"
IMAGE_KUBELET: Final = "/usr/bin/kubelet.image"
MARKER: Final = "/etc/crashloop/kubelet.json"


@dataclass(frozen=True)
class NodeKubelet:
    """The kubelet binary a node runs: its version and checksum, and where it came from.

    ``swapped`` is None for the node image's own kubelet, else what was put
    in its place (the patch, the tree, the file).
    """

    node: str
    version: str
    sha256: str
    swapped: str | None = None


def _exec(node: str, *argv: str, input_text: str | None = None) -> str:
    return run_in_node(node, argv, input_text=input_text)


def read_node_kubelet(node: str) -> NodeKubelet:
    """What ``node`` runs, read in the node itself."""
    script = (
        f"sha256sum {KUBELET} | cut -d' ' -f1; {KUBELET} --version; "
        f"cat {MARKER} 2>/dev/null || true"
    )
    lines = _exec(node, "sh", "-c", script).splitlines()
    if len(lines) < 2:
        raise HarnessError(f"{node}: cannot read its kubelet binary ({lines})")
    marker = json.loads("\n".join(lines[2:])) if len(lines) > 2 else None
    return NodeKubelet(
        node=node,
        version=lines[1].rsplit(" ", 1)[-1],
        sha256=lines[0].strip(),
        swapped=None if marker is None else str(marker["made_from"]),
    )


def swap(node: str, binary: Path, made_from: str) -> None:
    """Copy ``binary`` into ``node`` as its kubelet and restart the kubelet service.

    The new file is renamed over the old one: a running kubelet keeps its
    inode, and a copy interrupted half-way never becomes the node's kubelet.
    """
    staged = f"{KUBELET}.new"
    run(["docker", "cp", str(binary), f"{node}:{staged}"], timeout=timeouts.DOCKER_COPY)
    marker = json.dumps({"made_from": made_from, "at": datetime.now(UTC).isoformat()})
    _exec(
        node,
        "sh",
        "-c",
        f"set -e; [ -e {IMAGE_KUBELET} ] || cp -p {KUBELET} {IMAGE_KUBELET}; "
        f"chmod 0755 {staged}; mv -f {staged} {KUBELET}; mkdir -p {Path(MARKER).parent}; "
        f"cat > {MARKER}; systemctl restart kubelet",
        input_text=marker,
    )


def restore(node: str) -> bool:
    """Put the image's kubelet back and restart it; False when the node had it already."""
    out = _exec(
        node,
        "sh",
        "-c",
        f"if [ -e {IMAGE_KUBELET} ]; then mv -f {IMAGE_KUBELET} {KUBELET}; rm -f {MARKER}; "
        "systemctl restart kubelet; echo restored; fi",
    )
    return out.strip() == "restored"
