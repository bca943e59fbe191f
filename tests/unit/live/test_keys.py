"""The demo's keys: what each one does, and nothing read where there is no terminal."""

from __future__ import annotations

import io

import pytest

from crashloop_harness.live.keys import action_of, keys_while_live


@pytest.mark.parametrize(
    ("key", "action"),
    [("p", "pause"), (" ", "pause"), ("s", "skip"), ("S", "skip"), ("q", "quit"), ("x", None)],
)
def test_each_key_has_its_action(key: str, action: str | None) -> None:
    assert action_of(key) == action


def test_no_key_is_read_from_a_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("q"))
    with keys_while_live() as keys:
        assert not keys.enabled
        assert keys.poll() is None
