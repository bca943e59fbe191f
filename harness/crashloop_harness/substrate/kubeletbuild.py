"""A kubelet of one's own: the pinned release with a patch, a Kubernetes source tree, or a
binary, built (or taken) once and kept by its inputs' hash.

A patch is applied to copies of only the files it touches, and the pinned
release is built with Go's `-overlay` in their place: no copy of the whole
module, and the build cache turns a one-line change into a recompile of the
packages that depend on it and a link. What comes out is described (release,
patch and checksum) so every later run can say which kubelet it judged.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from crashloop_harness.core import pins, timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.paths import go_env
from crashloop_harness.core.proc import run
from crashloop_harness.substrate.nodeimage import components
from crashloop_harness.substrate.nodeimage.cache import cached_dir, digest
from crashloop_harness.substrate.nodeimage.components import kubernetes_ldflags
from crashloop_harness.substrate.nodeimage.gobuild import (
    GO_FIX,
    GoComponent,
    ModuleOrigin,
    build,
    download,
    go_version,
)

KUBELET_PACKAGE: Final = "k8s.io/kubernetes/cmd/kubelet"
# A staging module's files, as a Kubernetes checkout lays them out.
_STAGING = re.compile(r"^staging/src/(k8s\.io/[^/]+)/(.+)$")
_TARGET = re.compile(r"^\+\+\+ (\S+)")
_SOURCE = re.compile(r"^--- (\S+)")


@dataclass(frozen=True)
class Kubelet:
    """A kubelet binary ready to copy into a node, and what it was made from."""

    binary: Path
    sha256: str
    release: str  # the Kubernetes release it is (or is built from), e.g. v1.35.8
    made_from: str  # one line a reader can check: the patch and its hash, the tree, the file


def sha256_of(path: Path) -> str:
    hasher = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            hasher.update(block)
    return hasher.hexdigest()


def patched_paths(patch_text: str) -> list[str]:
    """The repository-relative files a unified diff changes (`a/`, `b/` prefixes, -p1).

    Refused: a diff that changes nothing, or one that adds or removes a file
    (an overlay replaces files that exist; build such a change with --source).
    """
    paths: list[str] = []
    source: str | None = None
    for line in patch_text.splitlines():
        if match := _SOURCE.match(line):
            source = match.group(1)
        elif (match := _TARGET.match(line)) and source is not None:
            target = match.group(1)
            if "/dev/null" in (source, target):
                raise HarnessError(
                    f"the patch adds or removes {target if source == '/dev/null' else source}",
                    "a patch may only change files the release has; build such a change from a "
                    "Kubernetes tree with --source DIR",
                )
            if not target.startswith("b/"):
                raise HarnessError(
                    f"the patch names {target}, not b/<path>",
                    "make the patch with `git diff` (a/ and b/ prefixes, applied with -p1)",
                )
            paths.append(target[2:])
            source = None
    if not paths:
        raise HarnessError(
            "the patch changes no file", "give a unified diff, as `git diff` writes it"
        )
    return sorted(set(paths))


def module_file(path: str, release: str) -> tuple[str, str, str]:
    """(module, version, path in the module) of a repository path of release ``release``."""
    if match := _STAGING.match(path):
        # Staging modules are tagged v0.<minor>.<patch> alongside v1.<minor>.<patch>.
        return match.group(1), "v0." + release.split(".", 1)[1], match.group(2)
    return "k8s.io/kubernetes", release, path


def _module_dir(module: str, version: str, toolchain: str | None) -> Path:
    return Path(str(download(module, version, toolchain)["Dir"]))


def release_tree(module: str, version: str, toolchain: str | None) -> Path:
    """The module's files as a tree of hard links outside the module cache (made once).

    Go refuses to overlay files beneath GOMODCACHE; a stable tree beside it
    costs no space, and because its path never changes, every patched build
    recompiles only the packages its patch reaches.
    """
    source = _module_dir(module, version, toolchain)

    def _link(out: Path) -> None:
        run(["cp", "-al", str(source), str(out / "tree")], timeout=timeouts.DOCKER_COPY)

    return cached_dir(f"tree-{module.rsplit('/', 1)[-1]}", digest(module, version), _link) / "tree"


# The modules every patched kubelet is built from as trees, patched or not: the
# build cache then stays valid from one patch to the next.
TREE_MODULES: Final = ("k8s.io/kubernetes", "k8s.io/client-go")


def apply_patch(
    patch: Path, pin: pins.KubernetesPin, trees: Mapping[str, Path]
) -> tuple[tuple[str, str], ...]:
    """The overlay of ``patch`` on the release's trees: (a tree's file, the patched text).

    Raises HarnessError, before anything is built, when the patch does not
    apply to the release as the module proxy serves it.
    """
    try:
        patch_text = patch.read_text()
    except OSError as error:
        raise HarnessError(f"cannot read the patch {patch}: {error.strerror}") from error
    paths = patched_paths(patch_text)
    with tempfile.TemporaryDirectory(prefix="crashloop-patch-") as scratch:
        tree = Path(scratch)
        originals = {}
        for path in paths:
            module, _version, inside = module_file(path, pin.version)
            if module not in trees:
                raise HarnessError(
                    f"the patch changes {path}, in {module}: patches reach "
                    f"{' and '.join(trees)} only",
                    "build such a change from a Kubernetes tree with --source DIR",
                )
            original = trees[module] / inside
            if not original.is_file():
                raise HarnessError(
                    f"the patch changes {path}, which Kubernetes {pin.version} does not have",
                    f"write the patch against {pin.version} (its files are in {original.parent})",
                )
            copy = tree / path
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(original, copy)
            copy.chmod(0o644)
            originals[path] = original
        result = subprocess.run(
            ["patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch", "-d", str(tree)],
            input=patch_text,
            capture_output=True,
            text=True,
            check=False,
        )
        if result.returncode != 0:
            raise HarnessError(
                f"the patch {patch} does not apply to Kubernetes {pin.version}:\n"
                + (result.stdout + result.stderr).strip(),
                f"write it against {pin.version}, e.g. with `git diff` in a checkout of that tag",
            )
        return tuple((str(originals[p]), (tree / p).read_text()) for p in paths)


def _trees(pin: pins.KubernetesPin) -> dict[str, Path]:
    return {
        module: release_tree(module, module_file_version(module, pin.version), pin.go_toolchain)
        for module in TREE_MODULES
    }


def module_file_version(module: str, release: str) -> str:
    """The version of ``module`` that Kubernetes ``release`` builds with."""
    return release if module == "k8s.io/kubernetes" else "v0." + release.split(".", 1)[1]


def _kubelet_component(
    pin: pins.KubernetesPin, trees: Mapping[str, Path], overlay: tuple[tuple[str, str], ...]
) -> GoComponent:
    return dataclasses.replace(
        components.kubernetes(pin),
        name="kubelet",
        packages=(KUBELET_PACKAGE,),
        local_modules=tuple((module, str(path)) for module, path in trees.items()),
        overlay=overlay,
    )


def kubelet_from_patch(patch: Path, pin: pins.KubernetesPin) -> Kubelet:
    """The pinned release's kubelet with ``patch`` applied, built once per patch text."""
    trees = _trees(pin)
    overlay = apply_patch(patch, pin, trees)
    binary = build(_kubelet_component(pin, trees, overlay)) / "kubelet"
    patch_hash = hashlib.sha256(patch.read_bytes()).hexdigest()[:12]
    return Kubelet(
        binary=binary,
        sha256=sha256_of(binary),
        release=pin.version,
        made_from=f"{pin.version} + patch {patch.name} (sha256 {patch_hash})",
    )


def kubelet_of_release(pin: pins.KubernetesPin) -> Kubelet:
    """The pinned release's own kubelet, built the same way as a patched one (a control)."""
    binary = build(_kubelet_component(pin, _trees(pin), ())) / "kubelet"
    return Kubelet(binary, sha256_of(binary), pin.version, f"{pin.version} as released")


def check_source_tree(source: Path) -> str:
    """The release a Kubernetes checkout is at (its last tag); refuses what is not one."""
    go_mod = source / "go.mod"
    # Kubernetes' go.mod opens with comments: the module line is found, not assumed first.
    module_lines = go_mod.read_text().splitlines() if go_mod.is_file() else []
    if "module k8s.io/kubernetes" not in (line.strip() for line in module_lines):
        raise HarnessError(
            f"{source} is not a Kubernetes source tree (no go.mod of module k8s.io/kubernetes)",
            "give the root of a kubernetes/kubernetes checkout",
        )
    if not (source / "cmd" / "kubelet").is_dir():
        raise HarnessError(f"{source} has no cmd/kubelet", "give the root of the checkout")
    try:
        tag = run(
            ["git", "-C", str(source), "describe", "--tags", "--abbrev=0"],
            timeout=timeouts.TOOL_QUERY,
        ).strip()
    except HarnessError as error:
        raise HarnessError(
            f"{source}: no release tag to say which kubelet it is ({error})",
            "give a git checkout of kubernetes/kubernetes at or after a release tag",
        ) from error
    return tag


def kubelet_from_source(source: Path, pin: pins.KubernetesPin) -> Kubelet:
    """``source``'s kubelet, built in the tree (its go.mod and staging replacements)."""
    tag = check_source_tree(source)
    if not tag.startswith(pin.version.rsplit(".", 1)[0] + "."):
        raise HarnessError(
            f"{source} is at {tag}, the cluster runs Kubernetes {pin.version}: the model would "
            "judge one release's kubelet against another's rules",
            f"check out a {pin.minor} tag, or choose that release with --kubernetes",
        )
    head = run(["git", "-C", str(source), "rev-parse", "HEAD"], timeout=timeouts.TOOL_QUERY)
    changes = run(["git", "-C", str(source), "diff", "HEAD"], timeout=timeouts.TOOL_QUERY)
    # The version the binary reports, stamped as upstream's build stamps it: unstamped it
    # says v0.0.0-master, which no release's rules apply to, and the node never settles.
    version = run(
        ["git", "-C", str(source), "describe", "--tags", "--dirty"], timeout=timeouts.TOOL_QUERY
    ).strip()
    when = run(
        ["git", "-C", str(source), "show", "-s", "--format=%cI", "HEAD"],
        timeout=timeouts.TOOL_QUERY,
    ).strip()
    ldflags = " ".join(kubernetes_ldflags(version, ModuleOrigin(head.strip(), when)))
    key = digest("kubelet-source", str(source.resolve()), head, changes, ldflags, go_version())

    def _build(out: Path) -> None:
        env = {**go_env(), "CGO_ENABLED": "0", "GOFLAGS": ""}
        if pin.go_toolchain:
            env["GOTOOLCHAIN"] = pin.go_toolchain
        (out / "bin").mkdir()
        kubelet = str(out / "bin" / "kubelet")
        run(
            ["go", "build", "-trimpath", "-ldflags", ldflags, "-o", kubelet, "./cmd/kubelet"],
            cwd=str(source),
            env=env,
            fix=GO_FIX,
            timeout=timeouts.GO_BUILD,
        )

    binary = cached_dir("kubelet-source", key, _build) / "bin" / "kubelet"
    dirty = " with uncommitted changes" if changes.strip() else ""
    return Kubelet(binary, sha256_of(binary), tag, f"source {source} at {head.strip()[:12]}{dirty}")


def kubelet_from_binary(binary: Path, pin: pins.KubernetesPin) -> Kubelet:
    """A kubelet binary as given, refused unless it says it is of the cluster's minor."""
    if not binary.is_file():
        raise HarnessError(f"no kubelet binary at {binary}", "give the path of a built kubelet")
    try:
        said = run([str(binary), "--version"], timeout=timeouts.TOOL_QUERY).strip()
    except (HarnessError, OSError) as error:
        raise HarnessError(
            f"{binary} does not run here as a kubelet (`{binary.name} --version`: {error})",
            "give a kubelet built for Linux on this machine's architecture",
        ) from error
    version = said.rsplit(" ", 1)[-1]
    if not version.startswith(pin.version.rsplit(".", 1)[0] + "."):
        raise HarnessError(
            f"{binary} says {said!r}, the cluster runs Kubernetes {pin.version}: the model would "
            "judge one release's kubelet against another's rules",
            f"give a {pin.minor} kubelet, or choose its release with --kubernetes",
        )
    return Kubelet(binary, sha256_of(binary), version, f"binary {binary}")
