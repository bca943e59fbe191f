"""The harness image for existing clusters' pools: one OCI image index, amd64 and arm64.

Each platform's image is a Debian rootfs of its own architecture (its Python read from the
ELF header of the binary itself) with wheels of its own (a compiled extension's header
too), run as the non-root user with the harness as its entrypoint; a kind node's runtime
takes the whole index and runs the image of its own architecture. Slow tier: both rootfs
and both wheel sets are made (1 min 47 s from nothing for arm64's, on 2026-12-07).
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from crashloop_harness.cluster import lifecycle
from crashloop_harness.core.version import harness_version
from crashloop_harness.substrate.harnessimage import (
    ENTRYPOINT,
    PLATFORMS,
    SITE,
    write_index_archive,
)
from crashloop_harness.substrate.workloadimage import RUN_AS_USER
from tests.e2e import imageindex

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

INDEX_NAME = "crashloop.local/harness-index:e2e"
PYTHON = "usr/bin/python3.11"


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_index_archive(tmp_path_factory.mktemp("index") / "harness.oci.tar")


def _elf_machine(layer: bytes, name: str) -> int:
    with tarfile.open(fileobj=io.BytesIO(layer)) as files:
        # The rootfs's names start "./" (tar -C DIR .); the packages' do not.
        (found,) = [m for m in files.getmembers() if m.name.removeprefix("./") == name]
        member = files.extractfile(found)
        assert member is not None, name
        header = member.read(20)
    assert header[:4] == b"\x7fELF", name
    return int.from_bytes(header[18:20], "little")


def _first_extension(layer: bytes) -> str:
    """A compiled extension of the packages' layer (pydantic's core)."""
    with tarfile.open(fileobj=io.BytesIO(layer)) as files:
        return next(
            m.name
            for m in files.getmembers()
            if "pydantic_core/_pydantic_core" in m.name and m.name.endswith(".so")
        )


def test_the_index_holds_each_architecture_s_own_python_and_wheels(archive: Path) -> None:
    with tarfile.open(archive) as layout:
        index = json.loads(layout.extractfile("index.json").read())  # type: ignore[union-attr]
        platforms = {m["platform"]["architecture"]: m for m in index["manifests"]}
        assert sorted(platforms) == sorted(PLATFORMS)
        for arch, descriptor in platforms.items():
            manifest = imageindex.blob_json(layout, descriptor["digest"])
            config = imageindex.blob_json(layout, manifest["config"]["digest"])
            assert (config["os"], config["architecture"]) == ("linux", arch)
            assert config["config"]["Entrypoint"] == list(ENTRYPOINT)
            assert config["config"]["User"] == f"{RUN_AS_USER}:{RUN_AS_USER}"
            assert f"PYTHONPATH={SITE}" in config["config"]["Env"]
            base, packages = (
                gzip.decompress(imageindex.blob(layout, layer["digest"]))
                for layer in manifest["layers"]
            )
            assert _elf_machine(base, PYTHON) == imageindex.ELF_MACHINE[arch], arch
            assert (
                _elf_machine(packages, _first_extension(packages)) == imageindex.ELF_MACHINE[arch]
            ), arch


@pytest.fixture
def imported(archive: Path, crashloop_cluster: lifecycle.Cluster) -> Iterator[str]:
    with imageindex.imported(archive, crashloop_cluster, INDEX_NAME) as node:
        yield node


def test_a_node_runs_the_harness_from_the_index_as_its_user(
    imported: str, crashloop_cluster: lifecycle.Cluster
) -> None:
    ran = imageindex.run_to_end(crashloop_cluster, imported, INDEX_NAME, ["--version"], "harness")
    assert ran.status.phase == "Succeeded", ran.log
    assert ran.log.startswith(f"crashloop-harness {harness_version()} "), ran.log
