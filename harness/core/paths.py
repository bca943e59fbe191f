"""Where the harness keeps its caches, state and results."""

from __future__ import annotations

import os
from pathlib import Path

# harness/core/paths.py: three levels below the checkout.
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def cache_dir() -> Path:
    """Expensive, reusable build outputs (Go caches, binaries, image parts).

    Outside the checkout so that a fresh clone on the same machine reuses them.
    """
    base = os.environ.get("CRASHLOOP_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "crashloop-harness"
    )
    path = Path(base)
    path.mkdir(parents=True, exist_ok=True)
    return path


def state_dir() -> Path:
    """Per-checkout state: kubeconfig, engine pid and log files, kind patch directories."""
    path = Path(os.environ.get("CRASHLOOP_STATE_DIR") or PROJECT_ROOT / ".state")
    path.mkdir(parents=True, exist_ok=True)
    return path


def runs_dir() -> Path:
    """One directory per run with its records, summary and plots."""
    path = Path(os.environ.get("CRASHLOOP_RUNS_DIR") or PROJECT_ROOT / "runs")
    path.mkdir(parents=True, exist_ok=True)
    return path


def go_env() -> dict[str, str]:
    """Go caches in one stable place, so repeated builds only relink."""
    root = cache_dir() / "go"
    return {
        **os.environ,
        "GOMODCACHE": str(root / "mod"),
        "GOCACHE": str(root / "build"),
        "GOFLAGS": "-mod=mod",
        "GOTOOLCHAIN": "local",
    }
