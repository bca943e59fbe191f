"""The container images a node preloads: control-plane components, pause, CNI.

Each is built with `docker build` from `FROM scratch` plus a static binary, or
from our own Debian rootfs where the program needs iptables and friends, so
nothing is pulled from a registry.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from crashloop_harness.core import pins, timeouts
from crashloop_harness.core.proc import run

REGISTRY: Final = "registry.k8s.io"
NETD_IMAGE: Final = "crashloop.local/netd:1"


def pause_image(pin: pins.KubernetesPin) -> str:
    """The sandbox image the node's containerd uses: the tag ``pin``'s kubeadm expects."""
    return f"{REGISTRY}/pause:{pin.pause_image_tag}"


_PATH_ENV: Final = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass(frozen=True)
class ComponentImage:
    """One image: its tag, the files it holds and how it starts."""

    tag: str
    files: dict[str, Path]  # path in the image -> file on the host
    entrypoint: tuple[str, ...] = ()
    on_rootfs: bool = False  # FROM the Debian rootfs rather than FROM scratch


def component_images(
    pin: pins.KubernetesPin,
    *,
    kubernetes_bin: Path,
    etcd_bin: Path,
    coredns_bin: Path,
    pause_bin: Path,
    netd_script: Path,
) -> list[ComponentImage]:
    version = pin.version
    images = [
        ComponentImage(
            f"{REGISTRY}/{name}:{version}", {f"/usr/local/bin/{name}": kubernetes_bin / name}
        )
        for name in ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
    ]
    images += [
        # kube-proxy programs iptables: it needs the tools, not just its binary.
        ComponentImage(
            f"{REGISTRY}/kube-proxy:{version}",
            {"/usr/local/bin/kube-proxy": kubernetes_bin / "kube-proxy"},
            on_rootfs=True,
        ),
        ComponentImage(
            f"{REGISTRY}/etcd:{pin.etcd_image_tag}", {"/usr/local/bin/etcd": etcd_bin / "etcd"}
        ),
        ComponentImage(
            f"{REGISTRY}/coredns/coredns:{pin.coredns_version}",
            {"/coredns": coredns_bin / "coredns"},
            entrypoint=("/coredns",),
        ),
        ComponentImage(pause_image(pin), {"/pause": pause_bin / "pause"}, entrypoint=("/pause",)),
        ComponentImage(
            NETD_IMAGE,
            {"/usr/local/bin/netd": netd_script, "/usr/bin/kubectl": kubernetes_bin / "kubectl"},
            entrypoint=("/usr/local/bin/netd",),
            on_rootfs=True,
        ),
    ]
    return images


def dockerfile(image: ComponentImage, rootfs_image: str) -> str:
    lines = [f"FROM {rootfs_image if image.on_rootfs else 'scratch'}", f"ENV {_PATH_ENV}"]
    for index, target in enumerate(image.files):
        lines.append(f"COPY file{index} {target}")
    if image.entrypoint:
        quoted = ", ".join(f'"{part}"' for part in image.entrypoint)
        lines.append(f"ENTRYPOINT [{quoted}]")
    return "\n".join(lines) + "\n"


def build_and_save(images: list[ComponentImage], rootfs_image: str, archive: Path) -> None:
    """Build every image and save them all into one docker archive."""
    env = {**os.environ, "DOCKER_BUILDKIT": "0"}  # the classic builder needs no buildx plugin
    for image in images:
        with tempfile.TemporaryDirectory(prefix="crashloop-image-") as context:
            for index, source in enumerate(image.files.values()):
                target = Path(context) / f"file{index}"
                shutil.copy2(source, target)
                target.chmod(0o755)
            (Path(context) / "Dockerfile").write_text(dockerfile(image, rootfs_image))
            run(
                ["docker", "build", "-q", "-t", image.tag, context],
                env=env,
                fix="check the docker engine (`docker info`)",
                timeout=timeouts.IMAGE_BUILD,
            )
    run(
        ["docker", "save", "-o", str(archive), *[image.tag for image in images]],
        timeout=timeouts.DOCKER_SAVE,
    )
