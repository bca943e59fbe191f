"""A cluster's spec as a file that names it, for a `crashloop` command run by a test."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from crashloop_harness.cluster.lifecycle import Cluster
from crashloop_harness.core.pins import DEFAULT_KUBERNETES


def spec_file_of(cluster: Cluster, where: Path) -> Path:
    """A copy of ``cluster``'s spec naming it, for a `crashloop` command to reach that cluster."""
    copy = where / "clusters"
    shutil.copytree(cluster.spec.path.parent, copy)
    spec_file = copy / cluster.spec.path.name
    suffix = (
        ""
        if cluster.spec.kubernetes == DEFAULT_KUBERNETES
        else ("-" + cluster.spec.kubernetes.minor.replace(".", "-"))
    )
    document = yaml.safe_load(spec_file.read_text())
    document["name"] = cluster.name.removesuffix(suffix)
    spec_file.write_text(yaml.safe_dump(document, sort_keys=False))
    return spec_file
