"""Inside a pod: the cluster it runs in, through its ServiceAccount, with no kubeconfig given."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from crashloop_harness.cli import common
from crashloop_harness.cluster import incluster, kubeconfig
from crashloop_harness.cluster.incluster import (
    IN_CLUSTER_CONTEXT,
    in_a_pod,
    write_in_cluster_kubeconfig,
)
from crashloop_harness.cluster.kubeconfig import remote_api

POD_ENV = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}


@pytest.fixture
def account(tmp_path: Path) -> Path:
    """A ServiceAccount mount as the kubelet makes it: token, CA, namespace."""
    mount = tmp_path / "serviceaccount"
    mount.mkdir()
    (mount / "token").write_text("the-token")
    (mount / "ca.crt").write_text("-----BEGIN CERTIFICATE-----\n")
    (mount / "namespace").write_text("crashloop-check\n")
    return mount


def test_a_pod_is_known_by_its_environment_and_its_mounted_token(account: Path) -> None:
    assert in_a_pod(POD_ENV, account)
    assert not in_a_pod({}, account)
    assert not in_a_pod(POD_ENV, account.parent / "nowhere")


def test_its_kubeconfig_reaches_the_service_with_the_token_and_ca_by_their_files(
    account: Path, tmp_path: Path
) -> None:
    path = write_in_cluster_kubeconfig(tmp_path / "kc" / "config", POD_ENV, account)
    api = remote_api(path, None)
    assert api.configuration.host == "https://10.96.0.1:443"
    assert api.configuration.ssl_ca_cert == str(account / "ca.crt")
    assert "Bearer the-token" in api.configuration.api_key.values()
    text = path.read_text()
    assert "crashloop-check" in text
    assert f"current-context: {IN_CLUSTER_CONTEXT}" in text
    # An IPv6 service address is bracketed, as client-go writes it.
    six = write_in_cluster_kubeconfig(
        tmp_path / "six", {**POD_ENV, "KUBERNETES_SERVICE_HOST": "fd00::1"}, account
    )
    assert "https://[fd00::1]:443" in six.read_text()


def test_check_in_a_pod_with_no_kubeconfig_means_the_cluster_it_runs_in(
    account: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in POD_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(incluster, "SERVICE_ACCOUNT_DIR", account)
    monkeypatch.setattr(common, "in_a_pod", lambda: in_a_pod(account=account))
    monkeypatch.setattr(kubeconfig, "in_a_pod", lambda: in_a_pod(account=account))
    monkeypatch.setattr(
        kubeconfig,
        "write_in_cluster_kubeconfig",
        lambda into: write_in_cluster_kubeconfig(into, account=account),
    )
    monkeypatch.setattr(kubeconfig, "state_dir", lambda: tmp_path / "state")
    args = argparse.Namespace(kubeconfig=None, context=None, nodes=None, node_selector=None)
    common.resolve_kubeconfig(args)
    assert args.kubeconfig == str(tmp_path / "state" / "in-cluster.kubeconfig")
    assert remote_api(Path(args.kubeconfig), None).configuration.host == "https://10.96.0.1:443"
    # A kubeconfig of the user's own still comes first, as in kubectl.
    home_config = tmp_path / "home" / ".kube" / "config"
    home_config.parent.mkdir(parents=True)
    home_config.write_text("apiVersion: v1\nkind: Config\n")
    again = argparse.Namespace(kubeconfig=None, context=None, nodes=None, node_selector=None)
    common.resolve_kubeconfig(again)
    assert again.kubeconfig == str(home_config)
