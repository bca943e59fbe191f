"""Choose the node image: the pinned official one when it can be had, else our own build."""

from __future__ import annotations

import subprocess
from pathlib import Path

from crashloop_harness.core import pins, timeouts
from crashloop_harness.core.conventions import KUBERNETES_VERSION_LABEL
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.paths import cache_dir
from crashloop_harness.core.proc import run, succeeds
from crashloop_harness.core.progress import Progress
from crashloop_harness.substrate.nodeimage.assemble import build_node_image, image_label
from crashloop_harness.substrate.proxyversions import served


def image_exists(image: str) -> bool:
    return succeeds(["docker", "image", "inspect", image], timeout=timeouts.ENGINE_PROBE)


def check_requested_image(image: str) -> None:
    """A user-named image must exist locally; the harness never guesses another."""
    if not image_exists(image):
        raise HarnessError(
            f"node image {image!r} does not exist on this docker engine",
            f"build it (`crashloop node-image --offline` gives {pins.LOCAL_NODE_IMAGE}), pull "
            "it, or omit --image/--kind-image to let the harness choose",
        )
    version = image_label(image, KUBERNETES_VERSION_LABEL)
    if version is not None and version not in pins.SUPPORTED_KUBERNETES_VERSIONS:
        raise HarnessError(
            f"node image {image!r} runs Kubernetes {version}, which this harness does not pin",
            f"use an image of {', '.join(pins.SUPPORTED_KUBERNETES_VERSIONS)}",
        )


def check_kubernetes_version(version: str) -> pins.KubernetesPin:
    """The pinned release a version names ("1.34", "v1.34.11"); refused with the list.

    A patch newer than its minor's pin must be one the Go module proxy serves:
    the offline build fetches its source there, and a version it does not hold
    (v1.35.99) is refused before anything is printed or created.
    """
    pinned = ", ".join(pin.version for pin in pins.KUBERNETES.values())
    try:
        pin = pins.kubernetes_pin(version)
    except ValueError as error:
        raise HarnessError(
            str(error),
            "use one of them, e.g. --kubernetes 1.34 (`crashloop newest` lists the newer "
            "patches a build can use)",
        ) from error
    if pin.version != pins.KUBERNETES[pin.minor].version:
        answer = served(pin.version)
        if answer is not None:
            raise HarnessError(
                f"Kubernetes {pin.version} cannot be built here: the Go module proxy does not "
                f"serve k8s.io/kubernetes {pin.version} ({answer})",
                f"check the release exists, or use a pinned one: {pinned}",
            )
    return pin


def choose_node_image(
    progress: Progress,
    requested: str | None = None,
    pin: pins.KubernetesPin = pins.DEFAULT_KUBERNETES,
) -> str:
    """The image to create clusters of ``pin``'s release from.

    Order: the image the user named; the pinned official image if present or
    pullable; our offline build (built now if missing or stale).
    """
    if requested:
        check_requested_image(requested)
        return requested
    official = pin.official_node_image
    if official is not None:
        if image_exists(official):
            return official
        if succeeds(["docker", "pull", official], timeout=timeouts.IMAGE_PULL):
            progress(f"pulled {official}")
            return official
        progress("the official node image cannot be pulled here; using the offline build")
    else:
        progress(f"kind publishes no node image of {pin.version}; using the offline build")
    return build_node_image(progress, pin)


def kubectl_for(image: str) -> Path:
    """A kubectl of the image's own version, copied out of the node image.

    Works the same for the official and the offline image, and nothing is
    downloaded.
    """
    image_id = run(["docker", "image", "inspect", "-f", "{{.Id}}", image]).strip()
    target = cache_dir() / "bin" / f"kubectl-{image_id.removeprefix('sha256:')[:16]}"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    with partial.open("wb") as out:
        completed = subprocess.run(
            ["docker", "run", "--rm", "--entrypoint", "cat", image, "/usr/bin/kubectl"],
            stdout=out,
            stderr=subprocess.PIPE,
            check=False,
        )
    if completed.returncode != 0:
        partial.unlink(missing_ok=True)
        raise HarnessError(
            f"cannot copy kubectl out of {image}: {completed.stderr.decode().strip()}",
            "check the docker engine (`docker info`)",
        )
    partial.chmod(0o755)
    partial.rename(target)
    prune_kubectl_copies()
    return target


def prune_kubectl_copies() -> None:
    """Remove the kubectl copies of node images that no longer exist (replaced by a rebuild)."""
    try:
        image_ids = run(["docker", "image", "ls", "--no-trunc", "--quiet"]).split()
    except HarnessError:
        return  # tidying up is no reason to fail; the next copy tries again
    live = {f"kubectl-{image_id.removeprefix('sha256:')[:16]}" for image_id in image_ids}
    for copy in (cache_dir() / "bin").glob("kubectl-*"):
        # A .partial is another process's copy in flight.
        if copy.name not in live and copy.suffix != ".partial":
            copy.unlink(missing_ok=True)
