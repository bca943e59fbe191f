"""The Go module proxy's list of k8s.io/kubernetes versions (`go list -m -versions`)."""

from __future__ import annotations

import tempfile

from crashloop_harness.core import timeouts
from crashloop_harness.core.errors import HarnessError
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


def served(version: str) -> str | None:
    """None when the proxy serves k8s.io/kubernetes at ``version``, else its answer.

    Asked for the one version (`go list -m k8s.io/kubernetes@VERSION`): the
    proxy's list leaves out versions it still serves by name.
    """
    with tempfile.TemporaryDirectory(prefix="crashloop-versions-") as empty:
        try:
            run(
                ["go", "list", "-m", f"k8s.io/kubernetes@{version}"],
                env={**go_env(), "GOFLAGS": ""},
                cwd=empty,
                fix=GO_FIX,
                timeout=timeouts.GO_DOWNLOAD,
            )
        except HarnessError as error:
            if "failed with exit code" not in error.problem:
                raise  # no go, or no answer in time: nothing said about the version
            return " ".join(" ".join(error.problem.splitlines()[1:]).split()) or error.problem
    return None
