"""Parsing crictl output from a kind node (crashloop_harness.recording.cri).

The fixtures in data/ follow the shapes cri-tools v1.34 prints: `crictl ps -o
json` is protojson (int64 as strings, two spaces after colons), `crictl
inspect` is Go encoding/json with times rewritten as RFC3339Nano.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crashloop_harness.recording.cri import (
    STATE_CREATED,
    STATE_EXITED,
    STATE_RUNNING,
    CriFormatError,
    CriSandbox,
    parse_inspect,
    parse_inspect_all,
    parse_pods,
    parse_ps,
    parse_rfc3339_nano,
    parse_unix_ns,
)

DATA = Path(__file__).parents[1] / "data"
POD_UID = "7c1f1e2a-4b7d-4a53-9a55-2f0d7e3c9b10"
SANDBOX = "4e2a9c7b5d3f1e8a6c4b2d0f9e7a5c3b1d8f6e4a2c0b9d7f5e3a1c8b6d4f2e0a"
# 2026-01-01T10:00:00Z
T0 = 1_767_261_600 * 1_000_000_000


def fixture(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


# --- RFC3339Nano ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-01T10:00:00Z", T0),
        ("2026-01-01T10:00:00.123456789Z", T0 + 123_456_789),
        # Go drops trailing zeros: ".5873" is 587_300_000ns, not 5873ns.
        ("2026-01-01T10:00:00.5873Z", T0 + 587_300_000),
        ("2026-01-01T10:00:00.000000001Z", T0 + 1),
        ("2026-01-01T10:00:00.1Z", T0 + 100_000_000),
        # The node's local zone: crictl formats in time.Local.
        ("2026-01-01T12:00:00.000000007+02:00", T0 + 7),
        ("2026-01-01T04:30:00.999999999-05:30", T0 + 999_999_999),
        ("2026-01-01t10:00:00z", T0),
        ("1970-01-01T00:00:00.000000001Z", 1),
    ],
)
def test_rfc3339_nano_is_exact_to_the_nanosecond(text: str, expected: int) -> None:
    assert parse_rfc3339_nano(text) == expected


def test_rfc3339_nano_keeps_what_datetime_would_round() -> None:
    # Two instants 1ns apart must stay apart (datetime would make both ...456789000).
    a = parse_rfc3339_nano("2026-01-01T10:00:00.123456788Z")
    b = parse_rfc3339_nano("2026-01-01T10:00:00.123456789Z")
    assert a is not None
    assert b is not None
    assert b - a == 1


@pytest.mark.parametrize(
    "text",
    [
        "0001-01-01T00:00:00Z",  # Go's zero time.Time
        "1970-01-01T00:00:00Z",  # time.Unix(0, 0) in UTC
        "1970-01-01T01:00:00+01:00",  # time.Unix(0, 0) in a node's local zone
    ],
)
def test_zero_times_mean_unknown(text: str) -> None:
    assert parse_rfc3339_nano(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "",
        "2026-01-01 10:00:00Z",
        "2026-01-01T10:00:00",  # no zone
        "2026-01-01T10:00:00.1234567891Z",  # ten fraction digits
        "2026-02-30T10:00:00Z",
        "2026-01-01T24:00:00Z",
        "2026-01-01T10:00:60Z",
        "2026-01-01T10:00:00+24:00",
        "2026-01-01T10:00:00Z ",
        "1767261600123456789",
    ],
)
def test_rfc3339_nano_rejects_what_go_never_prints(text: str) -> None:
    with pytest.raises(CriFormatError, match=r"RFC 3339|impossible"):
        parse_rfc3339_nano(text)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1767261600123456789", T0 + 123_456_789), (T0 + 5, T0 + 5), ("0", None), (0, None)],
)
def test_unix_ns(value: object, expected: int | None) -> None:
    assert parse_unix_ns(value) == expected


@pytest.mark.parametrize("value", [1.7672616e18, "1.5", True, None, "12ab"])
def test_unix_ns_refuses_lossy_or_odd_values(value: object) -> None:
    with pytest.raises(CriFormatError):
        parse_unix_ns(value)


# --- crictl ps -a -o json ------------------------------------------------------------------


def test_ps_reads_every_container_in_order() -> None:
    containers = parse_ps(fixture("crictl_ps_a.json"))
    assert [(c.name, c.attempt, c.state) for c in containers] == [
        ("app", 4, STATE_RUNNING),
        ("app", 3, STATE_EXITED),
        ("kube-proxy", 0, STATE_RUNNING),
    ]


def test_ps_identity_and_created_time() -> None:
    running, exited, _ = parse_ps(fixture("crictl_ps_a.json"))
    assert exited.id == "e41f7a2c9d5b3e1f8a6c4d2b0e9f7a5c3d1b8e6f4a2c0d9b7e5f3a1c8d6b4e2f"
    assert exited.pod_sandbox_id == SANDBOX
    assert (exited.pod_namespace, exited.pod_name, exited.pod_uid) == (
        "crashloop-e2e",
        "crashloop-fast",
        POD_UID,
    )
    assert exited.key == (POD_UID, "app", 3)
    # createdAt is a protojson int64 string: every nanosecond survives.
    assert exited.created_at_ns == 1_767_261_606_512_345_678
    assert running.created_at_ns == 1_767_261_608_701_234_567


def test_ps_has_no_start_finish_or_exit_code() -> None:
    for container in parse_ps(fixture("crictl_ps_a.json")):
        assert container.started_at_ns is None
        assert container.finished_at_ns is None
        assert container.exit_code is None


def test_ps_empty_list() -> None:
    assert parse_ps('{\n  "containers":  []\n}') == []


@pytest.mark.parametrize(
    "text",
    ["not json", "[]", '{"items": []}', '{"containers": [{"state": "CONTAINER_RUNNING"}]}'],
)
def test_ps_rejects_other_shapes(text: str) -> None:
    with pytest.raises(CriFormatError):
        parse_ps(text)


def test_attempt_falls_back_to_metadata_without_the_kubelet_annotation() -> None:
    doc = json.loads(fixture("crictl_ps_a.json"))
    del doc["containers"][1]["annotations"]["io.kubernetes.container.restartCount"]
    assert parse_ps(json.dumps(doc))[1].attempt == 3


def test_annotation_wins_over_metadata_attempt() -> None:
    doc = json.loads(fixture("crictl_ps_a.json"))
    doc["containers"][1]["metadata"]["attempt"] = 9
    assert parse_ps(json.dumps(doc))[1].attempt == 3


def test_unreadable_attempt_is_an_error() -> None:
    doc = json.loads(fixture("crictl_ps_a.json"))
    doc["containers"][1]["annotations"]["io.kubernetes.container.restartCount"] = "three"
    with pytest.raises(CriFormatError, match="attempt"):
        parse_ps(json.dumps(doc))


def test_numeric_state_is_understood() -> None:
    doc = json.loads(fixture("crictl_ps_a.json"))
    doc["containers"][1]["state"] = 2
    assert parse_ps(json.dumps(doc))[1].state == STATE_EXITED


def test_unknown_state_is_an_error() -> None:
    doc = json.loads(fixture("crictl_ps_a.json"))
    doc["containers"][1]["state"] = "CONTAINER_PAUSED"
    with pytest.raises(CriFormatError, match="CONTAINER_PAUSED"):
        parse_ps(json.dumps(doc))


# --- crictl inspect ------------------------------------------------------------------------


def test_inspect_exited_container() -> None:
    container = parse_inspect(fixture("crictl_inspect_exited.json"))
    assert container.id == "e41f7a2c9d5b3e1f8a6c4d2b0e9f7a5c3d1b8e6f4a2c0d9b7e5f3a1c8d6b4e2f"
    assert container.pod_sandbox_id == SANDBOX  # from containerd's verbose info
    assert container.key == (POD_UID, "app", 3)
    assert container.state == STATE_EXITED
    assert container.created_at_ns == T0 + 6_512_345_678
    assert container.started_at_ns == T0 + 6_587_300_000
    assert container.finished_at_ns == T0 + 6_634_170_000
    assert container.exit_code == 1
    assert container.reason == "Error"


def test_inspect_running_container_has_no_finish_or_exit_code() -> None:
    container = parse_inspect(fixture("crictl_inspect_running_quiet.json"))
    assert container.state == STATE_RUNNING
    assert container.attempt == 4
    assert container.started_at_ns == T0 + 8_779_012_345
    assert container.finished_at_ns is None  # "0001-01-01T00:00:00Z"
    assert container.exit_code is None  # the runtime's 0 means "not yet"
    assert container.pod_sandbox_id is None  # no verbose info with --quiet
    assert container.reason == ""


def test_inspect_several_ids_prints_a_list_in_the_local_zone() -> None:
    created, oom = parse_inspect_all(fixture("crictl_inspect_two_local_zone.json"))
    assert created.state == STATE_CREATED
    assert created.started_at_ns is None
    assert created.finished_at_ns is None
    assert created.created_at_ns == T0 + 10_000_000_001
    assert oom.attempt == 2
    assert oom.started_at_ns == T0 - 11_700_000_000
    assert oom.finished_at_ns == T0 - 10_000_000_000 + 999
    assert (oom.exit_code, oom.reason) == (137, "OOMKilled")
    assert oom.pod_sandbox_id == created.pod_sandbox_id


def test_parse_inspect_refuses_several() -> None:
    with pytest.raises(CriFormatError, match="one container, got 2"):
        parse_inspect(fixture("crictl_inspect_two_local_zone.json"))


def test_inspect_of_unrewritten_status_takes_int64_strings() -> None:
    # A status that skipped crictl's time rewrite keeps protojson's int64 strings.
    doc = json.loads(fixture("crictl_inspect_exited.json"))
    doc["status"]["startedAt"] = "1767261606587300001"
    assert parse_inspect(json.dumps(doc)).started_at_ns == T0 + 6_587_300_001


def test_inspect_without_status_is_an_error() -> None:
    with pytest.raises(CriFormatError, match="status"):
        parse_inspect('{"info": {}}')


def test_inspect_non_integer_exit_code_is_an_error() -> None:
    doc = json.loads(fixture("crictl_inspect_exited.json"))
    doc["status"]["exitCode"] = "1"
    with pytest.raises(CriFormatError, match="exitCode"):
        parse_inspect(json.dumps(doc))


def _sandbox(name: str, namespace: str, state: object) -> dict[str, object]:
    # The shape of `crictl pods -o json` (ListPodSandboxResponse through protojson).
    return {
        "id": "4c1d",
        "metadata": {"name": name, "uid": "u", "namespace": namespace, "attempt": 0},
        "state": state,
        "createdAt": "1767261600123456789",
        "labels": {},
        "annotations": {},
        "runtimeHandler": "",
    }


def test_sandboxes_are_read_with_their_namespace_and_whether_they_are_ready() -> None:
    text = json.dumps(
        {
            "items": [
                _sandbox("kube-proxy-x", "kube-system", "SANDBOX_READY"),
                _sandbox("crash-fast-7", "crashloop-overhead-abc", "SANDBOX_NOTREADY"),
                _sandbox("idle-fast-1", "crashloop-overhead-abc", 0),  # an enum as its number
            ]
        }
    )
    assert parse_pods(text) == [
        CriSandbox("kube-proxy-x", "kube-system", ready=True),
        CriSandbox("crash-fast-7", "crashloop-overhead-abc", ready=False),
        CriSandbox("idle-fast-1", "crashloop-overhead-abc", ready=True),
    ]


def test_no_sandbox_is_an_empty_list_or_none_at_all() -> None:
    assert parse_pods('{"items": []}') == []
    assert parse_pods("{}") == []  # protojson leaves an empty list out


@pytest.mark.parametrize(
    "text", ["[]", '{"items": {}}', '{"items": [3]}', '{"items": [{"metadata": 1}]}', "not json"]
)
def test_sandboxes_in_another_shape_are_refused(text: str) -> None:
    with pytest.raises(CriFormatError, match=r"crictl pods|items|not JSON|expected"):
        parse_pods(text)
