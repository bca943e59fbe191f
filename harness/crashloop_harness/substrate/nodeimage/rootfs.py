"""A Debian rootfs: the node's, component images' that need iptables, the harness's own."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Final

from crashloop_harness.core import pins, timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.proc import run
from crashloop_harness.substrate import hostpkgs
from crashloop_harness.substrate.nodeimage.cache import cached_dir, digest

MIRROR: Final = os.environ.get("CRASHLOOP_DEBIAN_MIRROR", "http://deb.debian.org/debian")

# What a kind node needs beyond a minimal Debian: systemd as PID 1, the
# networking tools kubelet, kube-proxy and our entrypoint call, and libseccomp
# for runc.
PACKAGES: Final = (
    "systemd",
    "systemd-sysv",
    "dbus",
    "libseccomp2",
    "iptables",
    "nftables",
    "conntrack",
    "iproute2",
    "ethtool",
    "socat",
    "mount",
    "util-linux",
    "kmod",
    "jq",
    "procps",
    "ca-certificates",
    "bash",
    "iputils-ping",
)


def rootfs_key(packages: tuple[str, ...] = PACKAGES) -> str:
    return digest("rootfs", pins.DEBIAN_SUITE, MIRROR, packages)


def build_rootfs_tar(packages: tuple[str, ...] = PACKAGES) -> Path:
    """A tarball of a bookworm rootfs with ``packages`` installed (cached by them)."""
    return (
        cached_dir("rootfs", rootfs_key(packages), functools.partial(_debootstrap, packages))
        / "rootfs.tar"
    )


def _debootstrap(packages: tuple[str, ...], out: Path) -> None:
    hostpkgs.ensure(["debootstrap"], "building a Debian rootfs")
    target = out / "rootfs"
    run(
        [
            "debootstrap",
            "--variant=minbase",
            f"--include={','.join(packages)}",
            pins.DEBIAN_SUITE,
            str(target),
            MIRROR,
        ],
        fix=f"check that the Debian mirror {MIRROR} is reachable (set CRASHLOOP_DEBIAN_MIRROR)",
        timeout=timeouts.DEBOOTSTRAP,
    )
    # Package caches and lists are dead weight in every image built on this.
    run(["rm", "-rf", f"{target}/var/cache/apt/archives", f"{target}/var/lib/apt/lists"])
    run(["tar", "-C", str(target), "--numeric-owner", "-cf", str(out / "rootfs.tar"), "."])
    run(["rm", "-rf", str(target)])
    if not (out / "rootfs.tar").exists():
        raise HarnessError(
            "debootstrap produced no rootfs", f"read the output above; mirror {MIRROR}"
        )
