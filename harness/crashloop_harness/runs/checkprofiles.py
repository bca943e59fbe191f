"""What a conformance check must see: its profiles, and each worker's need from its curve.

A check profile names its observation window, the rule that turns a curve
into what a worker must show (:class:`NeedRule`: its level up to a limit, a
number of restarts, the cap reached some times), the variants it runs beside
the bare crashing container, and overrides by worker name. Pure, apart from
:func:`check_variants_have_workers`, which reads the cluster's spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Final

from crashloop_harness.cluster.target import RunTarget
from crashloop_harness.core import timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.model import subject
from crashloop_harness.model.backoff import BackoffCurve
from crashloop_harness.model.subject import Subject
from crashloop_harness.verdict import restarts_needed


@dataclass(frozen=True)
class Need:
    """What one worker must show before it can be judged."""

    min_restarts: int | None = None
    until_delay_s: float | None = None

    @property
    def until_delay(self) -> timedelta | None:
        return None if self.until_delay_s is None else timedelta(seconds=self.until_delay_s)


@dataclass(frozen=True)
class Variant:
    """A workload that does not exit at once, beside the bare one on one worker.

    The bare container cannot show two rules of the curve: the back-off counts
    from the container's exit (a container that runs R seconds must still
    wait the full back-off after it), and a run longer than the reset
    threshold starts a fresh curve (its next restart is immediate).
    ``subject`` names it in the results (``<worker>/<name>``).
    """

    name: str
    profile: str | None  # the worker profile it runs beside; None: beside every worker
    args: tuple[str, ...]
    need: Need
    # How long each attempt runs before it exits (its args say so to the workload): what
    # spaces its restarts beyond the back-off, for the API load a check adds.
    runs_for_s: float = 0.0

    def runs_beside(self, profile: str | None) -> bool:
        """Whether it runs beside a worker of ``profile`` (None: a node of an existing cluster)."""
        return self.profile is None or self.profile == profile

    def subject(self, worker: str) -> str:
        return str(Subject(worker, self.name))


@dataclass(frozen=True)
class NeedRule:
    """What every worker must show, in terms of its own curve, not its profile's name.

    Restarts up to the first at the level min(cap, ``level_limit_s``), the cap
    ``cap_times`` times where the cap lies below that limit (a second capped
    restart shows that the cap holds), and at least ``min_restarts`` as far as
    those fit in ``floor_budget_s`` of nominal waits (many samples of a fast
    curve, without stretching a slow one). A new profile file therefore needs
    no code: its curve says what it must show.
    """

    level_limit_s: float
    min_restarts: int
    cap_times: int = 1
    floor_budget_s: float = 120.0

    def need(self, curve: BackoffCurve) -> Need:
        limit = timedelta(seconds=self.level_limit_s)
        highest = restarts_needed(curve, until_delay=min(curve.maximum, limit))
        if curve.maximum < limit:
            highest += self.cap_times - 1
        floor, waited = 0, timedelta(0)
        for n in range(1, self.min_restarts + 1):
            waited += curve.delay_before_restart(n)
            if waited > timedelta(seconds=self.floor_budget_s):
                break
            floor = n
        return Need(min_restarts=max(highest, floor))


@dataclass(frozen=True)
class CheckProfile:
    name: str
    timeout_s: float
    rule: NeedRule
    # By worker name: a need that replaces the rule's (drills that watch one
    # worker closely, or a level beyond the rule's limit).
    overrides: Mapping[str, Need] = field(default_factory=dict)
    # A fixed window (the demo): what was measured by the deadline is judged,
    # rather than the run failing for not reaching every need.
    fixed_window: bool = False
    variants: tuple[Variant, ...] = ()

    def need_for(self, worker: str, curve: BackoffCurve) -> Need:
        return self.overrides.get(worker) or self.rule.need(curve)


# Each attempt works 5s, then crashes: restart n must still wait the full
# back-off after the exit, not after the start (a kubelet counting from the
# start would restart 5s sooner: at once below a 5s back-off). Beside every
# worker, so the rule is checked on every curve: restarts 2-4 wait 2s on the
# fast curve, 1-4s on the reduced one, 10-40s on the default one (about 90s).
RUNS_5S: Final = Variant(
    subject.RUNS_5S,
    None,
    ("--mode", "run", "--run-for", "5s", "--exit-code", "1"),
    Need(min_restarts=4),
    runs_for_s=5.0,
)
# Three quick crashes, then one attempt that runs past the 600s reset
# threshold: its restart is immediate and starts a fresh curve. The control
# runs 590s and must not reset.
RESET_610S: Final = Variant(
    subject.RESET_610S,
    "reduced",
    ("--mode", "run-once", "--fail-times", "3", "--run-for", "610s", "--exit-code", "1"),
    Need(min_restarts=6),
)
CONTROL_590S: Final = Variant(
    subject.CONTROL_590S,
    "reduced",
    ("--mode", "run-once", "--fail-times", "3", "--run-for", "590s", "--exit-code", "1"),
    Need(min_restarts=6),
)


CHECK_PROFILES: Final = {
    # About 3 minutes: the fast curve ten times, every other curve up to its
    # first capped restart or its 80s level (the reduced curve's 60s cap is the
    # level that a 30s max would imitate in the delay window alone).
    "quick": CheckProfile(
        "quick",
        timeouts.CHECK_QUICK,
        NeedRule(level_limit_s=80, min_restarts=10),
        variants=(RUNS_5S,),
    ),
    # About 12 minutes: curves capped below 300s reach their cap twice, the
    # default curve its 300s cap once; a curve reset by a 610s run and its
    # 590s control.
    "full": CheckProfile(
        "full",
        timeouts.CHECK_FULL,
        NeedRule(level_limit_s=300, min_restarts=20, cap_times=2),
        variants=(RUNS_5S, RESET_610S, CONTROL_590S),
    ),
}


def check_variants_have_workers(profile: CheckProfile, cluster: RunTarget) -> None:
    """A variant whose worker profile no worker runs would silently not be checked: refuse.

    A cluster without profiles (an existing one) runs only the variants that run beside
    every node; the others are its report's "not covered".
    """
    running = cluster.profile_names()
    if running is None:
        return
    missing = [v for v in profile.variants if v.profile is not None and v.profile not in running]
    if missing:
        wanted = sorted({str(v.profile) for v in missing})
        raise HarnessError(
            f"the {profile.name} check runs {', '.join(v.name for v in missing)} beside a worker "
            f"with profile {', '.join(wanted)}, and no worker of "
            f"cluster {cluster.name} has it (profiles: {', '.join(sorted(running))})",
            "give one worker that profile in the cluster spec",
        )
