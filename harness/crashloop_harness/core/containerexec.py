"""The one way a command runs inside a container of this host's engine: `docker exec`.

kind writes its node command once per provider (a node embeds ``exec.Cmder``); so does this
harness. A kind node (crashloop_harness.cluster.nodecommand) and the node image's build
container (crashloop_harness.substrate.nodeimage.assemble) are both reached through here,
so an engine reached some other way replaces this module alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def exec_argv(
    container: str,
    argv: Sequence[str],
    *,
    stdin: bool = False,
    env: Mapping[str, str] | None = None,
) -> list[str]:
    """The host's argv that runs ``argv`` inside ``container``: with ``stdin`` kept open (a
    long-lived reader that ends when its input closes), and ``env`` set in it."""
    options = ["-i"] if stdin else []
    for name, value in (env or {}).items():
        options += ["-e", f"{name}={value}"]
    return ["docker", "exec", *options, container, *argv]
