"""The workload image: our own static program, built offline and loaded into kind.

The image is `FROM scratch` with one binary (source: workloads/program/),
tagged with a hash of its source and with the stable ``v1`` tag that the YAML
in workloads/ names, and loaded into every node with `kind load docker-image`;
pods use it with imagePullPolicy Never, so nothing is ever pulled.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Final

from crashloop_harness.core import timeouts
from crashloop_harness.core.proc import run
from crashloop_harness.core.resources import WORKLOAD_SOURCE
from crashloop_harness.substrate.nodeimage.cache import files_digest
from crashloop_harness.substrate.nodeimage.gobuild import build_local
from crashloop_harness.substrate.nodeselect import image_exists

SOURCE: Final = WORKLOAD_SOURCE
REPOSITORY: Final = "crashloop.local/workload"
# What the YAML in workloads/ names: the build of the current source, moved to
# each new build (runs use the content-hash tag, which never moves).
STABLE_TAG: Final = f"{REPOSITORY}:v1"
BINARY: Final = "/workload"
# A non-root user for the restricted Pod Security level.
RUN_AS_USER: Final = 65532


def image_tag() -> str:
    return f"{REPOSITORY}:{files_digest(SOURCE.glob('*'), SOURCE)}"


def ensure_image() -> str:
    """Build the workload image if this source has not been built yet; returns its tag.

    The stable tag is moved to it as well.
    """
    tag = image_tag()
    if not image_exists(tag):
        _build(tag)
    run(["docker", "tag", tag, STABLE_TAG], timeout=timeouts.TOOL_QUERY)
    return tag


def _build(tag: str) -> None:
    binary = build_local(SOURCE, "workload") / "workload"
    with tempfile.TemporaryDirectory(prefix="crashloop-workload-") as context:
        shutil.copy2(binary, Path(context) / "workload")
        (Path(context) / "Dockerfile").write_text(
            "FROM scratch\n"
            f"COPY workload {BINARY}\n"
            f"USER {RUN_AS_USER}:{RUN_AS_USER}\n"
            f'ENTRYPOINT ["{BINARY}"]\n'
        )
        docker_build(tag, Path(context))


def docker_build(tag: str, context: Path) -> None:
    """``docker build`` of a context that holds its Dockerfile. The classic builder: BuildKit
    is a separate component some engines lack, and these builds need nothing of it."""
    run(
        ["docker", "build", "-q", "-t", tag, str(context)],
        env={**os.environ, "DOCKER_BUILDKIT": "0"},
        fix="check the docker engine (`docker info`)",
        timeout=timeouts.IMAGE_BUILD,
    )


def load_into(cluster_name: str, kind_bin: Path, tag: str) -> None:
    """Load the image into every node (kind skips nodes that already have it)."""
    run(
        [str(kind_bin), "load", "docker-image", "--name", cluster_name, tag],
        fix="check that the cluster is running (`crashloop status`)",
        timeout=timeouts.IMAGE_LOAD,
    )
