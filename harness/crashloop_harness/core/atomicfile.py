"""Write a file so that a reader sees either the old one or the complete new one.

Every output of a run (summary, JUnit, plots, reports) goes through here: a
run interrupted mid-write must never leave a half-written file that looks
finished.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` so that ``path`` is either old or complete.

    The bytes go to a temporary file in the same directory (os.replace is
    atomic only within one file system), are fsync'd, then renamed over
    ``path``; the directory is fsync'd so the rename survives a power loss.
    On any error the temporary file is removed.
    """
    path = Path(path)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            tmp.flush()
            os.fsync(tmp.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        # BaseException: a Ctrl-C mid-write must not leave the tmp file behind.
        Path(tmp_name).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return path
