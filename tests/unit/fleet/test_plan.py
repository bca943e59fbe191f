"""A fleet's plan: nodes grouped by what decides their curve, a few chosen from each."""

from __future__ import annotations

import pytest

from crashloop_harness.fleet.plan import (
    CONTROL_PLANE_LABEL,
    NodeFacts,
    plan_fleet,
)
from tests.unit.fleet.factories import DEFAULT, FIVE_S, node


def test_nodes_are_grouped_by_their_curve_whatever_their_pool_says() -> None:
    plan = plan_fleet(
        [
            node("n1", pool="fast"),
            node("n2", pool="fast"),
            node("n3", DEFAULT, pool="fast"),  # labelled fast, runs the default curve
            node("n4", DEFAULT, pool="default"),
        ]
    )
    assert [(g.name, [n.node for n in g.nodes]) for g in plan.groups] == [
        ("g1", ["n1", "n2"]),
        ("g2", ["n3", "n4"]),
    ]
    assert plan.split_pools == (("one", "fast", ("g1", "g2")),)
    assert plan.groups[1].key.describe().startswith("v1.35.8, back-off 10s, cap 5m")
    assert plan.groups[0].key.describe() == (
        "v1.35.8, back-off 2s, cap 2s (KubeletCrashLoopBackOffMax=on)"
    )


def test_the_same_curve_on_another_release_or_cluster_is_another_group() -> None:
    plan = plan_fleet(
        [node("n1"), node("n2", version="v1.34.3"), node("m1", cluster="two", curve=FIVE_S)]
    )
    assert [(g.cluster, g.key.kubelet_version, g.key.maximum_s) for g in plan.groups] == [
        ("one", "v1.34.3", 2.0),
        ("one", "v1.35.8", 2.0),
        ("two", "v1.35.8", 5.0),
    ]
    assert plan.clusters == ("one", "two")


def test_the_chosen_nodes_are_spread_over_zones_and_pools() -> None:
    members = [node(f"a{i}", zone="z1") for i in range(4)] + [node("b0", zone="z2")]
    (group,) = plan_fleet(members, per_group=3).groups
    assert group.chosen == ("a0", "b0", "a1")
    assert group.why_chosen == "3 of 5, in turn from its 2 zone and pool pairs"
    assert group.reserves == ("a2", "a3")


def test_a_small_group_is_checked_whole() -> None:
    (group,) = plan_fleet([node("n1"), node("n2")], per_group=3).groups
    assert (group.chosen, group.why_chosen) == (("n1", "n2"), "all 2 of the group's nodes")


def test_nodes_that_cannot_be_judged_are_left_out_and_said() -> None:
    control = NodeFacts("one", "cp", "v1.35.8", None, {}, {CONTROL_PLANE_LABEL: ""})
    plan = plan_fleet(
        [control, node("down", ready=False), node("cordoned", schedulable=False), node("ok")]
    )
    assert [n.node for g in plan.groups for n in g.nodes] == ["ok"]
    assert plan.skipped == (
        ("one", "cp", "control plane"),
        ("one", "down", "NotReady: its kubelet cannot be judged"),
        ("one", "cordoned", "cordoned: left to whoever cordoned it"),
    )


def test_a_group_needs_at_least_one_node_checked() -> None:
    with pytest.raises(ValueError, match="per_group must be at least 1"):
        plan_fleet([node("n1")], per_group=0)


@pytest.mark.parametrize(
    ("facts", "why"),
    [
        (
            node("eks", version="v1.31.9-eks-1234567"),
            "release v1.31.9-eks-1234567 not modelled: its back-off is not the model's",
        ),
        (node("k3s", version="v1.30.14+k3s1"), "release v1.30.14+k3s1 not modelled"),
        (node("new", version="v1.39.0"), "release v1.39.0 not modelled"),
        (
            node("win", labels={"kubernetes.io/os": "windows"}),
            "windows node: the workload runs on Linux only",
        ),
        (
            node("n503", unread="GET /api/v1/nodes/n503/proxy/configz: 503"),
            "config not read: GET /api/v1/nodes/n503/proxy/configz: 503",
        ),
    ],
)
def test_a_node_outside_the_model_or_unread_is_left_out_with_its_reason(
    facts: NodeFacts, why: str
) -> None:
    plan = plan_fleet([facts, node("ok")], per_group=3)
    reasons = {name: reason for _, name, reason in plan.skipped}
    assert why in reasons[facts.node]
    assert [name for g in plan.groups for name in g.chosen] == ["ok"]
