"""The talk's workloads as plain YAML, for replaying them by hand with kubectl.

Written by `crashloop manifests` from the very functions the harness deploys
its runs with (:mod:`crashloop_harness.pods.skeleton` and each scenario's module),
so the YAML in ``workloads/`` is what a run applies, with three differences
a person at a terminal needs: one fixed namespace (``crashloop-replay``, at the
restricted Pod Security level like every run's), the run label ``replay``, and
the workload image's stable tag (``crashloop workload-image`` builds and loads it).
The task-isolation baseline of fresh pods is not here: it is a loop of
deletes and creates that only the harness drives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import yaml

from crashloop_harness.cluster.kube import RESTRICTED_NAMESPACE_LABELS
from crashloop_harness.pods.skeleton import crashing_pod
from crashloop_harness.scenarios import REGISTRY
from crashloop_harness.substrate.workloadimage import STABLE_TAG

NAMESPACE: Final = "crashloop-replay"
RUN_ID: Final = "replay"
NAMESPACE_FILE: Final = "namespace.yaml"
CONFORMANCE_FILE: Final = "conformance.yaml"
_HEADER: Final = (
    "# Written by `crashloop manifests` from the code the harness deploys with; do not edit.\n"
    "# Apply on the crashloop cluster after `crashloop workload-image`\n"
    "# (docs/scenarios.md: Replay the talk by hand).\n"
)


def _in_namespace(pod: dict[str, Any]) -> dict[str, Any]:
    return {**pod, "metadata": {"namespace": NAMESPACE, **pod["metadata"]}}


def _document(objects: Sequence[Mapping[str, Any]]) -> str:
    return _HEADER + yaml.safe_dump_all(list(objects), sort_keys=False, explicit_start=True)


def replay_manifests(workers: Sequence[str]) -> dict[str, str]:
    """File name -> YAML text, for the given workers (the cluster spec's, in its order)."""
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": NAMESPACE, "labels": dict(RESTRICTED_NAMESPACE_LABELS)},
    }
    files = {
        NAMESPACE_FILE: _document([namespace]),
        CONFORMANCE_FILE: _document(
            [_in_namespace(crashing_pod(w, RUN_ID, STABLE_TAG)) for w in workers]
        ),
    }
    for name, scenario in REGISTRY.items():
        pods = [
            _in_namespace(pod)
            for worker in workers
            for pod in scenario.manifests(worker, RUN_ID, STABLE_TAG)
        ]
        files[f"{name}.yaml"] = _document(pods)
    return files


def write_manifests(directory: Path, workers: Sequence[str]) -> list[Path]:
    """Write every replay file into ``directory``; the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in replay_manifests(workers).items():
        path = directory / name
        path.write_text(text)
        written.append(path)
    return written
