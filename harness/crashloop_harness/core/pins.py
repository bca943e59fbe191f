"""Every pinned version of the project, in one place.

Change a version here and every cache keyed on it (kind binary, node image
label, component builds) is rebuilt on the next run.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from packaging.version import Version

# kind v0.33.0 rather than v0.32.0: its published v1.35 image is v1.35.8, the
# newest v1.35 patch the Go module proxy also serves, so the official image and
# the one built offline run the same Kubernetes version. v0.32.0 pairs with
# v1.35.5.
KIND_VERSION: Final = "v0.33.0"
# The oldest Go that builds what `make demo` and `make test` build from source for the
# default release: its kubelet and node image (Kubernetes v1.35's go.mod asks for 1.25;
# GOTOOLCHAIN=local, so no newer toolchain is fetched behind the user's back), kind and the
# small helpers (which ask for less). Every "install Go" the harness says names this one.
GO_MINIMUM: Final = "1.25"
GO_INSTALL: Final = (
    f"install Go >= {GO_MINIMUM} from https://go.dev/dl/ (Debian 12's `golang` package is "
    "1.19: too old)"
)
KIND_MODULE: Final = "sigs.k8s.io/kind"
# Helm, to lint and render the nightly's chart (charts/crashloop-nightly): v4, built from
# its Go module as kind is, and only where the chart is checked.
HELM_VERSION: Final = "v4.3.2"
HELM_MODULE: Final = "helm.sh/helm/v4/cmd/helm"
# An exact release version: its minor, then the patch and any pre-release.
_EXACT = re.compile(r"^(1\.\d+)\.\d+(?:-(?:alpha|beta|rc)\.\d+)?$")


@dataclass(frozen=True)
class KubernetesPin:
    """One Kubernetes release the harness runs, and what its kubeadm asks for.

    Component versions are read in that release's
    cmd/kubeadm/app/constants/constants.go (DefaultEtcdVersion, CoreDNSVersion,
    PauseVersion); the offline build checks them against
    `kubeadm config images list` before it assembles anything.
    """

    version: str  # e.g. "v1.35.8"
    etcd_version: str
    coredns_version: str
    pause_image_tag: str
    # The kindest/node digest published with KIND_VERSION; None for a release
    # kind does not publish (it is built offline only).
    official_digest: str | None = None
    # A Go toolchain newer than the host's, when the release's go.mod asks for one.
    go_toolchain: str | None = None

    @property
    def minor(self) -> str:
        """ "1.35" """
        return ".".join(self.version.lstrip("v").split(".")[:2])

    @property
    def etcd_image_tag(self) -> str:
        return f"{self.etcd_version.lstrip('v')}-0"

    @property
    def local_node_image(self) -> str:
        """The tag of the node image `make node-image` builds offline."""
        return f"crashloop.local/node:{self.version}"

    @property
    def official_node_image(self) -> str | None:
        if self.official_digest is None:
            return None
        return f"kindest/node:{self.version}@{self.official_digest}"


# kind v0.33.0's published images (its release notes give the digests), plus
# v1.33 and the next release's beta, which kind does not publish: built offline.
KUBERNETES: Final[Mapping[str, KubernetesPin]] = MappingProxyType(
    {
        pin.minor: pin
        for pin in (
            KubernetesPin("v1.33.13", "v3.5.24", "v1.12.0", "3.10"),
            KubernetesPin(
                "v1.34.11",
                "v3.6.5",
                "v1.12.1",
                "3.10.1",
                "sha256:44e222ee2132dab25ff87301682f89eb82c7880ea3a1bf543bfe9708fd08d67d",
            ),
            KubernetesPin(
                "v1.35.8",
                "v3.6.6",
                "v1.13.1",
                "3.10.1",
                "sha256:07b2536e30b803ed61d1677a79df6115f798ce64c80f9e22f6ed45afd09323c0",
            ),
            KubernetesPin(
                "v1.36.4",
                "v3.6.8",
                "v1.14.2",
                "3.10.2",
                "sha256:099e049362a1526b2db71494e1947aae99bd16290d7c895f2b7ea312e3cbfaed",
            ),
            KubernetesPin(
                "v1.37.0",
                "v3.7.0",
                "v1.14.6",
                "3.10.2",
                "sha256:a1ed56cfb0e7b93589bdf97c8cd566405a265939e3620fc4f5de89adff580ae5",
            ),
            KubernetesPin("v1.38.0-beta.0", "v3.7.1", "v1.15.0", "3.10.2", go_toolchain="go1.27.3"),
        )
    }
)
# The release the talk is about; every command uses it unless told otherwise.
DEFAULT_KUBERNETES: Final = KUBERNETES["1.35"]


def kubernetes_pin(text: str) -> KubernetesPin:
    """The pinned release for "1.34", "v1.34" or its exact version "v1.34.11".

    An exact version of a pinned minor newer than its pin ("v1.37.2",
    as the nightly that follows new releases asks for) is that pin with the
    version replaced: its etcd, CoreDNS and pause stay the minor's, and the
    offline build refuses it if its kubeadm asks for others. No official image.
    Raises ValueError naming every pinned version for anything else.
    """
    wanted = text.strip().lstrip("v")
    for pin in KUBERNETES.values():
        if wanted in (pin.minor, pin.version.lstrip("v")):
            return pin
    match = _EXACT.match(wanted)
    if (
        match is not None
        and match.group(1) in KUBERNETES
        and Version(wanted) > Version(KUBERNETES[match.group(1)].version)
    ):
        return dataclasses.replace(
            KUBERNETES[match.group(1)], version=f"v{wanted}", official_digest=None
        )
    pinned = ", ".join(pin.version for pin in KUBERNETES.values())
    raise ValueError(f"Kubernetes {text or '(empty)'} is not pinned here; pinned: {pinned}")


# The default release's values, as most of the harness uses them.
KUBERNETES_VERSION: Final = DEFAULT_KUBERNETES.version
# The kindest/node image published with KIND_VERSION for KUBERNETES_VERSION.
OFFICIAL_NODE_IMAGE: Final = DEFAULT_KUBERNETES.official_node_image or ""
# The tag of the equivalent image built offline by `make node-image`.
LOCAL_NODE_IMAGE: Final = DEFAULT_KUBERNETES.local_node_image
ETCD_VERSION: Final = DEFAULT_KUBERNETES.etcd_version
ETCD_IMAGE_TAG: Final = DEFAULT_KUBERNETES.etcd_image_tag
COREDNS_VERSION: Final = DEFAULT_KUBERNETES.coredns_version
PAUSE_IMAGE_TAG: Final = DEFAULT_KUBERNETES.pause_image_tag

# The node's own runtime stack.
CONTAINERD_VERSION: Final = "v2.2.1"
RUNC_VERSION: Final = "v1.3.4"
CNI_PLUGINS_VERSION: Final = "v1.9.0"
CRICTL_VERSION: Final = "v1.34.0"
DEBIAN_SUITE: Final = "bookworm"

# Every Kubernetes version the harness runs.
SUPPORTED_KUBERNETES_VERSIONS: Final = tuple(pin.version for pin in KUBERNETES.values())
