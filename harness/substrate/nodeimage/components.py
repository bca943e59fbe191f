"""The Go programs a node image is made of, at the versions pinned in harness.core.pins."""

from __future__ import annotations

from typing import Final

from harness.core import pins
from harness.core.paths import PROJECT_ROOT
from harness.substrate.nodeimage.gobuild import GoComponent, ModuleOrigin

KUBERNETES_COMMANDS: Final = (
    "kubeadm",
    "kubelet",
    "kubectl",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kube-proxy",
)


def _kubernetes_ldflags(origin: ModuleOrigin) -> tuple[str, ...]:
    # What upstream's hack/lib/version.sh stamps: without it the binaries say
    # v0.0.0-master and kubeadm's version checks fail.
    major, minor = pins.KUBERNETES_VERSION.lstrip("v").split(".")[:2]
    values = {
        "gitVersion": pins.KUBERNETES_VERSION,
        "gitMajor": major,
        "gitMinor": minor,
        "gitCommit": origin.commit,
        "gitTreeState": "clean",
        "buildDate": origin.time,
    }
    flags = []
    for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version"):
        flags += [f"-X {package}.{name}={value}" for name, value in values.items()]
    return tuple(flags)


def _staging_version(kubernetes_version: str) -> str:
    # Staging modules are tagged v0.<minor>.<patch> alongside v1.<minor>.<patch>.
    return "v0." + kubernetes_version.split(".", 1)[1]


KUBERNETES: Final = GoComponent(
    name="kubernetes",
    module="k8s.io/kubernetes",
    version=pins.KUBERNETES_VERSION,
    packages=tuple(f"k8s.io/kubernetes/cmd/{command}" for command in KUBERNETES_COMMANDS),
    ldflags=_kubernetes_ldflags,
    sibling_version=_staging_version,
)

ETCD: Final = GoComponent(
    name="etcd",
    module="go.etcd.io/etcd/server/v3",
    version=pins.ETCD_VERSION,
    packages=("go.etcd.io/etcd/server/v3/etcdmain",),
    sibling_version=lambda version: version,
    own_main=PROJECT_ROOT / "images" / "node" / "etcd" / "main.go",
)

COREDNS: Final = GoComponent(
    name="coredns",
    module="github.com/coredns/coredns",
    version=pins.COREDNS_VERSION,
    packages=("github.com/coredns/coredns",),
    ldflags=lambda origin: (f"-X github.com/coredns/coredns/coremain.GitCommit={origin.commit}",),
)

CONTAINERD: Final = GoComponent(
    name="containerd",
    module="github.com/containerd/containerd/v2",
    version=pins.CONTAINERD_VERSION,
    packages=tuple(
        f"github.com/containerd/containerd/v2/cmd/{command}"
        for command in ("containerd", "ctr", "containerd-shim-runc-v2")
    ),
    # Snapshotters the node never uses and that would need C headers.
    tags=("no_btrfs", "no_devmapper", "no_zfs"),
    ldflags=lambda origin: (
        f"-X github.com/containerd/containerd/v2/version.Version={pins.CONTAINERD_VERSION}",
        f"-X github.com/containerd/containerd/v2/version.Revision={origin.commit}",
    ),
)

RUNC: Final = GoComponent(
    name="runc",
    module="github.com/opencontainers/runc",
    version=pins.RUNC_VERSION,
    packages=("github.com/opencontainers/runc",),
    # kubeadm's static pods ask for the RuntimeDefault seccomp profile.
    cgo=True,
    tags=("seccomp",),
    host_packages=("libseccomp-dev",),
    ldflags=lambda origin: (
        f"-X main.version={pins.RUNC_VERSION.lstrip('v')}",
        f"-X main.gitCommit={origin.commit}",
    ),
)

CNI_PLUGINS: Final = GoComponent(
    name="cni-plugins",
    module="github.com/containernetworking/plugins",
    version=pins.CNI_PLUGINS_VERSION,
    packages=tuple(
        f"github.com/containernetworking/plugins/plugins/{path}"
        for path in ("main/ptp", "main/bridge", "main/loopback", "ipam/host-local", "meta/portmap")
    ),
    ldflags=lambda _origin: (
        "-X github.com/containernetworking/plugins/pkg/utils/buildversion.BuildVersion="
        + pins.CNI_PLUGINS_VERSION,
    ),
)

CRICTL: Final = GoComponent(
    name="crictl",
    module="sigs.k8s.io/cri-tools",
    version=pins.CRICTL_VERSION,
    packages=("sigs.k8s.io/cri-tools/cmd/crictl",),
    ldflags=lambda _origin: (
        f"-X sigs.k8s.io/cri-tools/pkg/version.Version={pins.CRICTL_VERSION}",
    ),
)

ALL: Final = (KUBERNETES, CONTAINERD, RUNC, CNI_PLUGINS, CRICTL, ETCD, COREDNS)
