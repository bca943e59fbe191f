"""Other runs' namespaces: removed when their owner is gone, refused while it lives."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from crashloop_harness.cli.app import interrupt_on_hangup_and_terminate
from crashloop_harness.cluster import leftovers
from crashloop_harness.cluster.leftovers import RunNamespace, classify, from_metadata
from crashloop_harness.core.conventions import OWNER_ANNOTATION

ME = "laptop/100"


def _ns(name: str, owner: str, *, terminating: bool = False) -> RunNamespace:
    return RunNamespace(name, f"run-{name}", owner, terminating=terminating)


def test_a_dead_owners_namespace_is_removed() -> None:
    decision = classify([_ns("a", "laptop/200")], me=ME, alive=lambda pid: False)
    assert [ns.name for ns in decision.remove] == ["a"]
    assert decision.busy == ()


def test_a_live_owners_namespace_refuses_the_run() -> None:
    decision = classify([_ns("a", "laptop/200")], me=ME, alive=lambda pid: pid == 200)
    assert decision.remove == ()
    assert [ns.name for ns in decision.busy] == ["a"]


def test_this_process_and_terminating_namespaces_are_left_alone() -> None:
    namespaces = [_ns("mine", ME), _ns("going", "laptop/200", terminating=True)]
    decision = classify(namespaces, me=ME, alive=lambda pid: False)
    assert (decision.remove, decision.busy) == ((), ())


def test_an_owner_on_another_host_cannot_be_checked_and_counts_as_busy() -> None:
    decision = classify([_ns("a", "ci-runner/200")], me=ME, alive=lambda pid: False)
    assert [ns.name for ns in decision.busy] == ["a"]


def test_a_namespace_without_an_owner_is_a_leftover() -> None:
    decision = classify([_ns("a", "")], me=ME, alive=lambda pid: True)
    assert [ns.name for ns in decision.remove] == ["a"]


def test_only_labelled_namespaces_are_run_namespaces() -> None:
    assert from_metadata("kube-system", {}, None, "Active") is None
    found = from_metadata(
        "crashloop-check-1",
        leftovers.run_labels("r1"),
        {OWNER_ANNOTATION: ME},
        "Terminating",
    )
    assert found == RunNamespace("crashloop-check-1", "r1", ME, terminating=True)


def test_this_process_is_alive() -> None:
    assert leftovers.pid_alive(os.getpid())


@pytest.fixture
def restored_handlers() -> Iterator[None]:
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    yield
    for signum, handler in saved.items():
        signal.signal(signum, handler)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_interrupt_like_ctrl_c(signum: int, restored_handlers: None) -> None:
    interrupt_on_hangup_and_terminate()
    with pytest.raises(KeyboardInterrupt, match=signal.Signals(signum).name):
        # A signal sent to itself is handled before os.kill returns to Python code.
        os.kill(os.getpid(), signum)
