"""The workload image for existing clusters' pools: one OCI image index, amd64 and arm64.

Each platform's image holds the workload built for that architecture (read from the
binary's own ELF header, not the index's label), runs it as the non-root user, and a kind
node's runtime takes the index as a registry would serve it and runs the image of its own
architecture.
"""

from __future__ import annotations

import json
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from crashloop_harness.cluster import lifecycle
from crashloop_harness.substrate.workloadimage import BINARY, RUN_AS_USER
from crashloop_harness.substrate.workloadindex import ARCHITECTURES, write_index_archive
from tests.e2e import imageindex

pytestmark = pytest.mark.e2e

INDEX_NAME = "crashloop.local/workload-index:e2e"


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_index_archive(tmp_path_factory.mktemp("index") / "workload.oci.tar")


def test_the_index_holds_each_architecture_s_own_build(archive: Path, tmp_path: Path) -> None:
    with tarfile.open(archive) as layout:
        index = json.loads(layout.extractfile("index.json").read())  # type: ignore[union-attr]
        assert index["mediaType"] == "application/vnd.oci.image.index.v1+json"
        platforms = {
            m["platform"]["architecture"]: m
            for m in index["manifests"]
            if m["platform"]["os"] == "linux"
        }
        assert sorted(platforms) == sorted(ARCHITECTURES)
        for arch, descriptor in platforms.items():
            manifest = imageindex.blob_json(layout, descriptor["digest"])
            config = imageindex.blob_json(layout, manifest["config"]["digest"])
            assert (config["os"], config["architecture"]) == ("linux", arch)
            assert config["config"]["Entrypoint"] == [BINARY]
            assert config["config"]["User"] == f"{RUN_AS_USER}:{RUN_AS_USER}"
            (layer,) = manifest["layers"]
            extracted = tmp_path / arch
            extracted.write_bytes(imageindex.blob(layout, layer["digest"]))
            with tarfile.open(extracted) as files:
                binary = files.extractfile(BINARY.lstrip("/"))
                assert binary is not None
                header = binary.read(20)
            assert header[:4] == b"\x7fELF"
            assert int.from_bytes(header[18:20], "little") == imageindex.ELF_MACHINE[arch], arch


@pytest.fixture
def imported(archive: Path, crashloop_cluster: lifecycle.Cluster) -> Iterator[str]:
    """The index imported into one worker's runtime as a registry would serve it: whole,
    each platform's image beside the others; the node's own is the one it runs."""
    with imageindex.imported(archive, crashloop_cluster, INDEX_NAME) as node:
        yield node


def test_a_node_runs_the_index_s_image_of_its_architecture(
    imported: str, crashloop_cluster: lifecycle.Cluster
) -> None:
    args = ["--mode", "exit", "--exit-code", "0"]
    ran = imageindex.run_to_end(crashloop_cluster, imported, INDEX_NAME, args, "workload-index")
    assert ran.status.phase == "Succeeded", ran.status
    (container,) = ran.status.container_statuses
    # The workload's own report: it ran, as itself, to its exit.
    assert json.loads(container.state.terminated.message)["exit_code"] == 0
