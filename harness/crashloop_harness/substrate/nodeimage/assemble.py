"""Assemble the offline kind node image from the rootfs, binaries and images.

The image carries a label with a hash of all its inputs. With unchanged inputs
a build is a no-op; the tag is written only by the final `docker commit`, so an
interrupted build never leaves a tag that looks finished.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Final

from crashloop_harness.core import pins, timeouts
from crashloop_harness.core.containerexec import exec_argv
from crashloop_harness.core.conventions import INPUTS_LABEL, KUBERNETES_VERSION_LABEL
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.polling import poll_true
from crashloop_harness.core.proc import run, succeeds
from crashloop_harness.core.progress import Progress
from crashloop_harness.core.resources import IMAGES_DIR
from crashloop_harness.substrate.engine import host_is_linux
from crashloop_harness.substrate.nodeimage import components, gobuild, rootfs
from crashloop_harness.substrate.nodeimage.cache import digest, files_digest
from crashloop_harness.substrate.nodeimage.componentimages import (
    NETD_IMAGE,
    build_and_save,
    component_images,
    pause_image,
)

_NODE_FILES: Final = IMAGES_DIR / "node" / "files"


def _project_files() -> list[Path]:
    return [
        path
        for folder in ("node", "netd", "pause")
        for path in (IMAGES_DIR / folder).rglob("*")
        if path.is_file()
    ]


def inputs_key(pin: pins.KubernetesPin = pins.DEFAULT_KUBERNETES) -> str:
    """Hash of everything the node image of ``pin``'s release is made of."""
    return digest(
        "node-image",
        pin.version,
        rootfs.rootfs_key(),
        [component.key_parts() for component in components.components_for(pin)],
        files_digest(_project_files(), IMAGES_DIR),
        gobuild.go_version(),
    )


def image_label(image: str, label: str) -> str | None:
    """A label of a local image, or None when the image does not exist."""
    if not succeeds(["docker", "image", "inspect", image], timeout=timeouts.ENGINE_PROBE):
        return None
    template = '{{ index .Config.Labels "' + label + '" }}'
    return run(["docker", "image", "inspect", "-f", template, image]).strip() or None


def is_current(pin: pins.KubernetesPin = pins.DEFAULT_KUBERNETES) -> bool:
    return image_label(pin.local_node_image, INPUTS_LABEL) == inputs_key(pin)


def build_node_image(
    progress: Progress,
    pin: pins.KubernetesPin = pins.DEFAULT_KUBERNETES,
    tag: str | None = None,
) -> str:
    """Build (or find up to date) the offline node image of ``pin``'s release; returns its tag.

    Components every release shares (the rootfs, containerd, runc, CNI
    plugins, crictl) come from the same caches, so a second release costs its
    Kubernetes, etcd and CoreDNS builds only.
    """
    tag = tag or pin.local_node_image
    key = inputs_key(pin)
    if image_label(tag, INPUTS_LABEL) == key:
        progress(f"{tag} is up to date (inputs {key})")
        return tag
    if not host_is_linux():
        official = pin.official_node_image
        raise HarnessError(
            f"the offline node image build (debootstrap, Go builds, docker import) runs only on "
            f"a Linux host, not on {sys.platform}",
            f"pull kind's image instead: `docker pull {official}`"
            if official
            else f"build {tag} on a Linux machine and `docker save`/`docker load` it here",
        )

    progress("Debian rootfs (debootstrap)")
    rootfs_image = _rootfs_image()
    binaries: dict[str, Path] = {}
    for component in components.components_for(pin):
        progress(f"building {component.name} {component.version}")
        binaries[component.name] = gobuild.build(component)
    progress("building pause")
    pause_bin = gobuild.build_local(IMAGES_DIR / "pause", "pause")
    _check_image_list(pin, binaries["kubernetes"])

    with tempfile.TemporaryDirectory(prefix="crashloop-node-") as workdir:
        archive = Path(workdir) / "images.tar"
        progress("building component images")
        images = component_images(
            pin,
            kubernetes_bin=binaries["kubernetes"],
            etcd_bin=binaries["etcd"],
            coredns_bin=binaries["coredns"],
            pause_bin=pause_bin,
            netd_script=IMAGES_DIR / "netd" / "netd",
        )
        build_and_save(images, rootfs_image, archive)
        staging = Path(workdir) / "root"
        _stage_node_files(pin, staging, binaries)
        progress("assembling the node")
        _assemble(rootfs_image, staging, archive, tag, key, version=pin.version)
    progress(f"built {tag} (inputs {key})")
    return tag


def _rootfs_image() -> str:
    image = f"crashloop.local/node-rootfs:{rootfs.rootfs_key()}"
    if not succeeds(["docker", "image", "inspect", image], timeout=timeouts.ENGINE_PROBE):
        tar = rootfs.build_rootfs_tar()
        run(["docker", "import", str(tar), image], timeout=timeouts.DOCKER_IMPORT)
    return image


def _check_image_list(pin: pins.KubernetesPin, kubernetes_bin: Path) -> None:
    """The preloaded tags must be exactly the ones kubeadm will look for."""
    listed = run(
        [
            str(kubernetes_bin / "kubeadm"),
            "config",
            "images",
            "list",
            "--kubernetes-version",
            pin.version,
        ]
    ).split()
    ours = {
        image.tag
        for image in component_images(
            pin,
            kubernetes_bin=Path(),
            etcd_bin=Path(),
            coredns_bin=Path(),
            pause_bin=Path(),
            netd_script=Path(),
        )
        if image.tag != NETD_IMAGE
    }
    if set(listed) != ours:
        raise HarnessError(
            f"kubeadm {pin.version} asks for {sorted(listed)}, the node image would "
            f"preload {sorted(ours)}",
            f"use the pinned {pins.KUBERNETES[pin.minor].version} (--kubernetes {pin.minor}); a "
            "newer patch whose kubeadm lists other components needs a harness release that "
            "pins them",
        )


def _stage_node_files(pin: pins.KubernetesPin, staging: Path, binaries: dict[str, Path]) -> None:
    """Lay out every file the node adds to the rootfs, at its final path."""
    substitutions = {"@PAUSE_IMAGE@": pause_image(pin), "@NETD_IMAGE@": NETD_IMAGE}
    for source in _NODE_FILES.rglob("*"):
        if source.is_dir():
            continue
        target = staging / source.relative_to(_NODE_FILES)
        target.parent.mkdir(parents=True, exist_ok=True)
        text = source.read_bytes()
        for placeholder, value in substitutions.items():
            text = text.replace(placeholder.encode(), value.encode())
        target.write_bytes(text)
        target.chmod(source.stat().st_mode & 0o777)
    placements = [
        ("usr/bin", binaries["kubernetes"], ("kubeadm", "kubelet", "kubectl")),
        ("usr/local/bin", binaries["containerd"], ("containerd", "ctr", "containerd-shim-runc-v2")),
        ("usr/local/sbin", binaries["runc"], ("runc",)),
        ("usr/local/bin", binaries["crictl"], ("crictl",)),
        (
            "opt/cni/bin",
            binaries["cni-plugins"],
            ("ptp", "bridge", "loopback", "host-local", "portmap"),
        ),
    ]
    for folder, source_dir, names in placements:
        (staging / folder).mkdir(parents=True, exist_ok=True)
        for name in names:
            shutil.copy2(source_dir / name, staging / folder / name)
    (staging / "kind").mkdir(exist_ok=True)
    (staging / "kind" / "version").write_text(pin.version)


def _assemble(
    rootfs_image: str, staging: Path, archive: Path, tag: str, key: str, *, version: str
) -> None:
    container = f"crashloop-node-build-{key}"
    run(["docker", "rm", "-f", container], timeout=timeouts.DOCKER_REMOVE)
    run(
        [
            "docker",
            "run",
            "-d",
            "--name",
            container,
            "--entrypoint",
            "sleep",
            "--security-opt",
            "seccomp=unconfined",
            rootfs_image,
            "infinity",
        ],
        timeout=timeouts.DOCKER_RUN,
    )
    try:
        tar = subprocess.Popen(["tar", "-C", str(staging), "-c", "."], stdout=subprocess.PIPE)
        run(["docker", "cp", "-", f"{container}:/"], stdin=tar.stdout, timeout=timeouts.DOCKER_COPY)
        tar.wait()
        _exec(container, "systemctl", "enable", "containerd.service", "kubelet.service")
        _exec(container, "mkdir", "-p", "/etc/cni/net.d", "/var/lib/kubelet")
        # Preload the images into containerd's k8s.io namespace, as pinned
        # images (never garbage-collected), without unpacking: the kubelet's
        # runtime unpacks on first use.
        subprocess.Popen(
            exec_argv(container, ["sh", "-c", "containerd >/tmp/containerd.log 2>&1"]),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _await_containerd(container, running=True)
        with archive.open("rb") as images:
            run(
                exec_argv(
                    container,
                    [
                        "ctr",
                        "--namespace=k8s.io",
                        "images",
                        "import",
                        "--label=io.cri-containerd.pinned=pinned",
                        "--all-platforms",
                        "--no-unpack",
                        "--digests",
                        "-",
                    ],
                    stdin=True,
                ),
                stdin=images,
                timeout=timeouts.BUILD_IMAGE_IMPORT,
            )
        _exec(container, "pkill", "containerd")
        _await_containerd(container, running=False)
        _exec(container, "rm", "-rf", "/tmp/containerd.log", "/run/containerd")
        snapshot = run(["docker", "commit", container], timeout=timeouts.DOCKER_COMMIT).strip()
        _finish_image(snapshot, tag, key, version)
    finally:
        run(["docker", "rm", "-f", container], timeout=timeouts.DOCKER_REMOVE)


def _answers(container: str, *argv: str) -> bool:
    """Whether a short probe inside the build container succeeds."""
    return succeeds(exec_argv(container, argv), timeout=timeouts.BUILD_PROBE)


def _exec(container: str, *argv: str) -> str:
    return run(exec_argv(container, argv), timeout=timeouts.BUILD_CONTAINER_EXEC)


def _finish_image(snapshot: str, tag: str, key: str, version: str) -> None:
    """Give the committed filesystem the node's start-up contract and its labels.

    A tiny `docker build` on top of the snapshot, because `docker commit --change`
    of older engines cannot set STOPSIGNAL (systemd stops on SIGRTMIN+3).
    """
    dockerfile = "\n".join(
        [
            f"FROM {snapshot}",
            "ENV container=docker",
            "STOPSIGNAL SIGRTMIN+3",
            'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]',
            f"LABEL {INPUTS_LABEL}={key}",
            f"LABEL {KUBERNETES_VERSION_LABEL}={version}",
        ]
    )
    with tempfile.TemporaryDirectory(prefix="crashloop-finish-") as context:
        (Path(context) / "Dockerfile").write_text(dockerfile + "\n")
        run(
            ["docker", "build", "-q", "-t", tag, context],
            env={**os.environ, "DOCKER_BUILDKIT": "0"},
            timeout=timeouts.IMAGE_BUILD,
        )


def _await_containerd(container: str, *, running: bool) -> None:
    """Until the build container's containerd answers (``running``) or has exited."""
    if running:
        probe = exec_argv(container, ["ctr", "version"])
    else:
        probe = exec_argv(container, ["pgrep", "-x", "containerd"])
    if not poll_true(
        lambda: succeeds(probe, timeout=timeouts.BUILD_PROBE) == running,
        within=timeouts.BUILD_CONTAINERD_READY,
        every=0.5,
    ):
        state = "answer" if running else "exit"
        raise HarnessError(
            f"containerd in the build container {container} did not {state} within "
            f"{timeouts.BUILD_CONTAINERD_READY:.0f}s",
            f"read `docker exec {container} cat /tmp/containerd.log`; a rerun of the build "
            "starts from the cached parts",
        )
