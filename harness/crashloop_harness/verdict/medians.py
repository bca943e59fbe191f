"""How far the median of a few draws strays: the bound both the cap's median and a node's
slowdown are judged with (pure)."""

from __future__ import annotations

import functools
import math


@functools.cache
def uniform_median_quantile(count: int, confidence: float) -> float:
    """The ``confidence`` quantile of the median of ``count`` uniform(0, 1) draws.

    For an even count, of the upper of the middle two (the median is their mean, so
    this bounds it). The r-th smallest of n draws is at most x when at least r of
    them are: a binomial tail, solved for x by bisection.
    """
    if count < 1:
        raise ValueError(f"a median needs at least one draw, got {count}")
    rank = count // 2 + 1

    def below(x: float) -> float:  # P(the rank-th smallest <= x)
        return sum(
            math.comb(count, i) * x**i * (1 - x) ** (count - i) for i in range(rank, count + 1)
        )

    low, high = 0.0, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if below(middle) < confidence else (low, middle)
    return high
