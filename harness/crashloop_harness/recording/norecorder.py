"""The recorder of a run that records in parts: it records nothing as a whole.

The overhead sweep records each cell with a recorder of its own (a few sampled
pods, no trace), started and stopped inside the cell so that observing costs
the measured window nothing it does not already pay. The run as a whole still
goes through the one lifecycle (the kubelets and engine read at both ends,
evidence, the clean-up), which asks for a recorder: this one.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from crashloop_harness.cluster.kubeletstate import KubeletChanges, KubeletProcess
from crashloop_harness.recording.closing import RecorderErrors
from crashloop_harness.recording.hostcpu import SaturatedSpan
from crashloop_harness.recording.nodepods import PodStartup
from crashloop_harness.recording.observercost import ObserverCost
from crashloop_harness.recording.pace import PaceSample
from crashloop_harness.recording.recorder import ApiView
from crashloop_harness.recording.records import AttemptKey, AttemptRecord
from crashloop_harness.recording.trace import NoTrace, Tap


class NoRecorder:
    """An :class:`~crashloop_harness.recording.recorder.AttemptRecorder` that sees no attempt."""

    def __init__(self) -> None:
        self.errors = RecorderErrors()
        self.cost: ObserverCost | None = None
        self._trace: Tap = NoTrace()
        self._stopped = threading.Event()

    @property
    def trace(self) -> Tap:
        return self._trace

    @property
    def observer(self) -> str:
        return "none"

    def start(self) -> None:
        pass

    def stop(self) -> None:
        self._stopped.set()

    def attempts(self) -> list[AttemptRecord]:
        return []

    def silent_nodes(self, longer_than: float) -> list[str]:
        del longer_than
        return []

    def broken_nodes(self) -> list[str]:
        return []

    def deleted_pods(self) -> dict[str, str]:
        return {}

    def not_running(self) -> dict[str, str]:
        return {}

    def ended_pod_uids(self) -> frozenset[str]:
        return frozenset()

    def kubelet_changes(self, made: Mapping[str, KubeletProcess] | None = None) -> KubeletChanges:
        del made
        return KubeletChanges()

    def levels_until_ns(self, node: str) -> int | None:
        """None: every attempt it records comes through the watch that reads the levels."""
        del node
        return None

    def listed_at_ns(self, node: str) -> int | None:
        del node
        return None

    def unobserved(self, node: str) -> list[tuple[int, int]]:
        del node
        return []

    def created_unstarted(self) -> dict[tuple[str, str], tuple[int, int]]:
        # No runtime to list: a container is seen once it started.
        return {}

    def pending_backoffs(self) -> dict[tuple[str, str], tuple[int, float]]:
        return {}

    def api_view(self, key: AttemptKey) -> ApiView | None:
        del key
        return None

    def saturated(self) -> tuple[SaturatedSpan, ...]:
        return ()

    def pace_samples(self) -> dict[str, list[PaceSample]]:
        return {}

    def pod_startups(self) -> dict[str, list[PodStartup]]:
        return {}

    def wait_for_change(self, timeout: float) -> None:
        # Nothing changes here; a caller that waits on a change waits for a stop.
        self._stopped.wait(timeout)
