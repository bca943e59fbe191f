"""Where the harness keeps its caches, state and results."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

APP: Final = "crashloop-harness"


def cache_dir() -> Path:
    """Expensive, reusable build outputs (Go caches, binaries, image parts).

    Outside the checkout so that a fresh clone on the same machine reuses them.
    """
    return _own_dir("CRASHLOOP_CACHE_DIR", "XDG_CACHE_HOME", "~/.cache")


def state_dir() -> Path:
    """The user's state: kubeconfigs, engine pid and log files, kind patch directories.

    Per user, not per checkout: kind clusters are per docker engine, so two
    checkouts (or an installed copy) reach the same clusters through it.
    """
    return _own_dir("CRASHLOOP_STATE_DIR", "XDG_STATE_HOME", "~/.local/state")


def _own_dir(override: str, xdg: str, xdg_default: str) -> Path:
    """$override, else the harness's folder under $xdg (or its XDG default); created."""
    base = os.environ.get(override) or os.path.join(
        os.environ.get(xdg) or os.path.expanduser(xdg_default), APP
    )
    path = Path(base)
    path.mkdir(parents=True, exist_ok=True)
    return path


def runs_path() -> Path:
    """Where run directories go: ./runs where the harness runs, or $CRASHLOOP_RUNS_DIR."""
    return Path(os.environ.get("CRASHLOOP_RUNS_DIR") or Path.cwd() / "runs")


def runs_dir() -> Path:
    """One directory per run with its records, summary and plots (created on first use)."""
    path = runs_path()
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
