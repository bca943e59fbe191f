"""The workload image for the nodes of an existing cluster: one OCI image index, every
architecture its pools run, written as an archive to push to the cluster's registry.

kind loads the engine's own image (:mod:`crashloop_harness.substrate.workloadimage`); a
platform team's pools pull, and an arm64 pool pulls the arm64 image of the same tag. No
registry is reached here: the index is written as an OCI image layout in a tar (an
``oci-archive``), by go-containerregistry (``resources/imageindex``), which skopeo,
crane and oras push as they are.
"""

from __future__ import annotations

import os
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from crashloop_harness.core import timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.paths import go_env
from crashloop_harness.core.proc import run
from crashloop_harness.core.resources import IMAGE_INDEX_SOURCE
from crashloop_harness.substrate.nodeimage.gobuild import GO_FIX, build_local
from crashloop_harness.substrate.workloadimage import BINARY, RUN_AS_USER, SOURCE

# The architectures of Linux node pools the workload is built for (GOARCH names).
ARCHITECTURES: Final = ("amd64", "arm64")


def archive_problem(path: Path) -> str | None:
    """What is wrong with where the archive should go, before anything is built."""
    if path.is_dir():
        return f"{path} is a directory: name the archive file to write (e.g. workload.oci.tar)"
    if not path.parent.is_dir():
        return f"{path.parent} does not exist: create it, or name a file in a folder that does"
    return None


def write_index_archive(path: Path, architectures: Sequence[str] = ARCHITECTURES) -> Path:
    """Build the workload for each architecture and write their image index to ``path``."""
    problem = archive_problem(path)
    if problem is not None:
        raise HarnessError(problem, "pass --oci-archive FILE in a folder that exists")
    binaries = [
        (arch, build_local(SOURCE, "workload", arch=arch) / "workload") for arch in architectures
    ]
    binary_args = [
        arg for arch, binary in binaries for arg in ("-binary", f"linux/{arch}={binary}")
    ]
    return write_oci_archive(
        path, ["-path", BINARY, "-user", f"{RUN_AS_USER}:{RUN_AS_USER}", *binary_args]
    )


def write_oci_archive(path: Path, tool_args: Sequence[str]) -> Path:
    """The image index the Go tool (resources/imageindex) makes of ``tool_args``, written to
    ``path`` as an oci-archive: whole or not at all."""
    with tempfile.TemporaryDirectory(prefix="crashloop-index-", dir=path.parent) as work:
        layout = Path(work) / "layout"
        run(
            ["go", "run", ".", "-out", str(layout), *tool_args],
            cwd=str(IMAGE_INDEX_SOURCE),
            env={**go_env(), "CGO_ENABLED": "0"},
            fix=GO_FIX,
            timeout=timeouts.GO_BUILD,
        )
        written = Path(work) / "archive.tar"
        with tarfile.open(written, "w") as archive:
            for member in sorted(layout.rglob("*")):
                archive.add(
                    member, arcname=str(member.relative_to(layout)), recursive=False, filter=_plain
                )
        os.replace(written, path)
    return path


def _plain(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """Every entry owned by root with a zero time: the same binaries, the same archive."""
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    return info
