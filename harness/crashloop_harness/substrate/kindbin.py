"""The pinned kind binary: from PATH when it is exactly that version, else built with go."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from crashloop_harness.core import pins, timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.paths import cache_dir, go_env
from crashloop_harness.core.proc import run

_VERSION = re.compile(r"kind (v\d+\.\d+\.\d+)")


def binary_version(binary: str | Path) -> str | None:
    try:
        out = run([str(binary), "version"], timeout=timeouts.TOOL_QUERY)
    except HarnessError:
        return None
    match = _VERSION.search(out)
    return match.group(1) if match else None


def ensure_kind() -> Path:
    """Path of a kind binary of the pinned version; nothing is downloaded at run time
    except Go modules through the module proxy."""
    on_path = shutil.which("kind")
    if on_path and binary_version(on_path) == pins.KIND_VERSION:
        return Path(on_path)
    target_dir = cache_dir() / "bin" / f"kind-{pins.KIND_VERSION}"
    target = target_dir / "kind"
    if target.exists() and binary_version(target) == pins.KIND_VERSION:
        return target
    if shutil.which("go") is None:
        raise HarnessError(
            f"kind {pins.KIND_VERSION} is not on PATH and Go is not installed to build it",
            f"{pins.GO_INSTALL}, or put kind {pins.KIND_VERSION} on PATH",
        )
    run(
        ["go", "install", f"{pins.KIND_MODULE}@{pins.KIND_VERSION}"],
        env={**go_env(), "GOBIN": str(target_dir), "CGO_ENABLED": "0", "GOFLAGS": ""},
        fix="check that the Go module proxy is reachable (`go env GOPROXY`)",
        timeout=timeouts.GO_INSTALL_KIND,
    )
    if binary_version(target) != pins.KIND_VERSION:
        raise HarnessError(f"the kind binary built at {target} does not report {pins.KIND_VERSION}")
    return target
