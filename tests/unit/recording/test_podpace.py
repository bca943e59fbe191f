"""A node's pace read through the API alone: its pace pod's lines, each kept once."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from kubernetes import client

from crashloop_harness.recording.pace import POD_BURST
from crashloop_harness.recording.podpace import PodPaceReader, pace_pod_name, parse_pod_pace
from crashloop_harness.recording.trace import NoTrace


def test_a_pace_line_is_a_sample_of_the_pod_burst_and_other_lines_are_none() -> None:
    sample = parse_pod_pace("n1", "pace 1796621103755318473 24500000")
    assert sample is not None
    assert (sample.node, sample.started_ns, sample.probe) == ("n1", 1796621103755318473, POD_BURST)
    assert sample.seconds == pytest.approx(0.0245)
    for other in ("", "workload: started", "pace 1 -5", "pace 1", "pace x 2", "pace 1 0"):
        assert parse_pod_pace("n1", other) is None, other


class _Logs:
    """The API's answers to reading each pace pod's log, in turn; an exception is raised."""

    def __init__(self, answers: dict[str, list[Any]], stop: threading.Event) -> None:
        self.answers = answers
        self.stop = stop
        self.asked: list[str] = []

    def read_namespaced_pod_log(self, name: str, namespace: str, **kwargs: Any) -> str:
        self.asked.append(name)
        answers = self.answers[name]
        answer = answers.pop(0)
        if not any(self.answers.values()):
            self.stop.set()
        if isinstance(answer, Exception):
            raise answer
        return str(answer)


def test_the_reader_keeps_each_new_line_once_and_waits_for_a_pod_not_started(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stop = threading.Event()
    first = "pace 100 20000000\n"
    logs = _Logs(
        {
            pace_pod_name("fast"): [first, first + "pace 200 30000000\nnoise\n"],
            # Not scheduled yet, then a log that cannot be read, then its line.
            pace_pod_name("default"): [
                client.ApiException(status=400, reason="Bad Request"),
                client.ApiException(status=500, reason="Internal Server Error"),
            ],
        },
        stop,
    )
    monkeypatch.setattr(client, "CoreV1Api", lambda api: logs)
    monkeypatch.setattr("crashloop_harness.recording.podpace.PACE_EVERY_S", 0.0)
    problems: list[str] = []
    reader = PodPaceReader(
        client.ApiClient(),
        "ns",
        {"node-a": "fast", "node-b": "default"},
        problems.append,
        stop,
        tap=NoTrace(),
    )
    reader.run()
    samples = reader.samples()
    assert [s.started_ns for s in samples["node-a"]] == [100, 200]
    assert [s.seconds for s in samples["node-a"]] == pytest.approx([0.02, 0.03])
    assert "node-b" not in samples
    # The pod not started yet said nothing; the failed read was reported.
    assert len(problems) == 1
    assert problems[0].startswith("reading the pace of node-b:")
