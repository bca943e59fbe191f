"""Which Kubernetes releases a nightly that follows new releases tests tonight.

Pure: given the versions a source lists for the k8s.io/kubernetes module, the
newest patch of every supported minor (never older than its pin) and the
newest pre-release beyond the newest minor. The source is the Go module
proxy's version list: the nodes here are built offline from the proxy's
modules, so a version it lists is one the harness can build, and it lists a
tag within minutes of its push, where kind publishes node images weeks later
and only for some releases.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from crashloop_harness.core import pins

_VERSION = re.compile(r"^v1\.(\d+)\.(\d+)(?:-(alpha|beta|rc)\.(\d+))?$")
_STAGES = {"alpha": 0, "beta": 1, "rc": 2}


def _order(version: str) -> tuple[int, int, int, int]:
    match = _VERSION.match(version)
    if match is None:
        raise ValueError(f"not a Kubernetes release version: {version!r}")
    minor, patch, stage, number = match.groups()
    # A release sorts after every pre-release of itself.
    return int(minor), int(patch), _STAGES[stage] if stage else 3, int(number or 0)


@dataclass(frozen=True)
class Tonight:
    """Per minor, the version to test and why; the pin it replaces when newer."""

    minor: str
    version: str
    pinned: str
    newer_than_pin: bool
    pre_release: bool


def newest(listed: Iterable[str], pinned: Mapping[str, pins.KubernetesPin]) -> list[Tonight]:
    """The newest listed patch of each pinned minor (or its pin, when the list lags behind)."""
    versions = [v for v in listed if _VERSION.match(v)]
    tonight = []
    for minor, pin in pinned.items():
        same_minor = [v for v in versions if v.startswith(f"v{minor}.")]
        releases = [v for v in same_minor if "-" not in v]
        # A minor with a release is followed by its releases; one without (the
        # next release's betas) by its newest pre-release.
        candidates = (releases or same_minor) + [pin.version]
        best = max(candidates, key=_order)
        tonight.append(
            Tonight(
                minor=minor,
                version=best,
                pinned=pin.version,
                newer_than_pin=_order(best) > _order(pin.version),
                pre_release="-" in best,
            )
        )
    top = max((int(m.split(".")[1]) for m in pinned), default=0)
    beyond = [v for v in versions if _order(v)[0] > top]
    if beyond:
        best = max(beyond, key=_order)
        minor = ".".join(best.lstrip("v").split(".")[:2])
        tonight.append(Tonight(minor, best, "-", True, "-" in best))
    return tonight
