"""The Go module proxy's list of k8s.io/kubernetes versions (`go list -m -versions`)."""

from __future__ import annotations

import tempfile

from crashloop_harness.core import timeouts
from crashloop_harness.core.paths import go_env
from crashloop_harness.core.proc import run
from crashloop_harness.substrate.nodeimage.gobuild import GO_FIX


def listed_kubernetes_versions() -> list[str]:
    """Every version the proxy lists for k8s.io/kubernetes, as it answers now."""
    with tempfile.TemporaryDirectory(prefix="crashloop-versions-") as empty:
        out = run(
            ["go", "list", "-m", "-versions", "k8s.io/kubernetes"],
            env={**go_env(), "GOFLAGS": ""},
            cwd=empty,
            fix=GO_FIX,
            timeout=timeouts.GO_DOWNLOAD,
        )
    return out.split()[1:]  # the first word is the module path
