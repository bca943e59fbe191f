"""The pinned kind binary: from PATH when it is exactly that version, else built with go."""

from __future__ import annotations

import re
from pathlib import Path

from crashloop_harness.core import pins, timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.proc import run
from crashloop_harness.substrate.gotool import ensure_go_tool

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
    return ensure_go_tool(
        "kind",
        pins.KIND_MODULE,
        pins.KIND_VERSION,
        binary_version,
        timeout=timeouts.GO_INSTALL_KIND,
    )
