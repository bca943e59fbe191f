"""What a recorder records: one run's pods, in one namespace, on the nodes it names."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kubernetes import client


@dataclass(frozen=True)
class RecordingScope:
    """The run's namespace and nodes (node -> worker), and the directory its records go to.

    Every recorder takes one: the runtime's (``Recorder``) and the API's (``ApiRecorder``)
    record the same run the same way, and differ only in what they read.
    """

    api: client.ApiClient
    namespace: str
    run_id: str
    run_dir: Path
    node_workers: Mapping[str, str]
