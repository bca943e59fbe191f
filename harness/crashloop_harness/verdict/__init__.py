"""Measured restart delays of one container against the expected curve.

Pure: the input is a worker's attempt records (one container of one pod) and
the :class:`~crashloop_harness.model.backoff.BackoffCurve` of that worker's live kubelet
config; the output says, restart by restart, whether the kubelet kept to the
curve, and why not when it did not.

Restart n is the creation of attempt n: the moment the kubelet decided to
restart, not when the container got going. Its delay is counted the way the
kubelet counts it: from the previous attempt's CRI ``finishedAt`` to this
attempt's CRI ``createdAt`` (``startedAt`` for records that lack it), both
runtime nanoseconds; the start latency (started - created) is reported on its
own, so a slow runtime under load is never blamed on the kubelet. It passes when

    expected - CLOCK_ROUNDING <= delay <= curve.upper_tolerance(expected)

(see :mod:`crashloop_harness.model.backoff` for the upper bound), and when the back-off the
kubelet reported while waiting is the model's. Near the caps the delay
windows of neighbouring levels overlap (reduced max 30s against 60s, default
max 150s against 300s), so for a back-off of :data:`CONFIRM_FROM` or more the
reported level must have been seen: a restart whose level was not seen is
"unconfirmed", a failure, not a pass.

A pass is earned: a worker fails when the observation ended before the
restarts it needed (incomplete), when a restart is overdue (the previous exit
plus the window's upper bound has passed on the node's clock without it), or
when the pod status's times disagree with the runtime's beyond the API's
whole-second rounding.
"""

from crashloop_harness.verdict.failures import Failure, Rule
from crashloop_harness.verdict.observation import AS_RECORDED, Observation
from crashloop_harness.verdict.restart import RestartCheck, waited_restarts
from crashloop_harness.verdict.tolerances import (
    API_ROUNDING,
    CAP_MEDIAN_FROM,
    CLOCK_ROUNDING,
    CONFIRM_FROM,
    LEVEL_SHARE_FROM,
    LEVEL_SHARE_MIN,
    RESET_LEAD,
    SELF_REPORT_SLACK,
)
from crashloop_harness.verdict.worker import (
    WorkerVerdict,
    judge_worker,
    observed_enough,
    restarts_needed,
)

__all__ = [
    "API_ROUNDING",
    "AS_RECORDED",
    "CAP_MEDIAN_FROM",
    "CLOCK_ROUNDING",
    "CONFIRM_FROM",
    "LEVEL_SHARE_FROM",
    "LEVEL_SHARE_MIN",
    "RESET_LEAD",
    "SELF_REPORT_SLACK",
    "Failure",
    "Observation",
    "RestartCheck",
    "Rule",
    "WorkerVerdict",
    "judge_worker",
    "observed_enough",
    "restarts_needed",
    "waited_restarts",
]
