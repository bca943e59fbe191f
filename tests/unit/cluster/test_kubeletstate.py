"""Noticing a kubelet restart, or a kubelet stopped, between the start and the end of a run."""

from __future__ import annotations

import pytest

from crashloop_harness.cluster.kubeletstate import (
    KubeletProcess,
    changes_between,
    parse_systemctl_show,
)

SHOW = "MainPID=204\nActiveEnterTimestampMonotonic=1513164458\n"


def test_systemctl_show_output_is_parsed() -> None:
    assert parse_systemctl_show(SHOW) == KubeletProcess(pid=204, active_since_us=1513164458)


@pytest.mark.parametrize(
    "text", ["", "MainPID=204\n", "MainPID=x\nActiveEnterTimestampMonotonic=1\n"]
)
def test_unexpected_output_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="systemctl show kubelet"):
        parse_systemctl_show(text)


def test_the_same_kubelet_means_no_change() -> None:
    same = {"n1": KubeletProcess(1, 10), "n2": KubeletProcess(2, 20)}
    changes = changes_between(same, dict(same))
    assert (changes.restarted, changes.stopped) == ((), {})


def test_a_new_kubelet_process_is_reported_naming_the_node() -> None:
    before = {"n1": KubeletProcess(1, 10), "n2": KubeletProcess(2, 20)}
    after = {"n1": KubeletProcess(1, 10), "n2": KubeletProcess(7, 95)}
    changes = changes_between(before, after)
    (message,) = changes.restarted
    assert "node n2" in message
    assert "restarted" in message
    assert "back-off state was wiped" in message
    assert changes.stopped == {}


def test_a_kubelet_restarted_with_the_same_pid_is_still_noticed() -> None:
    before = {"n1": KubeletProcess(1, 10)}
    after = {"n1": KubeletProcess(1, 99)}
    assert len(changes_between(before, after).restarted) == 1


def test_a_stopped_kubelet_is_a_stop_not_a_restart() -> None:
    # `systemctl stop kubelet`: MainPID 0, the activation time unchanged.
    changes = changes_between({"n1": KubeletProcess(204, 10)}, {"n1": KubeletProcess(0, 10)})
    assert changes.restarted == ()
    (message,) = changes.stopped.values()
    assert list(changes.stopped) == ["n1"]
    assert "node n1" in message
    assert "stopped" in message
    assert "pid 204" in message


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ({"n1": None}, {"n1": KubeletProcess(1, 10)}),
        ({"n1": KubeletProcess(1, 10)}, {"n1": None}),
        ({"n1": KubeletProcess(1, 10)}, {}),
    ],
)
def test_an_unreadable_kubelet_is_never_taken_for_unchanged(
    before: dict[str, KubeletProcess | None], after: dict[str, KubeletProcess | None]
) -> None:
    assert changes_between(before, after).restarted
