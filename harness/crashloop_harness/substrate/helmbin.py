"""The pinned helm binary, to lint and render the nightly's chart (charts/crashloop-nightly)."""

from __future__ import annotations

from pathlib import Path

from crashloop_harness.core import pins, timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.proc import run
from crashloop_harness.substrate.gotool import ensure_go_tool


def binary_version(binary: Path) -> str | None:
    """The helm release a binary is: its own word for a release build; for one built with
    `go install` (which says only "v4"), the module version Go recorded in it."""
    try:
        said = run(
            [str(binary), "version", "--template", "{{.Version}}"], timeout=timeouts.TOOL_QUERY
        ).strip()
        if said.count(".") == 2:
            return said
        built = run(["go", "version", "-m", str(binary)], timeout=timeouts.TOOL_QUERY)
    except HarnessError:
        return None
    module = pins.HELM_MODULE.removesuffix("/cmd/helm")
    for line in built.splitlines():
        fields = line.split()
        if fields[:2] == ["mod", module] and len(fields) >= 3:
            return fields[2]
    return None


def ensure_helm() -> Path:
    """Path of helm at the pinned version, built from its Go module where none is on PATH."""
    return ensure_go_tool(
        "helm",
        pins.HELM_MODULE,
        pins.HELM_VERSION,
        binary_version,
        timeout=timeouts.GO_INSTALL_KIND,
    )
