"""A pinned Go tool: from PATH when it is exactly that version, else built from its module.

Nothing is downloaded at run time but Go modules through the module proxy; the build goes
to the harness's cache, one directory per tool and version.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from crashloop_harness.core import pins
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.paths import cache_dir, go_env
from crashloop_harness.core.proc import run


def ensure_go_tool(
    name: str,
    module: str,
    version: str,
    reported: Callable[[Path], str | None],
    *,
    timeout: float,
) -> Path:
    """Path of ``name`` at ``version`` (``reported`` reads a binary's own version)."""
    on_path = shutil.which(name)
    if on_path and reported(Path(on_path)) == version:
        return Path(on_path)
    target_dir = cache_dir() / "bin" / f"{name}-{version}"
    target = target_dir / name
    if target.exists() and reported(target) == version:
        return target
    if shutil.which("go") is None:
        raise HarnessError(
            f"{name} {version} is not on PATH and Go is not installed to build it",
            f"{pins.GO_INSTALL}, or put {name} {version} on PATH",
        )
    run(
        ["go", "install", f"{module}@{version}"],
        env={**go_env(), "GOBIN": str(target_dir), "CGO_ENABLED": "0", "GOFLAGS": ""},
        fix="check that the Go module proxy is reachable (`go env GOPROXY`)",
        timeout=timeout,
    )
    if reported(target) != version:
        raise HarnessError(f"the {name} binary built at {target} does not report {version}")
    return target
