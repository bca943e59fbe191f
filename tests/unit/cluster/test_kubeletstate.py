"""Noticing a kubelet restart, or a kubelet stopped, between the start and the end of a run."""

from __future__ import annotations

import dataclasses

import pytest

from crashloop_harness.cluster import kubeletstate
from crashloop_harness.cluster.kubeletstate import (
    KubeletProcess,
    changes_between,
    parse_systemctl_show,
    restart_from_fields,
    restart_kubelet,
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


def test_a_restart_the_run_made_is_judged_against_the_process_it_started() -> None:
    before = {"n1": KubeletProcess(1, 10), "n2": KubeletProcess(2, 20)}
    made = {"n2": KubeletProcess(7, 95)}
    assert changes_between(before, {"n1": before["n1"], "n2": made["n2"]}, made).restarted == ()
    # Read before its next pulse, the node still shows the process before the restart.
    assert changes_between(before, dict(before), made).restarted == ()
    # A restart after the run's own is still one.
    (message,) = changes_between(before, {**before, "n2": KubeletProcess(9, 99)}, made).restarted
    assert "node n2" in message


def test_a_kubelet_restarted_on_purpose_says_when_it_answered_again() -> None:
    shows = iter(["MainPID=204\nActiveEnterTimestampMonotonic=1\n", SHOW.replace("204", "311")])
    asked: list[list[str]] = []

    def exec_in_node(node: str, argv: list[str]) -> str:
        asked.append(argv)
        return "" if argv[1] == "restart" else next(shows)

    restart = restart_kubelet("n1", lambda: True, exec_in_node)
    show, restart_argv = ["systemctl", "show"], ["systemctl", "restart"]
    assert [a[:2] for a in asked] == [show, restart_argv, show]
    assert restart.before == KubeletProcess(204, 1)
    assert restart.after == KubeletProcess(311, 1513164458)
    assert restart.restarted
    assert restart.back_ns is not None
    assert restart.asked_ns <= restart.active_ns <= restart.back_ns
    assert "pid 204 -> 311" in restart.describe()
    assert restart_from_fields(dataclasses.asdict(restart)) == restart


def test_a_kubelet_that_never_answers_again_is_said_not_raised(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(kubeletstate, "poll_true", lambda *_a, **_k: False)
    restart = restart_kubelet("n1", lambda: False, lambda _n, _a: SHOW)
    assert restart.back_ns is None
    assert not restart.restarted  # the same process before and after
    assert "not answering /healthz" in restart.describe()
