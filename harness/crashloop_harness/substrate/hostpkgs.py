"""Debian packages the build host needs, installed on demand (root and apt only)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence

from crashloop_harness.core import timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.proc import run, succeeds


def missing(packages: Sequence[str]) -> list[str]:
    """The packages dpkg does not report as installed."""

    def installed(package: str) -> bool:
        try:
            status = run(["dpkg-query", "-W", "-f=${Status}", package], timeout=timeouts.APT_QUERY)
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
    if not can_install():
        raise HarnessError(f"{why} needs the Debian packages {', '.join(needed)}", fix)
    install(needed, fix)


def can_install() -> bool:
    """Whether this process may install Debian packages (root, with apt-get)."""
    return os.geteuid() == 0 and shutil.which("apt-get") is not None


def install(packages: Sequence[str], fix: str) -> None:
    """`apt-get install`, after `apt-get update` when apt does not know a package yet."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    known = (succeeds(["apt-cache", "show", p], timeout=timeouts.APT_SHOW) for p in packages)
    if not all(known):
        run(["apt-get", "update"], env=env, fix=fix, timeout=timeouts.APT_UPDATE)
    run(
        ["apt-get", "install", "-y", "--no-install-recommends", *packages],
        env=env,
        fix=fix,
        timeout=timeouts.APT_INSTALL,
    )
