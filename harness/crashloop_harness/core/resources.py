"""The files the harness ships beside its code, read where the package is installed.

Cluster specs and their kubelet profiles, the sources of what is built for
the nodes (node image files, pause, netd, the capability wrapper) and the
workload program travel inside the package (``harness/crashloop_harness/resources/``), so an
installed wheel finds them as a checkout does. They must be real files on
disk: docker and go read them by path.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Final

from crashloop_harness.core.errors import HarnessError


def _root() -> Path:
    root = files("crashloop_harness") / "resources"
    if not isinstance(root, Path):  # a zipped install: docker and go need paths
        raise HarnessError(
            f"the harness's resources are not files on disk ({root})",
            "install crashloop-harness unzipped (pip install does)",
        )
    return root


RESOURCES: Final = _root()
CLUSTERS_DIR: Final = RESOURCES / "clusters"
IMAGES_DIR: Final = RESOURCES / "images"
WORKLOAD_SOURCE: Final = RESOURCES / "workload"
# The Go program that writes an OCI image index of the workload (go-containerregistry).
IMAGE_INDEX_SOURCE: Final = RESOURCES / "imageindex"
DEFAULT_SPEC_NAME: Final = "crashloop"


def builtin_specs() -> list[str]:
    """Names of the cluster specs that ship with the harness (crashloop, gate-only, ...)."""
    return sorted(path.stem for path in CLUSTERS_DIR.glob("*.yaml"))


def spec_path(name_or_path: str | Path) -> Path:
    """A cluster spec named by a path to a YAML file or by a built-in name."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    builtin = CLUSTERS_DIR / f"{name_or_path}.yaml"
    if path.suffix == "" and path.name == str(name_or_path) and builtin.is_file():
        return builtin
    raise HarnessError(
        f"cluster spec {str(name_or_path)!r}: no such file and no built-in spec of that name",
        f"name a YAML file or one of: {', '.join(builtin_specs())}",
    )
