"""Inside a pod: the cluster that runs it, reached through its ServiceAccount, no kubeconfig.

client-go's rule, which kubectl follows: with no kubeconfig to read, a process in a pod
uses the API server the kubelet names in its environment (KUBERNETES_SERVICE_HOST and
_PORT), the ServiceAccount token mounted beside it and the cluster's CA. The harness
reads every cluster through a kubeconfig (crashloop_harness.cluster.kubeconfig), so this
writes one that says exactly that: the token by its file (the kubelet rotates it in
place), the CA by its file, the pod's namespace as the context's. A nightly CronJob then
runs `crashloop check` with no credentials of its own and no exec plugin to prompt.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import yaml

from crashloop_harness.core.errors import HarnessError

# Where the kubelet mounts a pod's ServiceAccount (token, ca.crt, namespace).
SERVICE_ACCOUNT_DIR: Final = Path("/var/run/secrets/kubernetes.io/serviceaccount")
IN_CLUSTER_CONTEXT: Final = "in-cluster"
_HOST: Final = "KUBERNETES_SERVICE_HOST"
_PORT: Final = "KUBERNETES_SERVICE_PORT"


def in_a_pod(environ: Mapping[str, str] = os.environ, account: Path = SERVICE_ACCOUNT_DIR) -> bool:
    """Whether this process runs in a pod whose ServiceAccount token is mounted."""
    return bool(environ.get(_HOST)) and bool(environ.get(_PORT)) and (account / "token").is_file()


def in_cluster_server(environ: Mapping[str, str] = os.environ) -> str | None:
    """The API server's URL as a pod of the cluster reaches it; None outside a pod."""
    host, port = environ.get(_HOST), environ.get(_PORT)
    if not host or not port:
        return None
    # An IPv6 service address is bracketed in a URL, as client-go does.
    server_host = f"[{host}]" if ":" in host else host
    return f"https://{server_host}:{port}"


def write_in_cluster_kubeconfig(
    into: Path, environ: Mapping[str, str] = os.environ, account: Path = SERVICE_ACCOUNT_DIR
) -> Path:
    """A kubeconfig at ``into`` for the cluster this pod runs in, through its ServiceAccount."""
    server = in_cluster_server(environ)
    if server is None:
        raise HarnessError(
            f"not in a pod: {_HOST} and {_PORT} are unset", "pass --kubeconfig outside a cluster"
        )
    namespace_file = account / "namespace"
    namespace = namespace_file.read_text().strip() if namespace_file.is_file() else "default"
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": IN_CLUSTER_CONTEXT,
                "cluster": {
                    "server": server,
                    "certificate-authority": str(account / "ca.crt"),
                },
            }
        ],
        "users": [{"name": IN_CLUSTER_CONTEXT, "user": {"tokenFile": str(account / "token")}}],
        "contexts": [
            {
                "name": IN_CLUSTER_CONTEXT,
                "context": {
                    "cluster": IN_CLUSTER_CONTEXT,
                    "user": IN_CLUSTER_CONTEXT,
                    "namespace": namespace,
                },
            }
        ],
        "current-context": IN_CLUSTER_CONTEXT,
    }
    into.parent.mkdir(parents=True, exist_ok=True)
    into.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return into
