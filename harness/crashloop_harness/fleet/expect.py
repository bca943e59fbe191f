"""What a pool should run, said by its operator: ``--expect LABEL[=VALUE]:max=2s[,initial=1s]``.

The fleet groups nodes by the curve their live kubelet config gives and checks
that each kubelet keeps its own config; a pool whose every node runs the wrong
config would pass that. An expectation names the pool by one node label and the
back-off it should run; a selected node whose live config gives another curve is a
failure of the expectation (the config is not what its operator meant), apart from
a kubelet off its own config (the check's failure). Judged from the configs the
fleet read, before any check runs; an expectation that selects no node is not met
either, so a mistyped label never passes in silence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta

from crashloop_harness.core.errors import HarnessError
from crashloop_harness.fleet.plan import NodeFacts, format_duration_s
from crashloop_harness.model.durations import DurationError, parse_duration

_FORM = "LABEL[=VALUE]:max=DURATION[,initial=DURATION], e.g. pool=batch:max=2s"
_KEYS = ("initial", "max")


@dataclass(frozen=True)
class Expectation:
    """One ``--expect``: the nodes one label selects, and the back-off they should run."""

    text: str
    label: str
    value: str | None  # None: every node that carries the label
    initial: timedelta | None
    maximum: timedelta | None

    def selects(self, labels: Mapping[str, str]) -> bool:
        if self.label not in labels:
            return False
        return self.value is None or labels[self.label] == self.value

    def off(self, node: NodeFacts) -> str | None:
        """How ``node``'s live curve differs from the expected one; None when it does not."""
        if node.curve is None:
            return None
        said = []
        if self.initial is not None and node.curve.initial != self.initial:
            said.append(f"initial {format_duration_s(node.curve.initial.total_seconds())}")
        if self.maximum is not None and node.curve.maximum != self.maximum:
            said.append(f"max {format_duration_s(node.curve.maximum.total_seconds())}")
        return f"{node.cluster}/{node.node} runs {', '.join(said)}" if said else None


def parse_expectation(text: str) -> Expectation:
    """``--expect``'s text, refused with its form when it is not one."""
    selector, colon, curve = text.partition(":")
    label, equals, value = selector.partition("=")
    if not colon or not label.strip() or not curve.strip():
        raise HarnessError(f"--expect {text!r}: not a selector and a curve", f"write {_FORM}")
    wanted: dict[str, timedelta] = {}
    for part in curve.split(","):
        key, _, duration = part.strip().partition("=")
        if key not in _KEYS or not duration:
            raise HarnessError(
                f"--expect {text!r}: {part.strip()!r} is not initial=D or max=D", f"write {_FORM}"
            )
        try:
            wanted[key] = parse_duration(duration)
        except DurationError as error:
            raise HarnessError(f"--expect {text!r}: {error}", f"write {_FORM}") from None
    return Expectation(
        text=text,
        label=label.strip(),
        value=value.strip() if equals else None,
        initial=wanted.get("initial"),
        maximum=wanted.get("max"),
    )


@dataclass(frozen=True)
class ExpectationSummary:
    """An expectation judged over the fleet's nodes (fleet.json's ``expectations``)."""

    expectation: str
    selected: int  # nodes it selected whose config was read
    off: tuple[str, ...]  # each selected node that runs another curve, and what it runs
    met: bool
    words: str


def judge_expectations(
    expectations: Sequence[Expectation], nodes: Sequence[NodeFacts]
) -> tuple[ExpectationSummary, ...]:
    """Each expectation against every node it selects (those whose config was read)."""
    judged = []
    for expectation in expectations:
        selected = [n for n in nodes if n.curve is not None and expectation.selects(n.labels)]
        off = tuple(found for n in selected if (found := expectation.off(n)) is not None)
        if not selected:
            words = f"expectation {expectation.text}: no node selected (its label on no node read)"
        elif off:
            words = (
                f"expectation {expectation.text}: {len(off)} of {len(selected)} nodes run "
                f"another curve ({'; '.join(off[:3])}{'; ...' if len(off) > 3 else ''})"
            )
        else:
            words = f"expectation {expectation.text}: met on {len(selected)} nodes"
        judged.append(
            ExpectationSummary(
                expectation=expectation.text,
                selected=len(selected),
                off=off,
                met=bool(selected) and not off,
                words=words,
            )
        )
    return tuple(judged)
