"""An existing cluster's nodes chosen, its kubeconfig read, its kubelets compared (pure parts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
import urllib3
import yaml

from crashloop_harness.cli.app import build_parser
from crashloop_harness.cli.common import resolve_kubeconfig
from crashloop_harness.cluster import remote
from crashloop_harness.cluster.kube import NodeStatus
from crashloop_harness.cluster.kubeconfig import kubectl_default_kubeconfig, remote_api
from crashloop_harness.cluster.liveconfig import row_for
from crashloop_harness.cluster.profiles import ClusterSpec
from crashloop_harness.cluster.remote import (
    connect,
    restarted_kubelets,
    select_nodes,
)
from crashloop_harness.core.errors import HarnessError


def _node(name: str, ready: bool = True, **labels: str) -> NodeStatus:
    return NodeStatus(name=name, ready=ready, kubelet_version="v1.35.8", labels=labels)


NODES = [
    _node("a", pool="batch", gpu="yes"),
    _node("b", pool="batch"),
    _node("c", pool="web"),
    _node("d", ready=False, pool="web"),
]


def test_nodes_are_chosen_by_name_in_the_order_given() -> None:
    assert [s.name for s in select_nodes(NODES, ["c", "a"], None)] == ["c", "a"]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [("pool=batch", ["a", "b"]), ("gpu", ["a"]), ("pool=batch,gpu=yes", ["a"])],
)
def test_nodes_are_chosen_by_label(selector: str, expected: list[str]) -> None:
    assert [s.name for s in select_nodes(NODES, [], selector)] == expected


def test_an_unknown_node_is_refused_naming_the_nodes_there_are() -> None:
    with pytest.raises(HarnessError, match=r"(?s)no node x.*a, b, c, d"):
        select_nodes(NODES, ["x"], None)


def test_a_selector_that_matches_nothing_is_refused() -> None:
    with pytest.raises(HarnessError, match="no node matches"):
        select_nodes(NODES, [], "pool=db")


def test_a_node_that_is_not_ready_is_refused() -> None:
    with pytest.raises(HarnessError, match="node d is not Ready"):
        select_nodes(NODES, [], "pool=web")


def test_a_kubelet_with_another_start_time_restarted() -> None:
    before = {"a": 100.0, "b": 100.0, "c": None}
    after = {"a": 100.0, "b": 250.0, "c": 300.0}
    (problem,) = restarted_kubelets(before, after)
    assert "node b" in problem
    assert "restarted" in problem
    assert "could not be read" in restarted_kubelets({"a": 1.0}, {"a": None})[0]


def _kubeconfig(tmp_path: Path, current: str | None = "ops") -> Path:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "ops", "context": {"cluster": "c", "user": "u"}}],
    }
    if current:
        doc["current-context"] = current
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_a_missing_context_is_named_with_those_there_are(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match=r"(?s)no context 'prod'.*ops"):
        remote_api(_kubeconfig(tmp_path), "prod")


def test_a_kubeconfig_without_a_current_context_asks_for_one(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="sets no current context"):
        remote_api(_kubeconfig(tmp_path, current=None), None)


def test_choosing_no_nodes_or_both_ways_is_refused_before_the_api_is_asked(
    tmp_path: Path,
) -> None:
    path = tmp_path / "never-read"
    path.write_text("")
    common = {"context": None, "workload_image": "w", "namespace": None}
    with pytest.raises(HarnessError, match="none named"):
        connect(path, nodes=[], selector=None, **common)  # type: ignore[arg-type]
    with pytest.raises(HarnessError, match="both named and selected"):
        connect(path, nodes=["a"], selector="pool", **common)  # type: ignore[arg-type]


def test_a_missing_kubeconfig_is_named_as_such(tmp_path: Path) -> None:
    common = {"context": None, "workload_image": "w", "namespace": None, "selector": None}
    with pytest.raises(HarnessError, match=r"kubeconfig .*missing: no such file"):
        connect(tmp_path / "missing", nodes=["a"], **common)  # type: ignore[arg-type]
    with pytest.raises(HarnessError, match="a directory, not a file"):
        connect(tmp_path, nodes=["a"], **common)  # type: ignore[arg-type]


def test_an_api_server_that_does_not_answer_is_named(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="did not answer"):
        connect(
            _kubeconfig(tmp_path),
            context=None,
            nodes=["a"],
            selector=None,
            workload_image="w",
            namespace=None,
        )


def test_a_kubeconfig_list_is_read_merged_as_kubectl_merges_it(tmp_path: Path) -> None:
    first = tmp_path / "first"
    first.mkdir()
    second = tmp_path / "second"
    second.mkdir()
    missing = tmp_path / "missing"
    _kubeconfig(first, current=None)
    _kubeconfig(second, current="ops")
    listed = Path(f"{missing}:{first / 'kubeconfig'}:{second / 'kubeconfig'}")
    # The missing file is passed over; the second file's current context is the first set.
    api = remote_api(listed, None)
    assert api.configuration.host == "https://127.0.0.1:1"
    with pytest.raises(HarnessError, match=r"(?s)no context 'prod'.*ops"):
        remote_api(listed, "prod")


def test_a_list_with_no_file_names_every_one(tmp_path: Path) -> None:
    listed = Path(f"{tmp_path / 'a'}:{tmp_path}")
    with pytest.raises(HarnessError) as raised:
        remote_api(listed, None)
    assert f"{tmp_path / 'a'}: no such file" in raised.value.problem
    assert f"{tmp_path}: a directory, not a file" in raised.value.problem


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["check", "--kubeconfig"], "from-env"),
        (["check", "--context", "ops"], "from-env"),
        (["check", "--kubeconfig", "given"], "given"),
        (["check"], None),
    ],
)
def test_kubectl_s_own_kubeconfig_is_read_when_none_is_named(
    argv: list[str], expected: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUBECONFIG", "from-env")
    args = build_parser().parse_args(argv)
    resolve_kubeconfig(args)
    assert args.kubeconfig == expected


def test_without_kubeconfig_set_kubectl_s_default_file_is_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert kubectl_default_kubeconfig() == tmp_path / ".kube" / "config"


def test_a_node_whose_kubelet_cannot_be_read_is_left_out_and_the_others_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A blocked kubelet port: its /configz read times out. The other nodes are judged; only
    when none can be read is the check refused, with the first node's own error."""
    live: dict[str, Any] = {
        "kubeletconfig": {"crashLoopBackOff": {"maxContainerRestartPeriod": "2s"}}
    }

    def configz(_api: object, node: str) -> dict[str, Any]:
        if node == "b":
            raise urllib3.exceptions.ReadTimeoutError(
                cast(Any, None), "/configz", "Read timed out."
            )
        return live

    monkeypatch.setattr(remote, "node_configz", configz)
    rows, left_out = remote.readable_rows(cast(Any, None), NODES[:2])
    assert [row.worker for row in rows] == ["a"]
    assert set(left_out) == {"b"}
    assert "its kubelet's config could not be read" in left_out["b"]
    assert "Read timed out" in left_out["b"]
    with pytest.raises(urllib3.exceptions.ReadTimeoutError):
        remote.readable_rows(cast(Any, None), [NODES[1]])


def test_a_check_s_summary_names_the_route_to_its_own_nodes_kubelets_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fleet's checks in one pod share its routes: each summary keeps its own nodes'."""
    routes = {"a": "direct", "b": "node proxy: a direct read of /configz was refused: 403"}
    monkeypatch.setattr(remote, "kubelet_routes_of", lambda _api: routes)
    cluster = remote.RemoteCluster(
        kubeconfig=Path("kubeconfig"), context=None, nodes=("b",), workload_image="w", name="x"
    )
    row = row_for(
        "b",
        {},
        {"kubeletconfig": {}},
        ClusterSpec(name="-", path=Path("-"), workers=()),
        "v1.35.8",
    )
    assert cluster.describe([row]).kubelet_access == {"b": routes["b"]}
