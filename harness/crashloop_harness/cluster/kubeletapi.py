"""Every read of a kubelet's own API (/configz, /metrics, /pods, /healthz), in one place.

From outside the cluster the kubelet is reached through the API server's node proxy
(``GET /api/v1/nodes/<node>/proxy/<path>``), which needs ``nodes/proxy``: the whole kubelet
API, exec into any container included. A process in a pod of the cluster can do better: it
reaches the kubelet directly (the node's InternalIP, its kubelet port, the ServiceAccount's
token), where fine-grained kubelet authorization (KEP-2862, on by default since 1.33)
authorizes ``nodes/configz``, ``nodes/healthz``, ``nodes/pods`` and ``nodes/metrics`` each on
its own (pkg/kubelet/server/auth.go, GetRequestAttributes). So in a pod every read goes
direct first; a node whose kubelet refuses it (an untrusted serving certificate, a port a
network policy closes, a kubelet that authorizes ``nodes/proxy`` only) is read through the
node proxy from then on, and the run's summary says which route each node took and why.

The kubelet's serving certificate is checked against the cluster's CA (a kubelet whose
certificate the cluster signs, ``serverTLSBootstrap``) and any bundle named by
``CRASHLOOP_KUBELET_CA`` (kubeadm's and kind's kubelets sign their own: their
``/var/lib/kubelet/pki/kubelet.crt``), and its name against the node's hostname (the name a
self-signed kubelet certificate carries; a cluster-signed one carries it too).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import urllib3
from kubernetes import client

from crashloop_harness.cluster.incluster import SERVICE_ACCOUNT_DIR, in_a_pod, in_cluster_server
from crashloop_harness.core import timeouts
from crashloop_harness.core.conventions import KUBELET_CA_VARIABLE
from crashloop_harness.core.errors import HarnessError, first_line

DIRECT: Final = "direct"
# A direct connection that does not open this soon is a closed port, not a slow kubelet.
_CONNECT_S: Final = 5.0


def proxy_get(api: client.ApiClient, node: str, path: str) -> bytes:
    """``path`` of ``node``'s kubelet through the API server's node proxy."""
    raw = client.CoreV1Api(api).connect_get_node_proxy_with_path(
        node, path, _preload_content=False, _request_timeout=timeouts.API_REQUEST
    )
    return bytes(raw.data)


class DirectReadError(Exception):
    """The kubelet could not be read directly: the words say why. ``lasting``: a refusal the
    next read would meet too (a certificate, a status, a closed port), not a slow answer."""

    def __init__(self, words: str, *, lasting: bool = True) -> None:
        super().__init__(words)
        self.lasting = lasting


@dataclass(frozen=True)
class KubeletEndpoint:
    """Where a node's kubelet listens and the name its certificate must carry."""

    address: str
    port: int
    hostname: str


def endpoint_of(node: client.V1Node) -> KubeletEndpoint | None:
    """The node's InternalIP, kubelet port and hostname, as its Node object reports them."""
    addresses = {a.type: a.address for a in (node.status.addresses or [])}
    address = addresses.get("InternalIP")
    if address is None:
        return None
    endpoints = node.status.daemon_endpoints
    port = endpoints.kubelet_endpoint.port if endpoints and endpoints.kubelet_endpoint else 10250
    return KubeletEndpoint(address, port, addresses.get("Hostname") or node.metadata.name)


@dataclass
class DirectRoute:
    """Reads straight to each kubelet with the pod's ServiceAccount, and each node's route."""

    token_file: Path
    ca_pem: str  # the certificates a kubelet's serving certificate may chain to
    read_timeout_s: float = timeouts.API_REQUEST
    routes: dict[str, str] = field(default_factory=dict)
    _endpoints: dict[str, KubeletEndpoint | None] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self, api: client.ApiClient, node: str, path: str) -> bytes:
        with self._lock:
            refused = self.routes.get(node, DIRECT) != DIRECT
        if not refused:
            try:
                data = self._direct(api, node, path)
            except DirectReadError as why:
                # A kubelet slow to answer (a starved node) is asked directly again next
                # time; this read goes by the proxy.
                if why.lasting:
                    self._set(node, f"node proxy: a direct read of /{path} was refused: {why}")
            else:
                self._set(node, DIRECT)
                return data
        return proxy_get(api, node, path)

    def snapshot(self) -> dict[str, str]:
        with self._lock:
            return dict(self.routes)

    def _set(self, node: str, route: str) -> None:
        with self._lock:
            # The first refusal is the one kept: later reads go by the proxy.
            if self.routes.get(node, DIRECT) == DIRECT:
                self.routes[node] = route

    def _endpoint(self, api: client.ApiClient, node: str) -> KubeletEndpoint | None:
        with self._lock:
            if node in self._endpoints:
                return self._endpoints[node]
        found = endpoint_of(
            client.CoreV1Api(api).read_node(node, _request_timeout=timeouts.API_REQUEST)
        )
        with self._lock:
            self._endpoints[node] = found
        return found

    def _direct(self, api: client.ApiClient, node: str, path: str) -> bytes:
        endpoint = self._endpoint(api, node)
        if endpoint is None:
            raise DirectReadError("the node reports no InternalIP")
        pool = urllib3.HTTPSConnectionPool(
            endpoint.address,
            endpoint.port,
            ca_cert_data=self.ca_pem,
            cert_reqs="CERT_REQUIRED",
            server_hostname=endpoint.hostname,
            assert_hostname=endpoint.hostname,
            retries=False,
            timeout=urllib3.Timeout(connect=_CONNECT_S, read=self.read_timeout_s),
        )
        try:
            token = self.token_file.read_text().strip()  # the kubelet rotates it in place
            response = pool.request("GET", f"/{path}", headers={"Authorization": f"Bearer {token}"})
        except urllib3.exceptions.ReadTimeoutError as error:
            raise DirectReadError(first_line(error), lasting=False) from error
        except (urllib3.exceptions.HTTPError, OSError) as error:
            raise DirectReadError(first_line(error)) from error
        finally:
            pool.close()
        if response.status != 200:
            raise DirectReadError(f"{response.status} {response.reason}")
        return bytes(response.data)


# One route per API server this process reaches from inside its cluster.
_ROUTES: dict[str, DirectRoute] = {}
_ROUTES_LOCK: Final = threading.Lock()


def _ca_bundle(account: Path, extra: str | None) -> str:
    """The cluster's CA, with the kubelets' own CAs when a bundle of them is named."""
    bundle = (account / "ca.crt").read_text()
    if extra:
        try:
            bundle += "\n" + Path(extra).read_text()
        except OSError as error:
            raise HarnessError(
                f"{KUBELET_CA_VARIABLE}={extra}: the kubelets' CA bundle cannot be read: "
                f"{error.strerror}",
                "mount the ConfigMap the CronJob names (its key ca.crt), or unset it",
            ) from error
    return bundle


def direct_route(
    api: client.ApiClient,
    environ: Mapping[str, str] = os.environ,
    account: Path = SERVICE_ACCOUNT_DIR,
) -> DirectRoute | None:
    """The direct route to this cluster's kubelets, when this process runs in a pod of the
    cluster ``api`` reaches; None elsewhere (a kubelet's port is seldom reachable from
    outside its cluster)."""
    if not in_a_pod(environ, account) or api.configuration.host != in_cluster_server(environ):
        return None
    with _ROUTES_LOCK:
        route = _ROUTES.get(api.configuration.host)
        if route is None:
            route = DirectRoute(
                token_file=account / "token",
                ca_pem=_ca_bundle(account, environ.get(KUBELET_CA_VARIABLE)),
            )
            _ROUTES[api.configuration.host] = route
        return route


def kubelet_get(api: client.ApiClient, node: str, path: str) -> bytes:
    """``path`` of ``node``'s kubelet (``configz``, ``metrics``, ``pods``, ``healthz``): direct
    from inside the cluster where the kubelet allows it, else through the node proxy."""
    route = direct_route(api)
    if route is None:
        return proxy_get(api, node, path)
    return route.get(api, node, path)


def kubelet_routes_of(api: Callable[[], client.ApiClient]) -> dict[str, str]:
    """As :func:`kubelet_routes`, the client made only when some read went direct."""
    with _ROUTES_LOCK:
        if not _ROUTES:
            return {}
    return kubelet_routes(api())


def kubelet_routes(api: client.ApiClient) -> dict[str, str]:
    """How each node's kubelet was read: ``direct``, or the node proxy and why. Empty when
    every read went by the proxy because this process is outside the cluster."""
    route = direct_route(api)
    return {} if route is None else route.snapshot()


def access_line(routes: Mapping[str, str]) -> str:
    """One line saying how a check in the cluster read its nodes' kubelets."""
    direct = sorted(node for node, route in routes.items() if route == DIRECT)
    proxied = sorted((node, route) for node, route in routes.items() if route != DIRECT)
    parts = [f"{len(direct)} direct"] if direct else []
    parts += [f"{node} by the {route}" for node, route in proxied]
    return "kubelets read: " + "; ".join(parts)
