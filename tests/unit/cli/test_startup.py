"""`crashloop --version` answers from the pins alone: no Kubernetes client, no plotting."""

from __future__ import annotations

import subprocess
import sys

PROBE = (
    "import sys\n"
    "from crashloop_harness.cli import main\n"
    "main(['--version'])\n"
    "heavy = [m for m in ('matplotlib', 'kubernetes', 'crashloop_harness.cli.app') "
    "if m in sys.modules]\n"
    "print('loaded:', ','.join(heavy))\n"
)


def test_the_version_loads_neither_the_client_nor_plotting() -> None:
    shown = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert shown.startswith("crashloop-harness "), shown
    assert shown.splitlines()[-1] == "loaded: ", shown
