"""What a node says of its kubelet binary, and the workers `crashloop kubelet` may name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crashloop_harness.cli.kubelet import chosen_workers
from crashloop_harness.cluster import kubeletswap
from crashloop_harness.cluster.profiles import load_cluster_spec
from crashloop_harness.core import pins
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.resources import spec_path

SHA = "ab" * 32


def _answers(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr(kubeletswap, "_exec", lambda node, *argv, input_text=None: text)


def test_the_image_s_own_kubelet_has_no_marker(monkeypatch: pytest.MonkeyPatch) -> None:
    _answers(monkeypatch, f"{SHA}\nKubernetes v1.35.8\n")
    kubelet = kubeletswap.read_node_kubelet("crashloop-worker")
    assert kubelet == kubeletswap.NodeKubelet("crashloop-worker", "v1.35.8", SHA, None)


def test_a_swapped_kubelet_says_what_it_was_made_from(monkeypatch: pytest.MonkeyPatch) -> None:
    marker = json.dumps({"made_from": "v1.35.8 + patch initial-20s.patch", "at": "now"})
    _answers(monkeypatch, f"{SHA}\nKubernetes v1.35.8\n{marker}\n")
    assert kubeletswap.read_node_kubelet("n").swapped == "v1.35.8 + patch initial-20s.patch"


def test_a_node_that_cannot_say_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    _answers(monkeypatch, "")
    with pytest.raises(HarnessError, match="cannot read its kubelet"):
        kubeletswap.read_node_kubelet("n")


def test_workers_are_named_and_an_unknown_one_is_refused(
    tmp_path: Path,
) -> None:
    spec = load_cluster_spec(spec_path("crashloop"), pins.DEFAULT_KUBERNETES)
    assert chosen_workers(spec, "fast, reduced") == ["fast", "reduced"]
    with pytest.raises(HarnessError, match="no such worker"):
        chosen_workers(spec, "fast,quick")
    with pytest.raises(HarnessError, match="names no worker"):
        chosen_workers(spec, " ,")
