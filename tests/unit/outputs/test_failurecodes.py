"""A code beside each failure's words, read from the words the verdict writes."""

from __future__ import annotations

import pytest

from crashloop_harness.outputs.failurecodes import case_name, failure_code


@pytest.mark.parametrize(
    ("failure", "code"),
    [
        ("default: restart 4 overdue: attempt 3 exited at 10:02:01.000 UTC", "overdue"),
        ("fast: restart 2: expected 2s, measured 10.1s, bound 4.5s: too late: ...", "too-late"),
        ("reduced: restart 3: expected 2s, measured 1.1s, bound 4s: too early: ...", "too-early"),
        (
            "fast: levels unconfirmed: the kubelet's back-off level was seen before 0 of 9",
            ("levels-unconfirmed"),
        ),
        ("reduced: the 7 restarts at the 1m cap came 43.800s past it in median", "cap-median"),
        ("reduced: incomplete: the observation ended before restart 5", "incomplete"),
        (
            "default: error: restart 3 overdue, but crashloop-worker3 was not observed",
            ("environment"),
        ),
        (
            "fast: error: node crashloop-worker too slow to judge back-off 2s: a restart with "
            "no back-off took p95 6.072s over 10 samples",
            "node-too-slow",
        ),
        (
            "fast: restart 4: expected 2s, measured 6.1s: error: restarted (created) after "
            "6.100s, over the 4.500s upper bound, but node w too slow to judge back-off 2s",
            "node-too-slow",
        ),
        (
            "fast: error: levels unconfirmed: ... But node w is 1.80x slower than the reference "
            "host at restarting (bound slow_levels_from 1.5x): its status writes, which carry "
            "the level, fall behind its restarts",
            "node-too-slow",
        ),
        ("fast: something nobody wrote a pattern for", "other"),
    ],
)
def test_each_failure_has_its_code(failure: str, code: str) -> None:
    worker = failure.split(":", 1)[0]
    assert failure_code(failure, worker) == code


def test_a_worker_problem_is_a_case_named_after_what_it_judges() -> None:
    assert case_name("restart 4 overdue: attempt 3 exited at ...") == "restart-4-overdue"
    assert case_name("levels unconfirmed: the kubelet's back-off ...") == "levels-unconfirmed"
    assert case_name("a problem with no pattern") == "worker-check"
