"""The harness's own version, as every artifact it writes records it."""

from __future__ import annotations

from functools import cache
from importlib import metadata


@cache
def harness_version() -> str:
    """The installed distribution's version; "unknown" when run from a never-installed tree."""
    try:
        return metadata.version("crashloop-harness")
    except metadata.PackageNotFoundError:
        return "unknown"


def produced_by() -> dict[str, str]:
    """What every JSON artifact carries about the code that wrote it."""
    return {"harness_version": harness_version()}
