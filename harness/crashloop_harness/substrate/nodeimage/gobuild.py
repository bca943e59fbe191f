"""Build Go programs from the module proxy, with correct version stamping.

Every component is built the same way: a small main module of our own requires
the upstream module at the pinned version, adds `replace` directives for the
upstream's local-path replacements (Kubernetes' staging modules, etcd's sibling
modules), and `go build`s the wanted main packages. Upstream's `go install
module@version` refuses modules with replace directives, hence the wrapper.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from crashloop_harness.core import pins, timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.paths import go_env
from crashloop_harness.core.proc import run
from crashloop_harness.substrate import hostpkgs
from crashloop_harness.substrate.engine import engine_go_arch
from crashloop_harness.substrate.nodeimage.cache import cached_dir, digest, files_digest

GO_FIX = (
    f"{pins.GO_INSTALL} (Kubernetes v1.36 and later need 1.26; a release pinned to a newer "
    "toolchain takes it from the module proxy) and check the module proxy"
)
_LOCAL_REPLACE = re.compile(r"^\s*(?:replace\s+)?(\S+)\s+=>\s+(\.\.?/\S*)\s*$")


@dataclass(frozen=True)
class ModuleOrigin:
    """What the module proxy says about a version: its commit and tag time."""

    commit: str
    time: str


@dataclass(frozen=True)
class GoComponent:
    """One upstream module and the main packages to build from it."""

    name: str
    module: str
    version: str
    packages: tuple[str, ...]
    cgo: bool = False
    tags: tuple[str, ...] = ()
    # Version stamping: -X flags built from the module's origin.
    ldflags: Callable[[ModuleOrigin], tuple[str, ...]] = field(default=lambda _origin: ())
    # Version of a module the upstream replaces with a local path:
    # (module path, the component's version) -> that module's version.
    sibling_version: Callable[[str, str], str] | None = None
    # A main package of our own, for upstreams whose main is not importable.
    own_main: Path | None = None
    # Debian packages the build host needs (headers for cgo).
    host_packages: tuple[str, ...] = ()
    # A newer Go toolchain than the host's (GOTOOLCHAIN), fetched from the proxy.
    toolchain: str | None = None
    # Modules built from a local directory instead of the proxy's version
    # (module path, directory): a patched kubelet's release, as a tree of hard
    # links into the module cache, which Go will not overlay.
    local_modules: tuple[tuple[str, str], ...] = ()
    # Source files replaced for this build (`go build -overlay`): a file of a
    # local module (absolute path) and the text built in its place. How a
    # patched kubelet is built without a copy of the whole module.
    overlay: tuple[tuple[str, str], ...] = ()

    def key_parts(self) -> tuple[object, ...]:
        main_text = self.own_main.read_text() if self.own_main else ""
        stamp = self.ldflags(ModuleOrigin("<commit>", "<time>"))
        parts: tuple[object, ...] = (
            self.module,
            self.version,
            self.packages,
            self.cgo,
            self.tags,
            stamp,
            main_text,
        )
        # Only when set, so the keys (and caches) of every other build stay as they were.
        if self.toolchain:
            parts = (*parts, self.toolchain)
        if self.local_modules or self.overlay:
            parts = (*parts, self.local_modules, self.overlay)
        return parts


def go_version() -> str:
    return run(["go", "env", "GOVERSION"], fix=GO_FIX, env=go_env()).strip()


def toolchain_env(toolchain: str | None) -> dict[str, str]:
    """The Go environment, with a newer toolchain (fetched from the proxy) when one is needed."""
    env = dict(go_env())
    if toolchain is not None:
        env["GOTOOLCHAIN"] = toolchain
    return env


def download(module: str, version: str, toolchain: str | None = None) -> Mapping[str, object]:
    """`go mod download -json`, which also fetches the .info with the origin."""
    out = run(
        ["go", "mod", "download", "-json", f"{module}@{version}"],
        env=toolchain_env(toolchain),
        fix=GO_FIX,
        timeout=timeouts.GO_DOWNLOAD,
    )
    info: dict[str, object] = json.loads(out)
    if info.get("Error"):
        raise HarnessError(
            f"the module proxy cannot serve {module}@{version}: {info['Error']}", GO_FIX
        )
    return info


def origin_of(info: Mapping[str, object]) -> ModuleOrigin:
    details = json.loads(Path(str(info["Info"])).read_text())
    commit = str(details.get("Origin", {}).get("Hash", "")) or "unknown"
    return ModuleOrigin(commit=commit, time=str(details.get("Time", "1970-01-01T00:00:00Z")))


def local_replacements(go_mod: str) -> list[str]:
    """Module paths that an upstream go.mod replaces with a local directory."""
    modules = []
    in_block = False
    for line in go_mod.splitlines():
        stripped = line.strip()
        if stripped.startswith("replace ("):
            in_block = True
            continue
        if in_block and stripped == ")":
            in_block = False
            continue
        if in_block or stripped.startswith("replace "):
            match = _LOCAL_REPLACE.match(stripped)
            # A directory that is not another module (etcd's FORBIDDEN_DEPENDENCY
            # guard) cannot be mirrored by a version; skip it.
            if match and "FORBIDDEN" not in match.group(2):
                modules.append(match.group(1))
    return modules


def wrapper_go_mod(component: GoComponent, upstream_go_mod: str) -> str:
    lines = [
        f"module crashloop.local/build/{component.name}",
        "",
        "go 1.25.0",
        "",
        f"require {component.module} {component.version}",
        "",
    ]
    local = dict(component.local_modules)
    lines += [f"replace {module} => {directory}" for module, directory in local.items()]
    if component.sibling_version is not None:
        for module in local_replacements(upstream_go_mod):
            if module in local:
                continue
            lines.append(
                f"replace {module} => {module} "
                f"{component.sibling_version(module, component.version)}"
            )
    return "\n".join(lines) + "\n"


def build(component: GoComponent) -> Path:
    """Build the component's binaries; returns the directory that holds them (cached)."""
    key = digest("go", component.key_parts(), go_version())
    return cached_dir(f"go-{component.name}", key, lambda out: _build_into(component, out)) / "bin"


def _build_into(component: GoComponent, out: Path) -> None:
    hostpkgs.ensure(component.host_packages, f"building {component.name}")
    info = download(component.module, component.version, component.toolchain)
    upstream_go_mod = Path(str(info["GoMod"])).read_text()
    origin = origin_of(info)

    work = out / "module"
    work.mkdir()
    (work / "go.mod").write_text(wrapper_go_mod(component, upstream_go_mod))
    if component.own_main is not None:
        (work / "main.go").write_text(component.own_main.read_text())
    else:
        # go.mod needs a package to be a buildable module; this one is never built.
        (work / "doc.go").write_text("// Package build only pins versions.\npackage build\n")

    env = {**toolchain_env(component.toolchain), "CGO_ENABLED": "1" if component.cgo else "0"}
    fix = f"building {component.module}@{component.version}: " + GO_FIX
    targets = [f"{package}@{component.version}" for package in component.packages]
    if component.own_main is None:
        run(["go", "get", *targets], cwd=str(work), env=env, fix=fix, timeout=timeouts.GO_GET)
    else:
        run(["go", "mod", "tidy"], cwd=str(work), env=env, fix=fix, timeout=timeouts.GO_GET)

    argv = ["go", "build", "-trimpath", "-o", str(out / "bin") + os.sep]
    if component.overlay:
        argv += ["-overlay", str(write_overlay(component.overlay, out / "overlay"))]
    if component.tags:
        argv += ["-tags", ",".join(component.tags)]
    argv += ["-ldflags", " ".join(("-s", "-w", *component.ldflags(origin)))]
    argv += list(component.packages) if component.own_main is None else ["."]
    (out / "bin").mkdir()
    log = out / "build.log"
    with log.open("w") as handle:
        result = subprocess.run(
            argv, cwd=work, env=env, stdout=handle, stderr=subprocess.STDOUT, check=False
        )
    if result.returncode != 0:
        raise HarnessError(f"go build of {component.name} failed:\n{log.read_text()[-3000:]}", fix)


def write_overlay(replacements: tuple[tuple[str, str], ...], where: Path) -> Path:
    """The files of an overlay and the JSON `go build -overlay` reads; returns the JSON's path."""
    where.mkdir()
    mapping = {}
    for index, (original, text) in enumerate(replacements):
        replacement = where / f"{index}-{Path(original).name}"
        replacement.write_text(text)
        mapping[original] = str(replacement)
    overlay = where / "overlay.json"
    overlay.write_text(json.dumps({"Replace": mapping}, indent=2))
    return overlay


def build_local(source: Path, name: str, *, arch: str | None = None) -> Path:
    """Build a main package of this project (no dependencies); returns its bin directory.

    For Linux on the engine's architecture unless ``arch`` (a GOARCH) says another,
    whatever the host: the programs run in the engine's containers (a laptop's Docker
    Desktop is a Linux VM), or in a registry's image for that architecture.
    """
    arch = arch or engine_go_arch()
    key = digest("local", files_digest(source.glob("*"), source), go_version(), "linux", arch)

    def _build(out: Path) -> None:
        (out / "bin").mkdir()
        run(
            ["go", "build", "-trimpath", "-ldflags", "-s -w", "-o", str(out / "bin" / name), "."],
            cwd=str(source),
            env={**go_env(), "CGO_ENABLED": "0", "GOOS": "linux", "GOARCH": arch},
            fix=GO_FIX,
            timeout=timeouts.GO_BUILD,
        )

    return cached_dir(f"go-{name}", key, _build) / "bin"
