"""Evidence collection (crashloop_harness.cluster.evidence): never raising, no cluster."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar, NoReturn

import pytest
import yaml
from kubernetes import client

from crashloop_harness.cluster import evidence
from crashloop_harness.cluster.evidence import (
    ERRORS_FILE,
    collect_failure_evidence,
    collect_namespace_evidence,
    collect_node_configs,
    evidence_dir,
)
from crashloop_harness.cluster.kindlogs import KIND_LOGS_MARKER, export_kind_logs

# --- collectors never raise, and say why -----------------------------------


class RaisingApi:
    """An API client on which every call fails, as one whose cluster is gone."""

    def __getattr__(self, name: str) -> Any:
        def fail(*_args: object, **_kwargs: object) -> NoReturn:
            raise ConnectionRefusedError(f"[Errno 111] Connection refused ({name})")

        return fail


def errors_of(target: Path) -> str:
    return (target / ERRORS_FILE).read_text()


def test_namespace_evidence_records_an_unreachable_api(tmp_path: Path) -> None:
    api: Any = RaisingApi()
    ns_dir = collect_namespace_evidence(api, "crashloop-x", tmp_path)
    assert ns_dir == tmp_path / "crashloop-x"
    errors = errors_of(tmp_path)
    assert "namespace crashloop-x: listing pods: ConnectionRefusedError" in errors
    assert "namespace crashloop-x: events: ConnectionRefusedError" in errors


def test_node_configs_record_an_unreachable_api(tmp_path: Path) -> None:
    api: Any = RaisingApi()
    assert collect_node_configs(api, tmp_path) == tmp_path / "nodes"
    assert "nodes: listing: ConnectionRefusedError" in errors_of(tmp_path)


def test_all_collectors_write_to_one_errors_file(tmp_path: Path) -> None:
    api: Any = RaisingApi()
    collect_failure_evidence(api, ["a", "b"], tmp_path)
    lines = errors_of(tmp_path).splitlines()
    assert len(lines) == 5  # pods and events of a and b, and the node list


def test_an_unwritable_target_does_not_raise(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    api: Any = RaisingApi()
    collect_failure_evidence(api, ["a"], blocked / "evidence")


def api_error(status: int, reason: str, message: str) -> client.ApiException:
    error = client.ApiException(status=status, reason=reason)
    error.body = f'{{"kind":"Status","message":"{message}"}}'.encode()
    return error


def pod(name: str, containers: list[str], init: list[str] | None = None) -> client.V1Pod:
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, namespace="ns"),
        spec=client.V1PodSpec(
            containers=[client.V1Container(name=c) for c in containers],
            init_containers=[client.V1Container(name=c) for c in init or []],
            node_name="node-a",
        ),
    )


def event(reason: str, at: datetime | None) -> client.CoreV1Event:
    return client.CoreV1Event(
        metadata=client.V1ObjectMeta(name=f"e-{reason}"),
        involved_object=client.V1ObjectReference(kind="Pod", name="crash"),
        reason=reason,
        type="Normal",
        message=f"{reason} happened",
        last_timestamp=at,
        count=3,
    )


class Response:
    def __init__(self, data: bytes) -> None:
        self.data = data


class FakeCore:
    """CoreV1Api with one crashing pod: one container restarted, one never did,
    one whose logs the API refuses."""

    def __init__(self, _api: object) -> None:
        pass

    def list_namespaced_pod(self, namespace: str, **_: object) -> client.V1PodList:
        return client.V1PodList(items=[pod("crash", ["app", "mute", "gone"], init=["proxy"])])

    def list_namespaced_event(self, namespace: str, **_: object) -> client.CoreV1EventList:
        late = datetime(2026, 1, 1, 10, 0, 5, tzinfo=UTC)
        early = datetime(2026, 1, 1, 10, 0, 1, tzinfo=UTC)
        return client.CoreV1EventList(
            items=[event("BackOff", late), event("Started", early), event("Undated", None)]
        )

    def read_namespaced_pod_log(
        self, name: str, namespace: str, *, container: str, previous: bool, **_: object
    ) -> Response:
        if container == "mute":
            raise api_error(403, "Forbidden", "logs are forbidden")
        if container == "gone" and previous:
            # What the v1.35 kubelet answers, with HTTP 200, for an attempt it
            # already removed.
            return Response(b"unable to retrieve container logs for containerd://0123abcd")
        if container == "proxy" and previous:
            raise api_error(
                400,
                "Bad Request",
                f'previous terminated container \\"proxy\\" in pod \\"{name}\\" not found',
            )
        return Response(f"{container} previous={previous}\n".encode())


@pytest.fixture
def fake_core(monkeypatch: pytest.MonkeyPatch) -> Iterator[client.ApiClient]:
    # crashloop_harness.cluster.evidence builds its CoreV1Api from the client module at call
    # time; monkeypatch restores the real class after the test.
    monkeypatch.setattr(client, "CoreV1Api", FakeCore)
    # A real ApiClient only for its model serialisation; it never connects.
    api = client.ApiClient()
    yield api
    api.close()


def test_pods_logs_and_events_are_written(fake_core: client.ApiClient, tmp_path: Path) -> None:
    ns_dir = collect_namespace_evidence(fake_core, "ns", tmp_path)
    pod_yaml = yaml.safe_load((ns_dir / "pods" / "crash.yaml").read_text())
    assert pod_yaml["kind"] == "Pod"
    assert pod_yaml["apiVersion"] == "v1"
    assert pod_yaml["spec"]["initContainers"][0]["name"] == "proxy"

    logs = ns_dir / "logs" / "crash"
    assert (logs / "app.log").read_text() == "app previous=False\n"
    assert (logs / "app.previous.log").read_text() == "app previous=True\n"
    assert (logs / "proxy.log").exists()
    # A container that never restarted: the reason is kept, and it is no error.
    assert "not found" in (logs / "proxy.previous.unavailable.txt").read_text()
    # The kubelet's note about a removed container is no log line either.
    assert not (logs / "gone.previous.log").exists()
    gone = (logs / "gone.previous.unavailable.txt").read_text()
    assert gone.startswith(
        "no previous log: LogUnavailableError: unable to retrieve container logs"
    )
    assert "keeps one dead container" in gone

    events_txt = (ns_dir / "events.txt").read_text().splitlines()
    assert [line.split()[2] for line in events_txt] == ["Undated", "Started", "BackOff"]
    assert events_txt[2] == (
        "2026-01-01T10:00:05+00:00 Normal BackOff Pod/crash (x3): BackOff happened"
    )
    events_yaml = yaml.safe_load((ns_dir / "events.yaml").read_text())
    assert [e["reason"] for e in events_yaml] == ["Undated", "Started", "BackOff"]


def test_a_refused_log_is_an_error_and_the_rest_is_still_collected(
    fake_core: client.ApiClient, tmp_path: Path
) -> None:
    collect_namespace_evidence(fake_core, "ns", tmp_path)
    errors = errors_of(tmp_path).splitlines()
    assert len(errors) == 2
    assert errors[0].endswith(
        "pod ns/crash container mute: current log: HTTP 403 Forbidden: logs are forbidden"
    )
    assert "container mute: previous log: HTTP 403" in errors[1]
    # The unexpected refusal is also written where the previous log would be.
    unavailable = tmp_path / "ns" / "logs" / "crash" / "mute.previous.unavailable.txt"
    assert "403" in unavailable.read_text()
    assert (tmp_path / "ns" / "events.txt").exists()


# --- kind export logs --------------------------------------------------------


def fake_kind(tmp_path: Path, exit_code: int) -> tuple[Path, Path]:
    """A kind stand-in that logs its calls; the real one is tested end to end."""
    calls = tmp_path / "calls"
    kind = tmp_path / "kind"
    kind.write_text(f'#!/bin/sh\necho "$@" >> {calls}\necho boom >&2\nexit {exit_code}\n')
    kind.chmod(kind.stat().st_mode | stat.S_IXUSR)
    return kind, calls


def test_kind_logs_are_exported_once(tmp_path: Path) -> None:
    kind, calls = fake_kind(tmp_path, 0)
    target = tmp_path / "kind-logs"
    assert export_kind_logs(kind, "crashloop", target) == target
    export_kind_logs(kind, "crashloop", target)
    assert calls.read_text().splitlines() == [f"export logs {target} --name crashloop"]
    assert "exported" in (target / KIND_LOGS_MARKER).read_text()
    assert not (target / ERRORS_FILE).exists()


def test_a_failed_kind_export_is_recorded_and_not_retried(tmp_path: Path) -> None:
    kind, calls = fake_kind(tmp_path, 1)
    target = tmp_path / "kind-logs"
    export_kind_logs(kind, "crashloop", target)
    export_kind_logs(kind, "crashloop", target)
    assert len(calls.read_text().splitlines()) == 1
    assert "failed" in (target / KIND_LOGS_MARKER).read_text()
    assert "kind export logs crashloop: `" in errors_of(target)
    assert "boom" in errors_of(target)


def test_a_missing_kind_binary_is_recorded(tmp_path: Path) -> None:
    export_kind_logs(tmp_path / "no-kind", "crashloop", tmp_path / "logs")
    assert "command not found" in errors_of(tmp_path / "logs")


def test_evidence_dir_is_one_safe_directory_per_test(tmp_path: Path) -> None:
    path = evidence_dir(tmp_path, "tests/e2e/test_x.py::test_y[fast-../../etc]")
    assert path == tmp_path / "evidence" / "tests-e2e-test_x.py-test_y-fast-..-..-etc"
    assert path.parent == tmp_path / "evidence"


class SharedNamespaceCore(FakeCore):
    """A namespace a fleet's checks share: this run's pod, a sibling's, and their events."""

    selectors: ClassVar[list[str]] = []

    def list_namespaced_pod(self, namespace: str, **kwargs: object) -> client.V1PodList:
        selector = str(kwargs.get("label_selector", ""))
        SharedNamespaceCore.selectors.append(selector)
        mine = pod("crash", ["app"])
        sibling = pod("sibling", ["app"])
        return client.V1PodList(items=[mine] if selector else [mine, sibling])

    def list_namespaced_event(self, namespace: str, **_: object) -> client.CoreV1EventList:
        theirs = event("Killing", None)
        theirs.involved_object = client.V1ObjectReference(kind="Pod", name="sibling")
        return client.CoreV1EventList(items=[event("BackOff", None), theirs])


def test_a_run_s_evidence_in_a_shared_namespace_is_its_own(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(client, "CoreV1Api", SharedNamespaceCore)
    api = client.ApiClient()
    try:
        ns_dir = collect_namespace_evidence(api, "ns", tmp_path, "crashloop.dev/run=r1")
    finally:
        api.close()
    assert SharedNamespaceCore.selectors[-1] == "crashloop.dev/run=r1"
    assert sorted(p.name for p in (ns_dir / "pods").iterdir()) == ["crash.yaml"]
    events = (ns_dir / "events.txt").read_text()
    assert "Pod/crash" in events
    assert "sibling" not in events


def test_only_the_run_s_nodes_configs_are_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    read: list[str] = []

    def configz(_api: object, name: str) -> dict[str, Any]:
        read.append(name)
        return {"kubeletconfig": {}}

    monkeypatch.setattr("crashloop_harness.cluster.evidence.node_configz", configz)
    collect_node_configs(RaisingApi(), tmp_path, ["w2", "w1"])
    assert read == ["w1", "w2"]
    assert sorted(p.name for p in (tmp_path / "nodes").iterdir()) == [
        "w1.configz.json",
        "w2.configz.json",
    ]


def test_a_node_whose_kubelet_stopped_is_asked_for_no_log_and_no_config(
    fake_core: client.ApiClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each request would wait out its timeout on a kubelet that cannot answer: the run ended
    minutes after its verdict. Its pods and events are still kept; where a log or config would
    be, why there is none."""
    asked: list[str] = []
    monkeypatch.setattr(
        FakeCore, "read_namespaced_pod_log", lambda self, name, *_, **__: asked.append(name)
    )
    monkeypatch.setattr(evidence, "node_configz", lambda _api, name: asked.append(name))
    collect_failure_evidence(fake_core, ["ns"], tmp_path, nodes=["node-a"], silent=["node-a"])
    assert asked == []
    logs = tmp_path / "ns" / "logs" / "crash"
    assert "node node-a's kubelet stopped answering" in (logs / "app.unavailable.txt").read_text()
    assert (tmp_path / "ns" / "pods" / "crash.yaml").exists()
    assert (tmp_path / "ns" / "events.txt").exists()
    note = (tmp_path / "nodes" / "node-a.configz.unavailable.txt").read_text()
    assert note.startswith("not asked: its kubelet stopped answering")
