"""Statistics of a node's samples the verdict reads (pure): a median's upper confidence bound,
a reported quantile, the reference host's start latencies."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Final

# The reference host's start latencies (the run bound reference_start_latency
# names, n=99), as seconds at its 0th, 5th, 10th, ... 95th and 100th
# percentiles: a node's median of n starts is held against the percentile its
# own median would reach by chance once in four (SLOWDOWN_CONFIDENCE).
REFERENCE_START_PERCENTILES: Final = (
    0.155, 0.184, 0.213, 0.219, 0.227, 0.229, 0.23, 0.233, 0.235, 0.236, 0.239,
    0.24, 0.244, 0.256, 0.262, 0.29, 0.312, 0.329, 0.353, 0.411, 0.731,
)  # fmt: skip
# How sure the node's restarts must make it that its slowdown is not short of the
# true one (median_upper_bound): chosen by the simulation (docs/simulation.md), at
# which a sound kubelet on a host 1.5-3x as slow as this one ended failed in at most
# 0.2 % of checks; at the plain median 1-3 %.
MEDIAN_CONFIDENCE: Final = 0.9
# How sure a runtime's slowdown over 1 must be not to be chance. A cap only: a
# node as fast as the reference may read a little slow, which lets nothing
# through that its zero-back-off restarts do not show as well.
SLOWDOWN_CONFIDENCE: Final = 0.75
# The quantile each sample set is reported at (the bounds scale by the median).
REPORTED_QUANTILE: Final = 0.95


def median_upper_bound(values: Sequence[float], confidence: float = MEDIAN_CONFIDENCE) -> float:
    """The sample no lower than the true median with ``confidence``: the r-th smallest,
    r the least rank at which fewer than r samples fall under the median that often
    (a binomial tail with p = 1/2)."""
    ordered = sorted(values)
    count = len(ordered)
    below = 0.0
    for rank in range(1, count + 1):
        below += math.comb(count, rank - 1) / 2**count
        if below >= confidence:
            return ordered[rank - 1]
    return ordered[-1]


def reference_start_at(fraction: float) -> float:
    """The reference host's start latency at a quantile (0-1), between its percentiles."""
    steps = len(REFERENCE_START_PERCENTILES) - 1
    position = min(max(fraction, 0.0), 1.0) * steps
    low = min(int(position), steps - 1)
    share = position - low
    below, above = REFERENCE_START_PERCENTILES[low], REFERENCE_START_PERCENTILES[low + 1]
    return below + share * (above - below)


# The reference host's start latency at its 95th percentile (0.411 s).
REFERENCE_START_P95_S: Final = reference_start_at(0.95)


def quantile(values: Sequence[float], q: float = REPORTED_QUANTILE) -> float | None:
    """The ``q`` quantile (inclusive method), None for no values, the value itself for one."""
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return cuts[round(q * 100) - 1]
