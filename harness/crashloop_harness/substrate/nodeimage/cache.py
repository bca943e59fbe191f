"""Content-addressed build outputs: a step's result is reused while its inputs are unchanged."""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

from crashloop_harness.core.paths import cache_dir

_COMPLETE_MARKER = ".complete"


def digest(*parts: object) -> str:
    """A short, stable hash of JSON-serialisable parts."""
    encoded = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(encoded).hexdigest()[:16]


def files_digest(paths: Iterable[Path], root: Path) -> str:
    """Hash of file names (relative to root) and contents, in a stable order."""
    hasher = hashlib.sha256()
    for path in sorted(paths):
        hasher.update(str(path.relative_to(root)).encode())
        hasher.update(b"\0")
        hasher.update(path.read_bytes())
        hasher.update(b"\0")
    return hasher.hexdigest()[:16]


def cached_dir(step: str, key: str, build: Callable[[Path], None]) -> Path:
    """Return the output directory of ``step`` for ``key``, building it if needed.

    The directory is filled under a temporary name and renamed when complete,
    so an interrupted build never leaves something that looks finished. One
    builder at a time per step and key: the demo's check and scenarios prepare
    their runs at once, and on a fresh machine both would build the workload
    into the same temporary directory. The second waits and reuses the first's.
    """
    final = cache_dir() / "nodeimage" / f"{step}-{key}"
    if (final / _COMPLETE_MARKER).exists():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    # flock is held per open file, so threads of one process exclude each other too.
    with (final.parent / f"{final.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (final / _COMPLETE_MARKER).exists():
            return final
        partial = final.with_name(final.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        shutil.rmtree(final, ignore_errors=True)
        partial.mkdir()
        build(partial)
        (partial / _COMPLETE_MARKER).write_text(key)
        partial.rename(final)
    return final
