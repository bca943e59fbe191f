"""The `crashloop` command: one module per verb family (setup, cluster, measure,
flakiness, matrix, overhead, demo), each with its commands' flags, help and
handlers; what they share (common), exit codes (codes), text or JSON (out), and
the command put together (app).

``main`` is the console script's entry point (``crashloop = crashloop_harness.cli:main``).
Building the command imports every verb's stack (the Kubernetes client, plotting):
``crashloop --version`` is answered before that, from the pins alone.
"""

from __future__ import annotations

import sys

from crashloop_harness.core import pins
from crashloop_harness.core.version import harness_version

__all__ = ["main", "version_text"]


def version_text() -> str:
    return (
        f"crashloop-harness {harness_version()} (kind {pins.KIND_VERSION}, Kubernetes "
        f"{', '.join(pin.version for pin in pins.KUBERNETES.values())}; default "
        f"{pins.DEFAULT_KUBERNETES.version})"
    )


def main(argv: list[str] | None = None) -> int:
    """The command; ``--version`` alone is answered without loading the rest."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        print(version_text())
        return 0
    from crashloop_harness.cli.app import main as run  # noqa: PLC0415 (the whole stack, on demand)

    return run(argv)
