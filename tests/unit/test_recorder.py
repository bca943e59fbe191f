"""The recorder's runtime sampling, with a fake node instead of `docker exec`."""

from __future__ import annotations

import json
from pathlib import Path

from harness.errors import HarnessError
from harness.recorder import Recorder


def _ps_item(container_id: str, attempt: int) -> dict[str, object]:
    return {
        "id": container_id,
        "podSandboxId": "sandbox",
        "metadata": {"name": "app", "attempt": attempt},
        "state": "CONTAINER_EXITED",
        "createdAt": str(1_000_000_000 * (attempt + 1)),
        "labels": {
            "io.kubernetes.pod.name": "crash-fast",
            "io.kubernetes.pod.namespace": "ns",
            "io.kubernetes.pod.uid": "uid-1",
            "io.kubernetes.container.name": "app",
        },
        "annotations": {"io.kubernetes.container.restartCount": str(attempt)},
    }


def _inspect_item(container_id: str, attempt: int) -> dict[str, object]:
    started = f"2026-11-30T03:00:{10 + 3 * attempt:02d}.000000001Z"
    finished = f"2026-11-30T03:00:{11 + 3 * attempt:02d}.5Z"
    return {
        "status": {
            "id": container_id,
            "metadata": {"name": "app", "attempt": attempt},
            "state": "CONTAINER_EXITED",
            "createdAt": started,
            "startedAt": started,
            "finishedAt": finished,
            "exitCode": 1,
            "reason": "Error",
            "labels": _ps_item(container_id, attempt)["labels"],
            "annotations": _ps_item(container_id, attempt)["annotations"],
        }
    }


class FakeNode:
    """Two exited attempts; `gone` was removed after `crictl ps` listed it."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, _node: str, argv: list[str]) -> str:
        self.calls.append(argv)
        if argv[:2] == ["crictl", "ps"]:
            items = [_ps_item("first", 0), _ps_item("gone", 1), _ps_item("second", 2)]
            return json.dumps({"containers": items})
        ids = argv[2:]
        if "gone" in ids:
            raise HarnessError("crictl inspect failed: container gone not found")
        items = [_inspect_item(i, {"first": 0, "second": 2}[i]) for i in ids]
        return json.dumps(items[0] if len(items) == 1 else items)


def test_one_removed_container_does_not_hide_the_others(tmp_path: Path) -> None:
    node = FakeNode()
    recorder = Recorder(
        api=None,
        namespace="ns",
        run_id="run",
        run_dir=tmp_path,
        node_workers={"node-1": "fast"},
        exec_in_node=node,
    )
    recorder._sample_once("node-1")
    recorded = sorted(recorder.attempts(), key=lambda r: r.attempt)
    assert [r.attempt for r in recorded] == [0, 2]
    assert all(r.finished_at_ns is not None for r in recorded)
    assert recorded[0].started_at_ns % 1_000_000_000 == 1
    assert any("gone" in message for message in recorder.errors.messages)
    # The batch was tried first, then every container on its own.
    inspects = [call[2:] for call in node.calls if call[:2] == ["crictl", "inspect"]]
    assert inspects[0] == ["first", "gone", "second"]
    assert ["first"] in inspects
    assert ["second"] in inspects
