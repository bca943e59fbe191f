"""`crashloop engine | kind | node-image | workload-image | harness-image`: what a cluster is
made on, and what runs in it."""

from __future__ import annotations

import argparse
from pathlib import Path

from crashloop_harness.cli import common
from crashloop_harness.cli.codes import SETUP_CODES
from crashloop_harness.cli.out import SCREEN, answer, emit
from crashloop_harness.cluster import lifecycle
from crashloop_harness.core import pins
from crashloop_harness.core.paths import state_dir
from crashloop_harness.substrate import harnessimage
from crashloop_harness.substrate.engine import ensure_engine, stop_engine
from crashloop_harness.substrate.kindbin import ensure_kind
from crashloop_harness.substrate.nodeimage.assemble import build_node_image
from crashloop_harness.substrate.nodeselect import check_kubernetes_version, choose_node_image
from crashloop_harness.substrate.workloadimage import STABLE_TAG, ensure_image, load_into
from crashloop_harness.substrate.workloadindex import (
    ARCHITECTURES,
    write_index_archive,
)


def register(commands: common.Commands, parents: common.Parents) -> None:
    engine = common.add_command(commands, "engine", _cmd_engine, codes=SETUP_CODES)
    common.output_option(engine)
    engine.add_argument(
        "--stop",
        action="store_true",
        help="stop the engine the harness started, with every container (a cluster then "
        "needs `crashloop up`)",
    )
    kind = common.add_command(
        commands, "kind", _cmd_kind, codes=SETUP_CODES, words={"kind": pins.KIND_VERSION}
    )
    common.output_option(kind)
    image = common.add_command(commands, "node-image", _cmd_node_image, codes=SETUP_CODES)
    common.output_option(image)
    image.add_argument(
        "--offline",
        action="store_true",
        help="build crashloop.local/node:<version> even if the official image could be pulled",
    )
    common.kubernetes_option(image)
    image.add_argument(
        "--tag",
        help="tag of the offline build (with --offline; default crashloop.local/node:<version>)",
    )
    _add_images(commands, parents)


def _add_images(commands: common.Commands, parents: common.Parents) -> None:
    """The images pods run: the workload's, and the harness's own for the in-cluster nightly."""
    workload = common.add_command(
        commands,
        "workload-image",
        _cmd_workload_image,
        codes=SETUP_CODES,
        parents=(parents.spec_and_image,),
    )
    common.output_option(workload)
    workload.add_argument(
        "--oci-archive",
        type=Path,
        metavar="FILE",
        help="write the image for amd64 and arm64 nodes as one OCI image index to FILE (an "
        "oci-archive tar) to push to your registry, instead of loading it into the kind cluster",
    )
    harness = common.add_command(
        commands,
        "harness-image",
        _cmd_harness_image,
        codes=SETUP_CODES,
        parents=(parents.spec_and_image,),
    )
    common.output_option(harness)
    harness.add_argument(
        "--no-load",
        action="store_true",
        help="build it only: load it into no cluster (to push it to your registry)",
    )
    harness.add_argument(
        "--oci-archive",
        type=Path,
        metavar="FILE",
        help="write the image for amd64 and arm64 nodes as one OCI image index to FILE (an "
        "oci-archive tar) to push to your registry, instead of building it for this engine",
    )


def _cmd_engine(args: argparse.Namespace) -> int:
    """find or install and start a Docker engine

    Find a running Docker engine, or install (apt) and start one. On hosts that cannot grant every
    capability a kind node asks for, a runc wrapper becomes the default runtime.
    """
    if args.stop:
        pid = stop_engine()
        common.console.print(f"stopped the docker engine (pid {pid}) and its containers")
        emit({"stopped": True, "pid": pid})
        return 0
    engine = ensure_engine()
    where = "started by the harness" if engine.started_here else "already running"
    wrapper = ", capability wrapper on" if engine.capability_wrapper else ""
    common.console.print(f"docker engine {engine.version} ({where}{wrapper})")
    emit(
        {
            "version": engine.version,
            "started_here": engine.started_here,
            "capability_wrapper": engine.capability_wrapper,
        }
    )
    return 0


def _cmd_kind(_args: argparse.Namespace) -> int:
    """print the path of kind {kind}, building it if needed

    Print the path of the pinned kind, built from its Go module if needed.
    """
    path = ensure_kind()
    answer({"kind": str(path), "version": pins.KIND_VERSION}, str(path))
    return 0


def _cmd_node_image(args: argparse.Namespace) -> int:
    """choose or build the kind node image

    Choose the node image of a pinned Kubernetes release: kind's official image when it can be
    pulled, else an offline build from Debian packages and Go modules (about 18 minutes from empty
    caches, nothing when its inputs did not change).
    """
    pin = check_kubernetes_version(args.kubernetes)
    ensure_engine()
    if args.offline:
        image = build_node_image(common.progress, pin, tag=args.tag)
    else:
        image = choose_node_image(common.progress, None, pin)
    answer({"image": image, "kubernetes": pin.version}, image)
    return 0


def _cmd_workload_image(args: argparse.Namespace) -> int:
    """build the workload image and load its stable tag into the cluster (for the YAML)

    Build the workload image, load it into every node and link the cluster's kubectl. With
    --oci-archive, make no cluster: write the image for amd64 and arm64 nodes as one image
    index, for an existing cluster's pools to pull from your registry
    (`skopeo copy --all oci-archive:FILE docker://REGISTRY/crashloop-workload:TAG`).
    """
    if args.oci_archive is not None:
        return _write_oci_archive(args.oci_archive)
    spec = common.spec_of(args)
    up = lifecycle.up(spec, common.progress, image=args.image)
    common.progress("workload image")
    ensure_image()
    load_into(up.name, up.kind_bin, STABLE_TAG)
    link = state_dir() / "bin" / "kubectl"
    link.parent.mkdir(parents=True, exist_ok=True)
    link.unlink(missing_ok=True)
    link.symlink_to(up.kubectl_bin)
    out = SCREEN.tables
    out.print(f"{STABLE_TAG} is loaded into every node of cluster {up.name}. In a shell:")
    out.print(f"  export KUBECONFIG={up.kubeconfig}", soft_wrap=True)
    out.print(f"  export PATH={link.parent}:$PATH", soft_wrap=True)
    emit(
        {
            "image": STABLE_TAG,
            "cluster": up.name,
            "kubeconfig": str(up.kubeconfig),
            "kubectl": str(link),
        }
    )
    return 0


def _write_oci_archive(path: Path) -> int:
    common.progress(f"workload image index for {', '.join(ARCHITECTURES)}")
    written = write_index_archive(path)
    out = SCREEN.tables
    out.print(f"wrote {written}: the workload for linux/{', linux/'.join(ARCHITECTURES)}. Push it:")
    out.print(
        f"  skopeo copy --all oci-archive:{written} docker://REGISTRY/crashloop-workload:TAG",
        soft_wrap=True,
    )
    out.print("and name it with --workload-image REGISTRY/crashloop-workload:TAG.")
    emit({"archive": str(written), "architectures": list(ARCHITECTURES)})
    return 0


def _cmd_harness_image(args: argparse.Namespace) -> int:
    """build the harness's own image, for the nightly a cluster runs (`crashloop cronjob`)

    Build the harness's image offline (Debian's Python, this harness and the packages installed
    beside it, non-root) and load it into every node of the harness's cluster; with --no-load,
    make no cluster; with --oci-archive, write it for amd64 and arm64 nodes as one image index
    (each its own Debian rootfs and wheels) and build nothing for this engine. Push it to your
    registry for a cluster of your own (`docker tag IMAGE REGISTRY/crashloop-harness:TAG &&
    docker push REGISTRY/...`, or `skopeo copy --all oci-archive:FILE docker://...`).
    """
    if args.oci_archive is not None:
        architectures = list(harnessimage.PLATFORMS)
        common.progress(f"harness image index for {', '.join(architectures)}")
        written = harnessimage.write_index_archive(args.oci_archive)
        SCREEN.tables.print(
            f"wrote {written}: the harness for linux/{', linux/'.join(architectures)}. Push it:\n"
            f"  skopeo copy --all oci-archive:{written} docker://REGISTRY/crashloop-harness:TAG",
            soft_wrap=True,
        )
        emit({"archive": str(written), "architectures": architectures})
        return 0
    ensure_engine()
    common.progress("harness image (Debian's Python, the harness, its packages)")
    tag = harnessimage.ensure_image()
    cluster = None
    if not args.no_load:
        up = lifecycle.up(common.spec_of(args), common.progress, image=args.image)
        load_into(up.name, up.kind_bin, tag)
        cluster = up.name
    out = SCREEN.tables
    where = f"loaded into every node of cluster {cluster}" if cluster else "built"
    out.print(f"{tag} is {where}. For a cluster of your own, push it:")
    out.print(
        f"  docker tag {tag} REGISTRY/crashloop-harness:TAG && "
        "docker push REGISTRY/crashloop-harness:TAG",
        soft_wrap=True,
    )
    out.print("and name it: crashloop cronjob --image REGISTRY/crashloop-harness:TAG ...")
    emit({"image": tag, "cluster": cluster})
    return 0
