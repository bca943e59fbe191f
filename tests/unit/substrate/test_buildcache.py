"""Content-addressed build outputs: built once per key, even by two builders at once."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from crashloop_harness.substrate.nodeimage.cache import cached_dir


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRASHLOOP_CACHE_DIR", str(tmp_path))


def test_an_output_is_built_once_and_then_reused() -> None:
    builds: list[Path] = []

    def build(out: Path) -> None:
        builds.append(out)
        (out / "bin").write_text("x")

    first = cached_dir("go-workload", "k1", build)
    assert cached_dir("go-workload", "k1", build) == first
    assert (first / "bin").read_text() == "x"
    assert len(builds) == 1
    assert cached_dir("go-workload", "k2", build) != first  # another key, another build
    assert len(builds) == 2


def test_a_second_builder_waits_for_the_first_and_reuses_its_output() -> None:
    # The demo's check and scenarios prepare their runs at once on a fresh machine.
    building = threading.Event()
    release = threading.Event()
    builds: list[str] = []

    def build(out: Path) -> None:
        builds.append(threading.current_thread().name)
        building.set()
        assert release.wait(timeout=10)
        (out / "bin").write_text(threading.current_thread().name)

    results: dict[str, Path] = {}

    def builder() -> None:
        results[threading.current_thread().name] = cached_dir("go-workload", "k", build)

    first = threading.Thread(target=builder, name="first")
    first.start()
    assert building.wait(timeout=10)
    second = threading.Thread(target=builder, name="second")
    second.start()
    second.join(timeout=0.5)
    assert second.is_alive(), "the second builder must wait while the first builds"
    release.set()
    first.join(timeout=10)
    second.join(timeout=10)
    assert builds == ["first"]
    assert results["first"] == results["second"]
    assert (results["second"] / "bin").read_text() == "first"


def test_an_interrupted_build_leaves_nothing_that_looks_finished() -> None:
    def broken(out: Path) -> None:
        (out / "bin").write_text("half")
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError):
        cached_dir("go-workload", "k", broken)

    def build(out: Path) -> None:
        (out / "bin").write_text("whole")

    assert (cached_dir("go-workload", "k", build) / "bin").read_text() == "whole"
