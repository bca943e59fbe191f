"""Noticing a kubelet restart between the start and the end of a run."""

from __future__ import annotations

import pytest

from harness.kubeletstate import KubeletProcess, parse_systemctl_show, restarts_between

SHOW = "MainPID=204\nActiveEnterTimestampMonotonic=1513164458\n"


def test_systemctl_show_output_is_parsed() -> None:
    assert parse_systemctl_show(SHOW) == KubeletProcess(pid=204, active_since_us=1513164458)


@pytest.mark.parametrize(
    "text", ["", "MainPID=204\n", "MainPID=x\nActiveEnterTimestampMonotonic=1\n"]
)
def test_unexpected_output_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="systemctl show kubelet"):
        parse_systemctl_show(text)


def test_the_same_kubelet_means_no_restart() -> None:
    same = {"n1": KubeletProcess(1, 10), "n2": KubeletProcess(2, 20)}
    assert restarts_between(same, dict(same)) == []


def test_a_new_kubelet_process_is_reported_naming_the_node() -> None:
    before = {"n1": KubeletProcess(1, 10), "n2": KubeletProcess(2, 20)}
    after = {"n1": KubeletProcess(1, 10), "n2": KubeletProcess(7, 95)}
    (message,) = restarts_between(before, after)
    assert "node n2" in message
    assert "restarted" in message
    assert "back-off state was wiped" in message


def test_a_kubelet_restarted_with_the_same_pid_is_still_noticed() -> None:
    before = {"n1": KubeletProcess(1, 10)}
    after = {"n1": KubeletProcess(1, 99)}
    assert len(restarts_between(before, after)) == 1


def test_an_unreadable_kubelet_is_never_taken_for_unchanged() -> None:
    assert restarts_between({"n1": None}, {"n1": KubeletProcess(1, 10)})
    assert restarts_between({"n1": KubeletProcess(1, 10)}, {"n1": None})
    assert restarts_between({"n1": KubeletProcess(1, 10)}, {})
