"""What a fleet's checks may do on each cluster, asked before anything is created.

The permissions are the check's roles' own rules, read from the files `crashloop
rbac` prints (harness/crashloop_harness/resources/rbac/): a fleet checks from outside
its clusters, so its reads of the kubelets go through the node proxy (nodes/proxy),
not straight to them (nodes/configz and its kin, left out). Each is asked of the API
server as the kubeconfig's user (SelfSubjectAccessReview, which every authenticated
user may create). A cluster missing any of them is refused with the role that grants
it, before any cluster's check starts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

import yaml
from kubernetes import client

from crashloop_harness.cluster.rbac import DIRECT_ONLY, rbac_yaml
from crashloop_harness.core import timeouts

# The Role the check's pods need, granted in the prepared namespace (whatever it is named).
_RUN_ROLE: Final = "crashloop-check"
# Granted by none of the file's roles: without --namespace, a role that makes namespaces.
_NAMESPACE_MAKER: Final = "one that creates namespaces, or --namespace with the file's"
# The scenarios' StatefulSets: the check creates none. Results kept in the cluster
# (--keep-in-cluster, the in-cluster nightly's): a fleet's checks keep theirs at home.
_NOT_THE_CHECKS: Final = frozenset({"statefulsets", "configmaps"})
_NOT_THE_CHECKS_ROLES: Final = frozenset({"crashloop-check-node-events"})


@dataclass(frozen=True)
class Permission:
    role: str  # the ClusterRole or Role of the rbac file that grants it
    namespace: str | None  # None: cluster-wide
    group: str
    resource: str  # "nodes/proxy": resource and subresource
    verb: str

    def describe(self) -> str:
        where = "cluster-wide" if self.namespace is None else f"in namespace {self.namespace}"
        return f"{self.verb} {self.resource} {where}"


@cache
def _rbac_documents() -> tuple[dict[str, Any], ...]:
    return tuple(d for d in yaml.safe_load_all(rbac_yaml(node_proxy=True)) if d)


def needed_permissions(namespace: str | None, *, direct: bool = False) -> list[Permission]:
    """Every permission a check needs: its ClusterRole's and its Roles' rules.

    ``namespace``: the prepared namespace the checks share, where the run's Role
    is granted; None when each check makes its own (any namespace, and the
    namespaces themselves then). ``direct``: the fleet runs in a pod of the cluster
    and reads its kubelets directly (the nightly's), not through the node proxy.
    """
    not_read = frozenset({"nodes/proxy"}) if direct else DIRECT_ONLY
    needed: list[Permission] = []
    for document in _rbac_documents():
        if document["kind"] not in ("ClusterRole", "Role"):
            continue
        role = str(document["metadata"]["name"])
        if role in _NOT_THE_CHECKS_ROLES:
            continue
        where: str | None = document["metadata"].get("namespace")
        if role == _RUN_ROLE:
            where = namespace if namespace is not None else ""
        for rule in document["rules"]:
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    if resource in _NOT_THE_CHECKS or resource in not_read:
                        continue
                    needed += [Permission(role, where, group, resource, v) for v in rule["verbs"]]
    if namespace is None:
        # Outside a prepared namespace every check makes its own, then deletes it.
        needed += [
            Permission(_NAMESPACE_MAKER, None, "", "namespaces", verb)
            for verb in ("create", "delete")
        ]
    return needed


def missing_permissions(api: client.ApiClient, needed: Sequence[Permission]) -> list[Permission]:
    """Those of ``needed`` the API server says the kubeconfig's user lacks."""
    authorization = client.AuthorizationV1Api(api)
    missing: list[Permission] = []
    for permission in needed:
        resource, _, subresource = permission.resource.partition("/")
        review = client.V1SelfSubjectAccessReview(
            spec=client.V1SelfSubjectAccessReviewSpec(
                resource_attributes=client.V1ResourceAttributes(
                    namespace=permission.namespace or None,
                    verb=permission.verb,
                    group=permission.group,
                    resource=resource,
                    subresource=subresource or None,
                )
            )
        )
        answer = authorization.create_self_subject_access_review(
            review, _request_timeout=timeouts.API_REQUEST
        )
        if not answer.status.allowed:
            missing.append(permission)
    return missing


def missing_words(context: str, missing: Sequence[Permission]) -> str:
    """One line naming what a cluster's user may not do, and the roles that grant it."""
    roles = sorted({p.role for p in missing})
    shown = ", ".join(p.describe() for p in missing[:4])
    more = f" and {len(missing) - 4} more" if len(missing) > 4 else ""
    named = f"role{'s' if len(roles) > 1 else ''} {', '.join(roles)}"
    return f"context {context} may not {shown}{more} ({named} of `crashloop rbac`)"
