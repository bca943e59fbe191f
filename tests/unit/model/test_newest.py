"""Tonight's releases: the newest patch per pinned minor, never older than its pin, and
the newest pre-release beyond; a newer patch of a pinned minor is accepted as a release."""

from __future__ import annotations

import pytest

from crashloop_harness.core import pins
from crashloop_harness.model.newest import newest


def _by_minor(listed: list[str]) -> dict[str, str]:
    return {t.minor: t.version for t in newest(listed, pins.KUBERNETES)}


def test_the_newest_patch_of_each_minor_and_never_older_than_the_pin() -> None:
    # As the proxy answered on 2026-12-05: a list that lags behind some pins.
    listed = ["v1.33.6", "v1.33.13", "v1.34.4", "v1.35.4", "v1.36.3", "v1.37.2", "v1.38.0-beta.0"]
    tonight = _by_minor(listed)
    assert tonight["1.35"] == "v1.35.8"  # the list's v1.35.4 is older than the pin
    assert tonight["1.37"] == "v1.37.2"
    assert tonight["1.38"] == "v1.38.0-beta.0"


def test_a_release_sorts_after_its_pre_releases_and_a_new_minor_is_followed() -> None:
    listed = ["v1.38.0-beta.0", "v1.38.0-rc.1", "v1.38.0", "v1.39.0-alpha.2", "v1.39.0-alpha.10"]
    tonight = newest(listed, pins.KUBERNETES)
    assert {t.minor: t.version for t in tonight}["1.38"] == "v1.38.0"
    beyond = tonight[-1]
    assert (beyond.minor, beyond.version, beyond.pinned) == ("1.39", "v1.39.0-alpha.10", "-")
    assert beyond.pre_release


def test_what_is_not_a_release_version_is_passed_over() -> None:
    assert _by_minor(["v1.35.99-dirty", "v1.35.x", "v1.35.9"])["1.35"] == "v1.35.9"


def test_a_newer_patch_of_a_pinned_minor_is_that_pin_with_its_version() -> None:
    pin = pins.kubernetes_pin("v1.37.2")
    assert pin.version == "v1.37.2"
    assert pin.etcd_version == pins.KUBERNETES["1.37"].etcd_version
    assert pin.official_digest is None
    with pytest.raises(ValueError, match="not pinned here"):
        pins.kubernetes_pin("v1.39.0")
