"""The Go programs a node image is made of, at the versions pinned in crashloop_harness.core.pins.

Kubernetes, etcd and CoreDNS follow the release being built (what its kubeadm
asks for); the node's runtime stack (containerd, runc, CNI plugins, crictl)
is the same for every release, so its builds are shared.
"""

from __future__ import annotations

from typing import Final

from crashloop_harness.core import pins
from crashloop_harness.core.resources import IMAGES_DIR
from crashloop_harness.substrate.nodeimage.gobuild import GoComponent, ModuleOrigin

KUBERNETES_COMMANDS: Final = (
    "kubeadm",
    "kubelet",
    "kubectl",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kube-proxy",
)


def kubernetes_ldflags(version: str, origin: ModuleOrigin) -> tuple[str, ...]:
    # What upstream's hack/lib/version.sh stamps: without it the binaries say
    # v0.0.0-master and kubeadm's version checks fail.
    major, minor = version.lstrip("v").split(".")[:2]
    values = {
        "gitVersion": version,
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


def _staging_version(_module: str, kubernetes_version: str) -> str:
    # Staging modules are tagged v0.<minor>.<patch> alongside v1.<minor>.<patch>.
    return "v0." + kubernetes_version.split(".", 1)[1]


def _etcd_sibling_version(module: str, etcd_version: str) -> str:
    """etcd's sibling modules share its tag, but for the v2 client of etcd 3.5.

    go.etcd.io/etcd/client/v2 is a major-v2 module: etcd v3.5.24 tags it
    v2.305.24 (etcd 3.6 no longer has it).
    """
    if not module.endswith("/v2"):
        return etcd_version
    major, minor, patch = etcd_version.lstrip("v").split(".")
    return f"v2.{major}{int(minor):02d}.{patch}"


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


def kubernetes(pin: pins.KubernetesPin) -> GoComponent:
    return GoComponent(
        name="kubernetes",
        module="k8s.io/kubernetes",
        version=pin.version,
        packages=tuple(f"k8s.io/kubernetes/cmd/{command}" for command in KUBERNETES_COMMANDS),
        ldflags=lambda origin: kubernetes_ldflags(pin.version, origin),
        sibling_version=_staging_version,
        toolchain=pin.go_toolchain,
    )


def etcd(pin: pins.KubernetesPin) -> GoComponent:
    return GoComponent(
        name="etcd",
        module="go.etcd.io/etcd/server/v3",
        version=pin.etcd_version,
        packages=("go.etcd.io/etcd/server/v3/etcdmain",),
        sibling_version=_etcd_sibling_version,
        own_main=IMAGES_DIR / "node" / "etcd" / "main.go",
    )


def coredns(pin: pins.KubernetesPin) -> GoComponent:
    return GoComponent(
        name="coredns",
        module="github.com/coredns/coredns",
        version=pin.coredns_version,
        packages=("github.com/coredns/coredns",),
        ldflags=lambda origin: (
            f"-X github.com/coredns/coredns/coremain.GitCommit={origin.commit}",
        ),
    )


def components_for(pin: pins.KubernetesPin) -> tuple[GoComponent, ...]:
    """Every Go program of the node image of ``pin``'s release, in build order."""
    return (kubernetes(pin), CONTAINERD, RUNC, CNI_PLUGINS, CRICTL, etcd(pin), coredns(pin))
