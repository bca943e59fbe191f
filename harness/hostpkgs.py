"""Debian packages the build host needs, installed on demand (root and apt only)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence

from harness.errors import HarnessError
from harness.proc import run, succeeds


def missing(packages: Sequence[str]) -> list[str]:
    """The packages dpkg does not report as installed."""

    def installed(package: str) -> bool:
        try:
            status = run(["dpkg-query", "-W", "-f=${Status}", package], timeout=30)
        except HarnessError:  # unknown to dpkg
            return False
        return status.strip() == "install ok installed"

    return [package for package in packages if not installed(package)]


def ensure(packages: Sequence[str], why: str) -> None:
    """Install the packages that are not installed yet, or say exactly what to install."""
    needed = missing(packages)
    if not needed:
        return
    fix = f"install them: `apt-get install {' '.join(needed)}`"
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise HarnessError(f"{why} needs the Debian packages {', '.join(needed)}", fix)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    if not all(succeeds(["apt-cache", "show", package], timeout=60) for package in needed):
        run(["apt-get", "update"], env=env, fix=fix, timeout=600)
    run(
        ["apt-get", "install", "-y", "--no-install-recommends", *needed],
        env=env,
        fix=fix,
        timeout=900,
    )
