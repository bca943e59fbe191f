"""The check's roles as shipped (resources/rbac/), and which of them a check needs where.

A check inside the cluster reads each kubelet directly, each path its own nodes/
subresource (crashloop_harness.cluster.kubeletapi); one outside it reads them through the
API server's node proxy, which needs nodes/proxy instead: a role of its own file, so the
nightly's ServiceAccount is granted it only when asked.
"""

from __future__ import annotations

from typing import Final

from crashloop_harness.core.resources import RESOURCES

CHECK_ROLES: Final = RESOURCES / "rbac" / "crashloop-check.yaml"
NODE_PROXY_ROLE: Final = RESOURCES / "rbac" / "crashloop-check-node-proxy.yaml"
# Granted for reads made straight to a kubelet; the node proxy never asks for them.
DIRECT_ONLY: Final = frozenset({"nodes/configz", "nodes/metrics", "nodes/pods"})


def rbac_yaml(*, node_proxy: bool) -> str:
    """The roles to apply: the check's, and the node proxy's when reads go through it."""
    text = CHECK_ROLES.read_text()
    if node_proxy:
        text += "---\n" + NODE_PROXY_ROLE.read_text()
    return text
