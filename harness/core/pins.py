"""Every pinned version of the project, in one place.

Change a version here and every cache keyed on it (kind binary, node image
label, component builds) is rebuilt on the next run.
"""

from __future__ import annotations

from typing import Final

# kind v0.33.0 rather than v0.32.0: its published v1.35 image is v1.35.8, the
# newest v1.35 patch the Go module proxy also serves, so the official image and
# the one built offline run the same Kubernetes version. v0.32.0 pairs with
# v1.35.5.
KIND_VERSION: Final = "v0.33.0"
KIND_MODULE: Final = "sigs.k8s.io/kind"

KUBERNETES_VERSION: Final = "v1.35.8"
# The kindest/node image published with KIND_VERSION for KUBERNETES_VERSION.
OFFICIAL_NODE_IMAGE: Final = (
    "kindest/node:v1.35.8@sha256:07b2536e30b803ed61d1677a79df6115f798ce64c80f9e22f6ed45afd09323c0"
)
# The tag of the equivalent image built offline by `make node-image`.
LOCAL_NODE_IMAGE: Final = f"crashloop.local/node:{KUBERNETES_VERSION}"

# Component versions: the ones kubeadm v1.35.8 asks for
# (cmd/kubeadm/app/constants: DefaultEtcdVersion, CoreDNSVersion, PauseVersion).
ETCD_VERSION: Final = "v3.6.6"
ETCD_IMAGE_TAG: Final = "3.6.6-0"
COREDNS_VERSION: Final = "v1.13.1"
PAUSE_IMAGE_TAG: Final = "3.10.1"

# The node's own runtime stack.
CONTAINERD_VERSION: Final = "v2.2.1"
RUNC_VERSION: Final = "v1.3.4"
CNI_PLUGINS_VERSION: Final = "v1.9.0"
CRICTL_VERSION: Final = "v1.34.0"
DEBIAN_SUITE: Final = "bookworm"

# Kubernetes minor versions whose semantics the harness knows.
SUPPORTED_KUBERNETES_VERSIONS: Final = (KUBERNETES_VERSION,)
