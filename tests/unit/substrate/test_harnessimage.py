"""The harness image's packages: what runs beside the harness here, pinned, nothing more."""

from __future__ import annotations

from importlib import metadata

from crashloop_harness.substrate.harnessimage import pinned_requirements


def test_every_package_the_harness_needs_is_pinned_at_its_installed_version() -> None:
    pinned = dict(line.split("==") for line in pinned_requirements())
    for name in ("kubernetes", "rich", "tenacity", "pyyaml", "pydantic", "matplotlib"):
        assert pinned[name] == metadata.version(name)
    # Their own needs too (the kubernetes client's, pydantic's).
    assert "urllib3" in pinned
    assert "pydantic-core" in pinned


def test_no_extra_or_other_platform_s_package_is_taken() -> None:
    pinned = dict(line.split("==") for line in pinned_requirements())
    # The dev extra (ruff, mypy) and the kind extra are not the image's.
    assert "ruff" not in pinned
    assert "pytest-kind-ng" not in pinned
    # pytest's Windows-only dependency, behind a marker the image's Linux fails.
    assert "colorama" not in pinned
    assert "crashloop-harness" not in pinned
