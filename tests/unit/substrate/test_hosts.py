"""Hosts other than this Linux one: one clear message, no /proc, programs built for the engine."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from crashloop_harness.core.errors import HarnessError
from crashloop_harness.substrate import engine
from crashloop_harness.substrate.nodeimage import gobuild


@pytest.fixture
def on_a_mac(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.platform", "darwin")

    def no_proc(self: Path, *_args: object, **_kwargs: object) -> str:
        if str(self).startswith("/proc"):
            raise AssertionError(f"read {self} on a host without /proc")
        return ""

    monkeypatch.setattr(Path, "read_text", no_proc)


@pytest.mark.usefixtures("on_a_mac")
def test_a_mac_without_an_engine_gets_one_message_naming_the_fix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("shutil.which", lambda name: f"/usr/local/bin/{name}")
    monkeypatch.setattr(engine, "engine_answers", lambda: False)
    with pytest.raises(HarnessError, match="Docker Desktop") as raised:
        engine.ensure_engine()
    assert "darwin" in str(raised.value)


@pytest.mark.usefixtures("on_a_mac")
def test_a_mac_reads_no_proc_for_capabilities_or_pids() -> None:
    assert engine.missing_capabilities() == []
    assert engine.is_live_dockerd(1) is False


def test_node_programs_are_built_for_linux_on_the_engine_s_architecture(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    source = tmp_path / "program"
    source.mkdir()
    (source / "main.go").write_text("package main\nfunc main() {}\n")
    seen: dict[str, Any] = {}

    def fake_run(argv: list[str], **kwargs: Any) -> str:
        seen.update(kwargs["env"])
        Path(argv[argv.index("-o") + 1]).write_text("binary")
        return ""

    monkeypatch.setattr(gobuild, "engine_go_arch", lambda: "arm64")
    monkeypatch.setattr(gobuild, "go_version", lambda: "go1.26.8")
    monkeypatch.setattr(gobuild, "run", fake_run)
    monkeypatch.setenv("CRASHLOOP_CACHE_DIR", str(tmp_path / "cache"))
    built = gobuild.build_local(source, "program")
    assert (built / "program").read_text() == "binary"
    assert (seen["GOOS"], seen["GOARCH"], seen["CGO_ENABLED"]) == ("linux", "arm64", "0")
