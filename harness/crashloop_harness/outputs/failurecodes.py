"""A machine-readable code beside each failure's words, for CI rules and dashboards.

Read from the words the verdict opens a failure with (the verdict writes them in one
place each: harness/crashloop_harness/verdict/); a failure no pattern knows is ``other``, never
dropped.
"""

from __future__ import annotations

import re
from typing import Final

# (pattern, code): the first that matches a failure (after its "<worker>: " prefix) names it.
_CODES: Final = (
    # A node slower than the verdict can judge, or whose status writes fall behind: the node's.
    (re.compile(r"too slow to judge|fall behind its restarts"), "node-too-slow"),
    (re.compile(r"^error: .*(?:not observed|unobserved|saturated|paused|frozen)"), "environment"),
    (re.compile(r"^(?:error: )?restart \d+ overdue"), "overdue"),
    (re.compile(r"^restart \d+ \(pending\)"), "pending-level"),
    (re.compile(r"^incomplete:"), "incomplete"),
    (re.compile(r"^(?:error: )?levels unconfirmed"), "levels-unconfirmed"),
    (re.compile(r"^(?:error: )?the \d+ restarts at the .* cap came"), "cap-median"),
    (re.compile(r"^no container attempt was recorded"), "no-attempt"),
    (re.compile(r"disagrees with the runtime|the pod status"), "status-disagrees"),
    (re.compile(r"restart \d+: .*too early"), "too-early"),
    (re.compile(r"restart \d+: .*too late"), "too-late"),
    (re.compile(r"restart \d+: .*unconfirmed"), "unconfirmed"),
    (re.compile(r"restart \d+: .*reported a"), "reported-level"),
    (re.compile(r"restart \d+: .*never recorded|cannot be measured"), "not-measured"),
)
_RESTART: Final = re.compile(r"restart (\d+)")


def failure_code(failure: str, worker: str = "") -> str:
    """The code of one failure message, e.g. ``overdue``, ``too-late``, ``cap-median``."""
    text = failure.removeprefix(f"{worker}: ") if worker else failure
    return next((code for pattern, code in _CODES if pattern.search(text)), "other")


def case_name(problem: str) -> str:
    """The test case a worker-level problem is, named after what it judges: ``restart-4-overdue``,
    ``levels-unconfirmed``; the code alone where no restart is named."""
    code = failure_code(problem)
    restart = _RESTART.match(problem.removeprefix("error: "))
    if restart is not None and code in ("overdue", "pending-level"):
        return f"restart-{restart.group(1)}-{code}"
    return "worker-check" if code == "other" else code
