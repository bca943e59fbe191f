"""The kubelet code mutants kept for a release: small patches that bend its back-off
code while its /configz stays as it was, each with what it changes and where.

They live in harness/crashloop_harness/resources/mutants/v<major>.<minor>/ as one diff each and
an index.yaml; `crashloop mutants` builds and judges them with the check. A mutant the check
cannot see (one that changes no back-off) names the scenario that judges it (``judged_by``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import yaml

from crashloop_harness.core import pins
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.resources import RESOURCES

MUTANTS_DIR: Final = RESOURCES / "mutants"
CONTROL: Final = "control"
CHECK: Final = "check"
WORKERS: Final = ("fast", "reduced", "default")


@dataclass(frozen=True)
class Mutant:
    """One patch: what it changes, the worker whose curve it bends most, the line it edits."""

    name: str
    patch: Path
    changes: str
    target: str
    # On the target worker, the first restart whose delay differs from the
    # right curve (None for the control, and for a change no delay shows).
    first_wrong_restart: int | None
    source: str
    # What kills it: the check (CHECK), or the scenario of that name.
    judged_by: str = CHECK

    @property
    def is_control(self) -> bool:
        return self.name == CONTROL


def mutant_set(pin: pins.KubernetesPin) -> list[Mutant]:
    """The mutants written against ``pin``'s release; refuses a release that has none."""
    index = MUTANTS_DIR / f"v{pin.minor}" / "index.yaml"
    if not index.is_file():
        kept = sorted(p.name for p in MUTANTS_DIR.glob("v*") if (p / "index.yaml").is_file())
        raise HarnessError(
            f"no kubelet mutants are written for Kubernetes {pin.minor}",
            f"choose a release that has them ({', '.join(kept) or 'none'}) with --kubernetes",
        )
    document = yaml.safe_load(index.read_text())
    if document.get("release") != pin.version:
        raise HarnessError(
            f"{index} is written against {document.get('release')}, the pinned release is "
            f"{pin.version}",
            "check each patch against the pinned release and update the index's release",
        )
    mutants = []
    for entry in document["mutants"]:
        target = str(entry["target"])
        if target not in WORKERS:
            raise HarnessError(f"{index}: mutant {entry['name']} targets {target!r}")
        first = entry.get("first_wrong_restart")
        mutants.append(
            Mutant(
                name=str(entry["name"]),
                patch=index.parent / str(entry["patch"]),
                changes=str(entry["changes"]),
                target=target,
                first_wrong_restart=None if first is None else int(first),
                source=str(entry.get("source", "")),
                judged_by=str(entry.get("judged_by", CHECK)),
            )
        )
    return mutants


def choose(mutants: Sequence[Mutant], names: str | None) -> list[Mutant]:
    """The mutants ``names`` lists (comma-separated; all when None), the control first."""
    by_name = {mutant.name: mutant for mutant in mutants}
    wanted = [n.strip() for n in names.split(",") if n.strip()] if names else list(by_name)
    unknown = [name for name in wanted if name not in by_name]
    if unknown:
        raise HarnessError(
            f"no mutant {', '.join(unknown)}", f"choose among {', '.join(sorted(by_name))}"
        )
    # The control always runs first: a run whose unpatched build fails judges nothing.
    ordered = [CONTROL, *(name for name in wanted if name != CONTROL)]
    return [by_name[name] for name in ordered if name in by_name]
