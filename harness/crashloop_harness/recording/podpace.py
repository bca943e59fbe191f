"""Each node's pace on a cluster reached through the API alone, from a pod of the run's own.

A target that runs no command in its nodes (an existing cluster, a fleet's)
still places pods on them. The check puts one pace pod on each judged node
(crashloop_harness.pods.skeleton.pace_pod): the workload's ``pace`` mode, a
fixed burst of CPU every PACE_EVERY_S timed on the node's clock and printed as
one line. Nothing of the kubelet's is between the two clock readings, so the
kubelet under test cannot move the pace, as on a kind node
(crashloop_harness.recording.pace); the burst is the workload's own, so it has
a reference of its own (bound ``reference_pod_pace``). This reader polls each
pace pod's log through the API and keeps every line it has not seen, in the
run's trace too (``pace``, probe POD_BURST) for a replay.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Final

from kubernetes import client

from crashloop_harness.core.errors import first_line
from crashloop_harness.recording.pace import PACE_EVERY_S, POD_BURST, PaceSample
from crashloop_harness.recording.trace import Tap

# The workload's line: "pace <start unix ns> <duration ns>" (resources/workload/pace.go).
_PREFIX: Final = "pace "


def pace_pod_name(worker: str) -> str:
    """The pace pod beside ``worker``'s subjects: one per judged node."""
    return f"pace-{worker}"


def parse_pod_pace(node: str, line: str) -> PaceSample | None:
    """A pace pod's line as a sample; None for any other line (the workload's own notes)."""
    if not line.startswith(_PREFIX):
        return None
    fields = line[len(_PREFIX) :].split()
    if len(fields) != 2 or not all(f.isdigit() for f in fields):
        return None
    start_ns, took_ns = (int(f) for f in fields)
    if took_ns <= 0:
        return None
    return PaceSample(node=node, started_ns=start_ns, seconds=took_ns / 1e9, probe=POD_BURST)


class PodPaceReader:
    """Polls every judged node's pace pod's log until stopped; each new sample once."""

    def __init__(
        self,
        api: client.ApiClient | None,
        namespace: str,
        node_workers: Mapping[str, str],
        problem: Callable[[str], None],
        stop: threading.Event,
        *,
        tap: Tap,
    ) -> None:
        self._api = api
        self._namespace = namespace
        self._node_workers = dict(node_workers)
        self._problem = problem
        self._stop = stop
        self._tap = tap
        self._lock = threading.Lock()
        self._samples: dict[str, list[PaceSample]] = {}
        self._seen: set[tuple[str, int]] = set()

    def run(self) -> None:
        """Read every pace pod's log each PACE_EVERY_S until ``stop``. A pod not started yet
        says nothing; a log that cannot be read is reported and read again next time."""
        assert self._api is not None
        core = client.CoreV1Api(self._api)
        while not self._stop.is_set():
            for node, worker in self._node_workers.items():
                try:
                    # Within one round: a node whose kubelet froze must not hold the
                    # others' reads for the API's whole timeout.
                    text = core.read_namespaced_pod_log(
                        pace_pod_name(worker), self._namespace, _request_timeout=PACE_EVERY_S
                    )
                except client.ApiException as error:
                    if error.status not in (400, 404):  # not scheduled or started yet
                        self._problem(f"reading the pace of {node}: {first_line(error)}")
                    continue
                except Exception as error:  # the API unreachable: the next poll retries
                    self._problem(f"reading the pace of {node}: {first_line(error)}")
                    continue
                for line in str(text).splitlines():
                    sample = parse_pod_pace(node, line)
                    if sample is not None and self.on_sample(sample):
                        self._tap.write(
                            "pace",
                            node=node,
                            started_ns=sample.started_ns,
                            s=sample.seconds,
                            probe=sample.probe,
                        )
            self._stop.wait(PACE_EVERY_S)

    def on_sample(self, sample: PaceSample) -> bool:
        """One sample read (a replay feeds the recorded ones); False for one already kept."""
        with self._lock:
            key = (sample.node, sample.started_ns)
            if key in self._seen:
                return False
            self._seen.add(key)
            self._samples.setdefault(sample.node, []).append(sample)
            return True

    def samples(self) -> dict[str, list[PaceSample]]:
        """node -> every pace sample read so far."""
        with self._lock:
            return {node: list(found) for node, found in self._samples.items()}
