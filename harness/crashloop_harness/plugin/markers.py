"""The plugin's two markers, registered only where a project uses them.

A project that never names them sees no extra marker, even in ``pytest
--markers``; one that does gets them registered in time for
``--strict-markers``, which checks a marker when its module's decorators run
at import.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest

# Namespaced, so a user's own markers of any name are left to them; the plugin acts on
# both: a matrix test runs only when -m names it, a disruptive one after every other.
MATRIX_MARKER: Final = "crashloop_matrix"
DISRUPTIVE_MARKER: Final = "crashloop_disruptive"
MARKERS: Final = (
    f"{MATRIX_MARKER}: the check on each release of --crashloop-versions (runs only when -m "
    f"names {MATRIX_MARKER})",
    f"{DISRUPTIVE_MARKER}: changes or breaks the cluster's nodes (kubelet config, stopped "
    "kubelet, paused node); runs after every other test of the session",
)
_MARKERS_ON = pytest.StashKey[bool]()


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> None:
    """Registers the markers just before the first test module that names one is imported.

    Reading the file costs what pytest's own assertion rewriting costs it anyway.
    """
    if file_path.suffix != ".py" or _MARKERS_ON in parent.config.stash:
        return
    try:
        text = file_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return  # pytest reports an unreadable module itself
    if MATRIX_MARKER in text or DISRUPTIVE_MARKER in text:
        register_markers(parent.config)


def register_markers(config: pytest.Config) -> None:
    if _MARKERS_ON in config.stash:
        return
    config.stash[_MARKERS_ON] = True
    # A project may register them itself (one whose helpers use them outside any test
    # module's text); pytest --markers then lists each once.
    named = {line.split(":")[0].strip() for line in config.getini("markers")}
    for marker in MARKERS:
        if marker.split(":")[0] not in named:
            config.addinivalue_line("markers", marker)
