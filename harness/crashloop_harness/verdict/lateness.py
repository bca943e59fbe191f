"""Whether a late restart is the machine's lateness: a node not observed, a saturated host,
other pods starting on the node.

A paused kubelet's timers do not fire, a host with no CPU to spare runs
nothing on time, and a node busy making other pods' sandboxes makes a restart
wait its turn; a restart late across any of them is not the kubelet's failure
alone, and the verdict says so (set aside, or an error, with the span that
excuses it, and never for longer than that span lasted).
"""

from __future__ import annotations

from collections.abc import Sequence

from crashloop_harness.model.backoff import CostAllowance
from crashloop_harness.model.durations import to_ns
from crashloop_harness.recording.nodepods import PodStartup, startup_time_within
from crashloop_harness.verdict.tolerances import (
    MAX_JUDGEABLE_PACE,
    MAX_JUDGEABLE_SLOWDOWN,
    clock,
    secs,
)


def busy_host_reach_ns(allowance: CostAllowance, *, first: bool) -> int:
    """The most lateness a saturated host can account for in one restart (ns).

    A busy host slows a restart's work; it does not stop the kubelet's timers (the
    back-off, the pod worker's requeue, the PLEG relist, the sync tick fire on the
    clock). So the most it adds is that work done at the slowest pace the verdict
    still judges (bounds max_judgeable_pace, max_judgeable_slowdown) instead of the
    pace the window allowed; slower than that, the node is too slow to judge anyway.
    A kubelet that stopped, or never restarts, is late by more than this and is
    judged, however busy the host: on the fast tier's busy-host run its stopped
    kubelet went 337 s past its bound, excused as the host's while its node's pace
    probes read 1.0x (run 20261207T151116Z-check-mutation-d70c).
    """
    widest = MAX_JUDGEABLE_PACE if allowance.timers_apart else MAX_JUDGEABLE_SLOWDOWN
    factor = max(0.0, widest / allowance.slowdown - 1.0)
    return to_ns(allowance.work(first=first) * factor)


def _unobserved_within(
    spans: Sequence[tuple[int, int]], start_ns: int, end_ns: int, excess_ns: int
) -> str | None:
    """How the node went unobserved between two moments, None when it was observed
    throughout, or for less time than the restart is late (a 2.5 s gap in the listings
    cannot account for a restart 5.5 s past its bound)."""
    overlapping = [(a, b) for a, b in spans if a < end_ns and b > start_ns]
    unobserved_ns = sum(min(b, end_ns) - max(a, start_ns) for a, b in overlapping)
    if not overlapping or unobserved_ns < excess_ns:
        return None
    longest = max(overlapping, key=lambda span: span[1] - span[0])
    return (
        f"node frozen {secs(longest[1] - longest[0])} at {clock(longest[0])}: no listing of "
        "it in that span, so the delay is not the kubelet's alone"
    )


def machine_lateness(
    unobserved: Sequence[tuple[int, int]],
    saturated: Sequence[tuple[int, int, float]],
    start_ns: int,
    end_ns: int,
    *,
    busy_from_ns: int,
    excess_ns: int,
    busy_reach_ns: int,
) -> str | None:
    """Why a restart late between two moments is the machine's, None when nothing says so.

    A node not observed (frozen, paused) from the exit on comes first: a
    paused kubelet's timers do not fire. Then a host whose CPUs were
    saturated once the back-off had passed (``busy_from_ns``): load during the
    wait cannot make a restart late, only load once it is due. Either excuses
    only as much lateness as it lasted: a restart ``excess_ns`` past its bound
    needs at least that long of it (a busy second cannot account for a minute
    overdue). And a saturated host no more than ``busy_reach_ns``
    (:func:`busy_host_reach_ns`): a busy hour cannot account for a restart that
    never comes.
    """
    frozen = _unobserved_within(unobserved, start_ns, end_ns, excess_ns)
    if frozen is not None:
        return frozen
    if excess_ns > busy_reach_ns:
        return None
    busy = [(a, b, share) for a, b, share in saturated if a < end_ns and b > busy_from_ns]
    saturated_ns = sum(min(b, end_ns) - max(a, busy_from_ns) for a, b, _ in busy)
    if not busy or saturated_ns < excess_ns:
        return None
    busiest = max(share for _, _, share in busy)
    first = max(min(a for a, _, _ in busy), busy_from_ns)
    return (
        f"the host was saturated (its CPUs {busiest:.0%} busy) for {secs(saturated_ns)} after "
        f"{clock(first)}, once the back-off had passed: the delay is the machine's "
        "lateness, not the kubelet's alone"
    )


def started_beside(
    startups: Sequence[PodStartup],
    due_ns: int,
    decided_ns: int,
    *,
    excess_ns: int,
    reach_ns: int,
) -> str | None:
    """Which other pods a node started once a restart was due, None when none (or for less
    time than the restart is late, or when it is later than ``reach_ns``).

    Their sandboxes take the runtime's and the kubelet's time first, which no pace probe
    sees (crashloop_harness.recording.nodepods). Like a saturated host, a start-up excuses
    only as much lateness as it lasted once the restart was due: a second's start-up
    cannot account for a restart a minute late, and one during the back-off none. And no
    more than the node's own work at the slowest pace judged (:func:`busy_host_reach_ns`):
    a pod stuck starting (never ready) excuses no restart that never comes.
    """
    if excess_ns > reach_ns:
        return None
    beside = [s.pod for s in startups if s.overlaps(due_ns, decided_ns)]
    if not beside or startup_time_within(startups, due_ns, decided_ns) < excess_ns:
        return None
    more = f" and {len(beside) - 3} more" if len(beside) > 3 else ""
    return (
        f"the node started {len(beside)} other pod(s) once it was due "
        f"({', '.join(beside[:3])}{more}, as its kubelet lists them): their start-up is the "
        "node's work, not this restart's"
    )
