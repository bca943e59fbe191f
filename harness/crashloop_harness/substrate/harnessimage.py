"""The harness's own image, to run the check inside a cluster (a CronJob), built offline.

No registry is reached: a Debian bookworm rootfs with its Python 3.11 (debootstrap, as the
node image's rootfs), the harness's package as it is installed here, and every package it
imports at the version installed beside it (a checkout's are requirements/run.lock's),
fetched from the package index as wheels for the image's Python and architecture. It runs
as a non-root user under the ``restricted`` Pod Security level, with a read-only root: what
it writes (runs, its in-cluster kubeconfig) goes under /tmp, an emptyDir in the CronJob.
"""

from __future__ import annotations

import shutil
import sys
import tarfile
import tempfile
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Final

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from crashloop_harness.core import timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.proc import run
from crashloop_harness.core.resources import RESOURCES
from crashloop_harness.core.version import harness_version
from crashloop_harness.substrate.nodeimage import rootfs
from crashloop_harness.substrate.nodeimage.cache import digest, files_digest
from crashloop_harness.substrate.nodeselect import image_exists
from crashloop_harness.substrate.workloadimage import (  # the same non-root user
    RUN_AS_USER,
    docker_build,
)
from crashloop_harness.substrate.workloadindex import archive_problem, write_oci_archive

REPOSITORY: Final = "crashloop.local/harness"
DISTRIBUTION: Final = "crashloop-harness"
# Debian 12's Python, the release the harness is tested on.
PYTHON: Final = "3.11"
DEBIAN_PACKAGES: Final = ("python3", "ca-certificates")
# Wheels for each platform: the manylinux tags Debian 12's glibc (2.36) runs, by Debian's
# name of the architecture (the image index's too).
PLATFORMS: Final = {
    "amd64": ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"),
    "arm64": ("manylinux_2_28_aarch64", "manylinux_2_17_aarch64", "manylinux2014_aarch64"),
}
SITE: Final = "/opt/crashloop/site-packages"
# Writable scratch under a read-only root: the CronJob mounts an emptyDir here.
SCRATCH: Final = "/tmp"
ENTRYPOINT: Final = ("python3", "-m", "crashloop_harness.cli")
# The image's environment: the packages, and every path the harness writes under scratch.
ENVIRONMENT: Final = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "PYTHONPATH": SITE,
    "PYTHONDONTWRITEBYTECODE": "1",
    "HOME": SCRATCH,
    "CRASHLOOP_RUNS_DIR": f"{SCRATCH}/runs",
    "CRASHLOOP_STATE_DIR": f"{SCRATCH}/state",
    "CRASHLOOP_CACHE_DIR": f"{SCRATCH}/cache",
}


def stable_tag() -> str:
    """What manifests name: the harness's version (moved to each build of it)."""
    return f"{REPOSITORY}:{harness_version()}"


def pinned_requirements(distribution: str = DISTRIBUTION) -> list[str]:
    """``name==version`` for every package ``distribution`` needs, as installed here.

    Walked from its metadata's requirements, markers read for Linux and this Python (the
    image's), extras not taken: what runs beside the harness here runs in the image.
    """
    environment: dict[str, str] = {
        **{key: str(value) for key, value in default_environment().items()},
        "sys_platform": "linux",
        "platform_system": "Linux",
        "extra": "",
    }
    pinned: dict[str, str] = {}
    pending = [distribution]
    while pending:
        name = pending.pop()
        for text in metadata.requires(name) or ():
            requirement = Requirement(text)
            marker = requirement.marker
            if marker is not None and not marker.evaluate(environment):
                continue
            key = canonicalize_name(requirement.name)
            if key in pinned:
                continue
            pinned[key] = metadata.version(requirement.name)
            pending.append(requirement.name)
    return sorted(f"{name}=={version}" for name, version in pinned.items())


def _package_dir() -> Path:
    return RESOURCES.parent


def image_tag() -> str:
    """A tag that moves with every input: the rootfs, the pinned packages, the code."""
    code = files_digest(
        (p for p in _package_dir().rglob("*") if p.is_file() and "__pycache__" not in p.parts),
        _package_dir(),
    )
    key = digest(rootfs.rootfs_key(DEBIAN_PACKAGES), pinned_requirements(), PLATFORMS, PYTHON, code)
    return f"{REPOSITORY}:{key}"


def ensure_image() -> str:
    """Build the harness image if these inputs were not built yet; the stable tag moves to it.
    Returns the stable tag."""
    tag = image_tag()
    if not image_exists(tag):
        _build(tag)
    run(["docker", "tag", tag, stable_tag()], timeout=timeouts.TOOL_QUERY)
    return stable_tag()


def _base_image() -> str:
    image = f"crashloop.local/harness-rootfs:{rootfs.rootfs_key(DEBIAN_PACKAGES)}"
    if not image_exists(image):
        tar = rootfs.build_rootfs_tar(DEBIAN_PACKAGES)
        run(["docker", "import", str(tar), image], timeout=timeouts.DOCKER_IMPORT)
    return image


def _install_packages(site: Path, requirements: Iterable[str], arch: str) -> None:
    platforms = [f"--platform={platform}" for platform in PLATFORMS[arch]]
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            f"--python-version={PYTHON}",
            "--implementation=cp",
            *platforms,
            "--target",
            str(site),
            *requirements,
        ],
        fix="check that the package index is reachable (pip's own settings: PIP_INDEX_URL)",
        timeout=timeouts.IMAGE_BUILD,
    )


def _copy_harness(site: Path) -> None:
    """The harness's package as installed here, and the metadata that names its version."""
    shutil.copytree(
        _package_dir(), site / "crashloop_harness", ignore=shutil.ignore_patterns("__pycache__")
    )
    info = site / f"crashloop_harness-{harness_version()}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {DISTRIBUTION}\nVersion: {harness_version()}\n"
    )


def _site_packages(into: Path, arch: str) -> Path:
    """The harness and its packages for ``arch``, as the image's PYTHONPATH holds them."""
    site = into / f"site-packages-{arch}"
    _install_packages(site, pinned_requirements(), arch)
    _copy_harness(site)
    return site


def _build(tag: str) -> None:
    base = _base_image()
    with tempfile.TemporaryDirectory(prefix="crashloop-harness-image-") as context:
        site = _site_packages(Path(context), "amd64")
        environment = " ".join(f"{key}={value}" for key, value in ENVIRONMENT.items())
        entrypoint = ", ".join(f'"{word}"' for word in ENTRYPOINT)
        (Path(context) / "Dockerfile").write_text(
            f"FROM {base}\n"
            f"COPY {site.name} {SITE}\n"
            f"ENV {environment}\n"
            f"USER {RUN_AS_USER}:{RUN_AS_USER}\n"
            f"ENTRYPOINT [{entrypoint}]\n"
        )
        docker_build(tag, Path(context))


def write_index_archive(path: Path) -> Path:
    """The image for every architecture in PLATFORMS as one OCI image index at ``path`` (an
    oci-archive to push), each a Debian rootfs of its own and its own wheels."""
    problem = archive_problem(path)
    if problem is not None:
        raise HarnessError(problem, "pass --oci-archive FILE in a folder that exists")
    with tempfile.TemporaryDirectory(prefix="crashloop-harness-index-", dir=path.parent) as work:
        layers: list[str] = []
        for arch in PLATFORMS:
            base = rootfs.build_rootfs_tar(DEBIAN_PACKAGES, arch)
            site = _site_packages(Path(work), arch)
            packages = Path(work) / f"{site.name}.tar"
            with tarfile.open(packages, "w") as layer:
                layer.add(site, arcname=SITE.lstrip("/"), filter=_owned_by_root)
            layers += ["-layers", f"linux/{arch}={base},{packages}"]
        return write_oci_archive(
            path,
            [
                "-user",
                f"{RUN_AS_USER}:{RUN_AS_USER}",
                "-entrypoint",
                " ".join(ENTRYPOINT),
                *(arg for key, value in ENVIRONMENT.items() for arg in ("-env", f"{key}={value}")),
                *layers,
            ],
        )


def _owned_by_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info
