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


# The host's own architecture (Debian's name): a rootfs of another is unpacked, not run.
HOST_ARCH: Final = "amd64"


def rootfs_key(packages: tuple[str, ...] = PACKAGES, arch: str = HOST_ARCH) -> str:
    if arch == HOST_ARCH:
        return digest("rootfs", pins.DEBIAN_SUITE, MIRROR, packages)
    return digest("rootfs", pins.DEBIAN_SUITE, MIRROR, packages, arch)


def build_rootfs_tar(packages: tuple[str, ...] = PACKAGES, arch: str = HOST_ARCH) -> Path:
    """A tarball of a bookworm rootfs with ``packages`` installed (cached by them)."""
    build = functools.partial(_debootstrap, packages, arch)
    return cached_dir("rootfs", rootfs_key(packages, arch), build) / "rootfs.tar"


def _debootstrap(packages: tuple[str, ...], arch: str, out: Path) -> None:
    hostpkgs.ensure(["debootstrap"], "building a Debian rootfs")
    target = out / "rootfs"
    # Another architecture's packages cannot be configured here (no emulator): its first
    # stage alone, then every package unpacked as it is. What their scripts would add
    # (compiled bytecode, a CA bundle) a rootfs for the harness does without.
    foreign = [] if arch == HOST_ARCH else ["--foreign", f"--arch={arch}"]
    run(
        [
            "debootstrap",
            "--variant=minbase",
            *foreign,
            f"--include={','.join(packages)}",
            pins.DEBIAN_SUITE,
            str(target),
            MIRROR,
        ],
        fix=f"check that the Debian mirror {MIRROR} is reachable (set CRASHLOOP_DEBIAN_MIRROR)",
        timeout=timeouts.DEBOOTSTRAP,
    )
    if foreign:
        for deb in sorted((target / "var/cache/apt/archives").glob("*.deb")):
            run(["dpkg-deb", "-x", str(deb), str(target)], timeout=timeouts.TOOL_QUERY)
        run(["rm", "-rf", f"{target}/debootstrap"])
    # Package caches and lists are dead weight in every image built on this.
    run(["rm", "-rf", f"{target}/var/cache/apt/archives", f"{target}/var/lib/apt/lists"])
    run(["tar", "-C", str(target), "--numeric-owner", "-cf", str(out / "rootfs.tar"), "."])
    run(["rm", "-rf", str(target)])
    if not (out / "rootfs.tar").exists():
        raise HarnessError(
            "debootstrap produced no rootfs", f"read the output above; mirror {MIRROR}"
        )
