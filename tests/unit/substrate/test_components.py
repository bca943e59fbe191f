"""The node image's Go programs per release, and the wrapper modules that build them (pure)."""

from __future__ import annotations

import pytest

from crashloop_harness.core import pins
from crashloop_harness.substrate.nodeimage.components import components_for, etcd, kubernetes
from crashloop_harness.substrate.nodeimage.gobuild import local_replacements, wrapper_go_mod

ETCD_35_GO_MOD = """module go.etcd.io/etcd/server/v3

replace (
\tgo.etcd.io/etcd/api/v3 => ../api
\tgo.etcd.io/etcd/client/v2 => ../client/internal/v2
\tgo.etcd.io/etcd/client/v3 => ../client/v3
\tgo.etcd.io/etcd/FORBIDDEN_DEPENDENCY => ./FORBIDDEN_DEPENDENCY
)
"""
K8S_GO_MOD = """module k8s.io/kubernetes

replace k8s.io/api => ./staging/src/k8s.io/api
"""


def test_etcd_35_builds_its_v2_client_at_the_v2_tag() -> None:
    component = etcd(pins.kubernetes_pin("1.33"))
    assert component.version == "v3.5.24"
    text = wrapper_go_mod(component, ETCD_35_GO_MOD)
    assert "replace go.etcd.io/etcd/client/v2 => go.etcd.io/etcd/client/v2 v2.305.24" in text
    assert "replace go.etcd.io/etcd/client/v3 => go.etcd.io/etcd/client/v3 v3.5.24" in text
    assert "FORBIDDEN" not in text


def test_kubernetes_staging_modules_take_the_v0_tag_of_the_release() -> None:
    component = kubernetes(pins.kubernetes_pin("1.34"))
    text = wrapper_go_mod(component, K8S_GO_MOD)
    assert "require k8s.io/kubernetes v1.34.11" in text
    assert "replace k8s.io/api => k8s.io/api v0.34.11" in text


def test_local_replacements_skip_directories_that_are_not_modules() -> None:
    assert local_replacements(ETCD_35_GO_MOD) == [
        "go.etcd.io/etcd/api/v3",
        "go.etcd.io/etcd/client/v2",
        "go.etcd.io/etcd/client/v3",
    ]


@pytest.mark.parametrize("minor", list(pins.KUBERNETES))
def test_each_release_builds_its_kubernetes_etcd_and_coredns_and_shares_the_rest(
    minor: str,
) -> None:
    pin = pins.KUBERNETES[minor]
    built = {c.name: c for c in components_for(pin)}
    assert built["kubernetes"].version == pin.version
    assert built["etcd"].version == pin.etcd_version
    assert built["coredns"].version == pin.coredns_version
    shared = components_for(pins.DEFAULT_KUBERNETES)
    for component in shared:
        if component.name in ("containerd", "runc", "cni-plugins", "crictl"):
            assert built[component.name].key_parts() == component.key_parts()
    assert built["kubernetes"].toolchain == pin.go_toolchain


def test_only_the_next_releases_beta_needs_a_newer_go() -> None:
    needing = [pin.version for pin in pins.KUBERNETES.values() if pin.go_toolchain]
    assert needing == ["v1.38.0-beta.0"]
