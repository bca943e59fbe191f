"""A kubelet whose code is changed, its /configz unchanged, on a real node.

Fast tier: one kept mutant (the configured max ignored) is built from the
pinned release, swapped into the fast worker and caught at restart 2, the
summary names the swapped binary, and the image's kubelet comes back.
Slow tier: the control and two mutants through `crashloop mutants`' own code,
the other workers as controls.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from crashloop_harness.cluster.kube import worker_nodes
from crashloop_harness.cluster.kubeletput import put_image_kubelet_back, put_kubelet
from crashloop_harness.cluster.kubeletswap import read_node_kubelet
from crashloop_harness.cluster.lifecycle import Cluster
from crashloop_harness.core import timeouts
from crashloop_harness.outputs.summaryfile import read_summary
from crashloop_harness.runs.check import run_check
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES, Need
from crashloop_harness.runs.mutants import build_all, run_mutants
from crashloop_harness.substrate.kubeletbuild import kubelet_from_patch
from crashloop_harness.substrate.mutantset import choose, mutant_set

pytestmark = [pytest.mark.e2e, pytest.mark.conformance, pytest.mark.crashloop_disruptive]

# The fast worker decides at restart 2; the others are controls and need only restart.
DRILL = dataclasses.replace(
    CHECK_PROFILES["quick"],
    name="mutation",
    timeout_s=timeouts.CHECK_MUTATION,
    overrides={"reduced": Need(min_restarts=1), "default": Need(min_restarts=1)},
    variants=(),
)


def _say(message: str) -> None:
    print(f"[kubelet] {message}")


@pytest.fixture
def fast_node(crashloop_cluster: Cluster) -> Iterator[str]:
    """The fast worker's node; its image's kubelet is back after the test, whatever happened."""
    node = worker_nodes(crashloop_cluster.api())["fast"]
    image_kubelet = read_node_kubelet(node)
    assert image_kubelet.swapped is None, f"{node} already runs {image_kubelet.swapped}"
    try:
        yield node
    finally:
        back = put_image_kubelet_back(crashloop_cluster, node, _say)
        assert back.sha256 == image_kubelet.sha256
        assert back.swapped is None


def test_a_kubelet_patched_to_ignore_its_max_is_caught_with_configz_unchanged(
    crashloop_cluster: Cluster, fast_node: str
) -> None:
    (mutant,) = [
        m for m in mutant_set(crashloop_cluster.spec.kubernetes) if m.name == "max-ignored"
    ]
    kubelet = kubelet_from_patch(mutant.patch, crashloop_cluster.spec.kubernetes)
    running = put_kubelet(crashloop_cluster, fast_node, kubelet, _say)  # /configz checked there
    assert running.sha256 == kubelet.sha256
    assert running.swapped is not None
    assert "max-ignored.patch" in running.swapped

    result = run_check(crashloop_cluster, DRILL, _say)
    assert result.status == "failed", f"{result.status}: {result.reason}"
    assert "fast" in result.decided, result.reason
    after_s, message = result.decided["fast"]
    _say(f"fast caught {after_s:.1f}s after the pods were created: {message}")
    assert "fast: restart 2" in message
    assert all(result.verdicts[w].passed for w in ("reduced", "default")), result.reason
    swapped = read_summary(result.run_dir).cluster.swapped_kubelets
    assert [k.node for k in swapped] == [fast_node]


@pytest.mark.slow
def test_the_control_survives_and_two_mutants_are_killed(crashloop_cluster: Cluster) -> None:
    pin = crashloop_cluster.spec.kubernetes
    chosen = choose(mutant_set(pin), "initial-5s,first-restart-backoff")
    built = build_all(chosen, pin, _say)
    run = run_mutants(crashloop_cluster, built, CHECK_PROFILES["quick"], _say)
    outcomes = {r.name: r.outcome for r in run.results}
    assert outcomes == {
        "control": "survived",
        "initial-5s": "killed",
        "first-restart-backoff": "killed",
    }, [(r.name, r.outcome, r.by, r.controls_failed) for r in run.results]
    nodes = worker_nodes(crashloop_cluster.api()).values()
    assert all(read_node_kubelet(node).swapped is None for node in nodes)
