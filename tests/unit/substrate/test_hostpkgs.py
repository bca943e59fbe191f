"""One apt step for every Debian package the harness installs (the engine's included)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from crashloop_harness.core.errors import HarnessError
from crashloop_harness.substrate import engine, hostpkgs


class _Apt:
    def __init__(self, known: set[str]) -> None:
        self.known = known
        self.ran: list[list[str]] = []

    def succeeds(self, argv: Sequence[str], timeout: float) -> bool:
        del timeout
        return argv[-1] in self.known

    def run(self, argv: Sequence[str], **_: Any) -> str:
        self.ran.append(list(argv))
        return ""


def _fake(monkeypatch: pytest.MonkeyPatch, known: set[str]) -> _Apt:
    apt = _Apt(known)
    monkeypatch.setattr(hostpkgs, "succeeds", apt.succeeds)
    monkeypatch.setattr(hostpkgs, "run", apt.run)
    return apt


def test_apt_updates_only_when_a_package_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    apt = _fake(monkeypatch, {"debootstrap"})
    hostpkgs.install(["debootstrap"], fix="f")
    assert apt.ran == [["apt-get", "install", "-y", "--no-install-recommends", "debootstrap"]]
    apt = _fake(monkeypatch, set())
    hostpkgs.install(["docker.io"], fix="f")
    assert apt.ran[0] == ["apt-get", "update"]
    assert apt.ran[1][-1] == "docker.io"


def test_the_engine_is_installed_through_the_same_step(monkeypatch: pytest.MonkeyPatch) -> None:
    apt = _fake(monkeypatch, {"docker.io"})
    monkeypatch.setattr(hostpkgs, "can_install", lambda: True)
    engine.install_engine()
    assert apt.ran == [["apt-get", "install", "-y", "--no-install-recommends", "docker.io"]]


def test_without_root_the_engine_install_says_how(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake(monkeypatch, set())
    monkeypatch.setattr(hostpkgs, "can_install", lambda: False)
    with pytest.raises(HarnessError, match="only as root on a machine with apt-get"):
        engine.install_engine()
