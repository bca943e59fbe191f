"""The fleet asks each cluster first: the check's roles' rules, each one reviewed."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from kubernetes import client

from crashloop_harness.fleet.access import (
    missing_permissions,
    missing_words,
    needed_permissions,
)


def test_the_rules_come_from_the_rbac_file_in_the_shared_namespace() -> None:
    needed = {p.describe(): p.role for p in needed_permissions("team-ns")}
    assert needed["create pods in namespace team-ns"] == "crashloop-check"
    assert needed["get nodes/proxy cluster-wide"] == "crashloop-check-node-proxy"
    assert "get nodes/configz cluster-wide" not in needed
    assert needed["get leases in namespace kube-node-lease"] == "crashloop-check-leases"
    # The scenarios' StatefulSets are not the check's.
    assert not any("statefulsets" in what for what in needed)
    assert not any("namespaces" in what for what in needed)


def test_without_a_namespace_the_checks_make_their_own() -> None:
    needed = {p.describe() for p in needed_permissions(None)}
    assert {"create namespaces cluster-wide", "delete namespaces cluster-wide"} <= needed


def test_what_the_api_server_refuses_is_named_with_its_role(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[Any] = []

    class Reviews:
        def __init__(self, _api: object) -> None:
            pass

        def create_self_subject_access_review(self, review: Any, **_: object) -> Any:
            attributes = review.spec.resource_attributes
            asked.append(attributes)
            allowed = not (attributes.resource == "pods" and attributes.verb == "create")
            return SimpleNamespace(status=SimpleNamespace(allowed=allowed))

    monkeypatch.setattr(client, "AuthorizationV1Api", Reviews)
    missing = missing_permissions(client.ApiClient(), needed_permissions("team-ns"))
    assert [p.describe() for p in missing] == ["create pods in namespace team-ns"]
    proxy = next(a for a in asked if a.subresource == "proxy")
    assert (proxy.resource, proxy.namespace) == ("nodes", None)
    words = missing_words("prod-eu", missing)
    assert words == (
        "context prod-eu may not create pods in namespace team-ns "
        "(role crashloop-check of `crashloop rbac`)"
    )


def test_a_fleet_in_its_own_cluster_needs_the_direct_reads_not_the_node_proxy() -> None:
    needed = {p.describe(): p.role for p in needed_permissions("ns", direct=True)}
    assert needed["get nodes/configz cluster-wide"] == "crashloop-check-nodes"
    assert needed["get nodes/metrics cluster-wide"] == "crashloop-check-nodes"
    assert not any("nodes/proxy" in what for what in needed)
