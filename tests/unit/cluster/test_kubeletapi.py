"""Reads of a kubelet's API: direct from inside the cluster, the node proxy where refused.

A real TLS server on loopback stands in for a kubelet: its serving certificate made as the
kubelet makes its own (a CA of its own, a leaf naming the node's hostname), so the route's
trust and name checks are the ones a kind or kubeadm kubelet meets.
"""

from __future__ import annotations

import datetime
import http.server
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from kubernetes import client

from crashloop_harness.cluster import kubeletapi
from crashloop_harness.cluster.kubeletapi import (
    DIRECT,
    DirectRoute,
    KubeletEndpoint,
    access_line,
    direct_route,
    endpoint_of,
)
from crashloop_harness.core.errors import HarnessError

HOSTNAME = "node-a"
TOKEN = "the-service-account-token"


@dataclass(frozen=True)
class Minted:
    ca_pem: str
    cert_file: Path
    key_file: Path


def _mint(tmp: Path, hostname: str) -> Minted:
    """A CA of its own and a leaf for ``hostname``, as the kubelet makes when none is given."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{hostname}-ca")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(1)
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostname)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(2)
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(hostname)]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    cert_file = tmp / f"{hostname}.crt"
    cert_file.write_bytes(leaf.public_bytes(pem) + ca.public_bytes(pem))
    key_file = tmp / f"{hostname}.key"
    key_file.write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return Minted(ca.public_bytes(pem).decode(), cert_file, key_file)


@dataclass
class Kubelet:
    """The stand-in: what it answers, and the Authorization headers it was sent."""

    port: int
    status: int = 200
    seen_tokens: list[str | None] | None = None
    # Set: the next answer waits until the test releases it (a starved kubelet).
    hold: threading.Event | None = None


@pytest.fixture
def minted(tmp_path: Path) -> Minted:
    return _mint(tmp_path, HOSTNAME)


@pytest.fixture
def kubelet(minted: Minted) -> Iterator[Kubelet]:
    state = Kubelet(port=0, seen_tokens=[])

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            assert state.seen_tokens is not None
            state.seen_tokens.append(self.headers.get("Authorization"))
            if state.hold is not None:
                state.hold.wait(timeout=10)
                state.hold = None
            body = b'{"kubeletconfig": {}}' if state.status == 200 else b"Forbidden"
            self.send_response(state.status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: Any) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(minted.cert_file, minted.key_file)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def _route(tmp_path: Path, ca_pem: str, kubelet: Kubelet, hostname: str = HOSTNAME) -> DirectRoute:
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    route = DirectRoute(token_file=token, ca_pem=ca_pem)
    route._endpoints["node-a"] = KubeletEndpoint("127.0.0.1", kubelet.port, hostname)
    return route


@pytest.fixture
def proxied(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    asked: list[tuple[str, str]] = []

    def proxy_get(_api: object, node: str, path: str) -> bytes:
        asked.append((node, path))
        return b"by the proxy"

    monkeypatch.setattr(kubeletapi, "proxy_get", proxy_get)
    return asked


API = cast(client.ApiClient, None)


def test_a_kubelet_whose_ca_is_trusted_is_read_directly_with_the_token(
    tmp_path: Path, minted: Minted, kubelet: Kubelet, proxied: list[tuple[str, str]]
) -> None:
    route = _route(tmp_path, minted.ca_pem, kubelet)
    assert route.get(API, "node-a", "configz") == b'{"kubeletconfig": {}}'
    assert kubelet.seen_tokens == [f"Bearer {TOKEN}"]
    assert proxied == []
    assert route.routes == {"node-a": DIRECT}


def test_an_untrusted_serving_certificate_sends_the_node_to_the_proxy_for_good(
    tmp_path: Path, kubelet: Kubelet, proxied: list[tuple[str, str]]
) -> None:
    (tmp_path / "other").mkdir()
    stranger = _mint(tmp_path / "other", "other")
    route = _route(tmp_path, stranger.ca_pem, kubelet)
    assert route.get(API, "node-a", "configz") == b"by the proxy"
    assert "certificate verify failed" in route.routes["node-a"]
    assert route.routes["node-a"].startswith("node proxy: a direct read of /configz was refused")
    # Not tried again: the next read goes straight to the proxy.
    assert route.get(API, "node-a", "metrics") == b"by the proxy"
    assert kubelet.seen_tokens == []
    assert proxied == [("node-a", "configz"), ("node-a", "metrics")]


def test_a_certificate_for_another_name_is_refused(
    tmp_path: Path, minted: Minted, kubelet: Kubelet, proxied: list[tuple[str, str]]
) -> None:
    route = _route(tmp_path, minted.ca_pem, kubelet, hostname="node-b")
    assert route.get(API, "node-a", "configz") == b"by the proxy"
    assert "hostname 'node-b' doesn't match 'node-a'" in route.routes["node-a"]


def test_a_kubelet_that_forbids_the_read_sends_it_to_the_proxy(
    tmp_path: Path, minted: Minted, kubelet: Kubelet, proxied: list[tuple[str, str]]
) -> None:
    kubelet.status = 403
    route = _route(tmp_path, minted.ca_pem, kubelet)
    assert route.get(API, "node-a", "pods") == b"by the proxy"
    assert route.routes["node-a"].endswith("/pods was refused: 403 Forbidden")


def test_a_closed_port_is_refused_not_waited_on(
    tmp_path: Path, minted: Minted, proxied: list[tuple[str, str]]
) -> None:
    closed = Kubelet(port=1)
    route = _route(tmp_path, minted.ca_pem, closed)
    assert route.get(API, "node-a", "configz") == b"by the proxy"
    assert "refused" in route.routes["node-a"]


def _node(addresses: dict[str, str], port: int | None) -> client.V1Node:
    endpoints = (
        None
        if port is None
        else client.V1NodeDaemonEndpoints(kubelet_endpoint=client.V1DaemonEndpoint(port=port))
    )
    return client.V1Node(
        metadata=client.V1ObjectMeta(name="node-a"),
        status=client.V1NodeStatus(
            addresses=[client.V1NodeAddress(type=t, address=a) for t, a in addresses.items()],
            daemon_endpoints=endpoints,
        ),
    )


def test_the_endpoint_is_the_internal_ip_the_kubelet_port_and_the_hostname() -> None:
    node = _node({"InternalIP": "10.0.0.7", "Hostname": "ip-10-0-0-7"}, 10250)
    assert endpoint_of(node) == KubeletEndpoint("10.0.0.7", 10250, "ip-10-0-0-7")
    # No Hostname address: the node's name, which a self-signed certificate carries.
    assert endpoint_of(_node({"InternalIP": "10.0.0.7"}, None)) == KubeletEndpoint(
        "10.0.0.7", 10250, "node-a"
    )
    assert endpoint_of(_node({"ExternalIP": "1.2.3.4"}, 10250)) is None


def test_only_a_process_in_a_pod_of_the_same_cluster_goes_direct(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kubeletapi, "_ROUTES", {})
    (tmp_path / "token").write_text(TOKEN)
    (tmp_path / "ca.crt").write_text("cluster CA\n")
    environ = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    inside = client.ApiClient(client.Configuration(host="https://10.96.0.1:443"))
    outside = client.ApiClient(client.Configuration(host="https://203.0.113.9:6443"))
    assert direct_route(inside, {}, tmp_path) is None
    assert direct_route(outside, environ, tmp_path) is None
    (tmp_path / "kubelets.pem").write_text("kubelets' CAs\n")
    with_cas = {**environ, "CRASHLOOP_KUBELET_CA": str(tmp_path / "kubelets.pem")}
    route = direct_route(inside, with_cas, tmp_path)
    assert route is not None
    assert "cluster CA" in route.ca_pem
    assert "kubelets' CAs" in route.ca_pem
    assert direct_route(inside, environ, tmp_path) is route  # one per API server


def test_the_access_line_counts_the_direct_and_names_each_proxied_node() -> None:
    line = access_line({"a": DIRECT, "b": DIRECT, "c": "node proxy: a direct read ... refused"})
    assert line == "kubelets read: 2 direct; c by the node proxy: a direct read ... refused"


def test_a_kubelet_ca_bundle_that_cannot_be_read_is_named_with_its_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kubeletapi, "_ROUTES", {})
    (tmp_path / "token").write_text(TOKEN)
    (tmp_path / "ca.crt").write_text("cluster CA\n")
    environ = {
        "KUBERNETES_SERVICE_HOST": "10.96.0.1",
        "KUBERNETES_SERVICE_PORT": "443",
        "CRASHLOOP_KUBELET_CA": str(tmp_path / "missing.pem"),
    }
    inside = client.ApiClient(client.Configuration(host="https://10.96.0.1:443"))
    with pytest.raises(HarnessError, match=r"CRASHLOOP_KUBELET_CA=.*missing\.pem.*cannot be read"):
        direct_route(inside, environ, tmp_path)


def test_a_kubelet_slow_to_answer_is_read_by_the_proxy_once_and_directly_again_after(
    tmp_path: Path, minted: Minted, kubelet: Kubelet, proxied: list[tuple[str, str]]
) -> None:
    """A read timing out is a starved node, not a refusal: the node is not sent to the proxy
    for good (without nodes/proxy every later read would fail)."""
    released = threading.Event()
    kubelet.hold = released
    route = _route(tmp_path, minted.ca_pem, kubelet)
    route.read_timeout_s = 0.3
    try:
        assert route.get(API, "node-a", "metrics") == b"by the proxy"
    finally:
        released.set()
    assert route.routes == {}
    assert route.get(API, "node-a", "metrics") == b'{"kubeletconfig": {}}'
    assert route.routes == {"node-a": DIRECT}
    assert proxied == [("node-a", "metrics")]
