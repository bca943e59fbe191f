"""`crashloop mutants`: the verdict proved on kubelet code mutants of the pinned release."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from crashloop_harness.cli import common
from crashloop_harness.cli.codes import MEASURING_CODES
from crashloop_harness.cli.measure import profile_option
from crashloop_harness.cli.out import SCREEN, emit
from crashloop_harness.cluster import lifecycle
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.exitcodes import INTERRUPTED
from crashloop_harness.core.pins import KubernetesPin
from crashloop_harness.outputs.mutants import (
    MUTANTS_FILE,
    MutantResult,
    mutants_document,
    mutants_table,
    write_mutants,
)
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES
from crashloop_harness.runs.lifecycle import new_run_dir, point_latest_at
from crashloop_harness.runs.mutants import build_all, rejudge, run_mutants
from crashloop_harness.substrate.mutantset import CHECK, choose, mutant_set


def register(commands: common.Commands, parents: common.Parents) -> None:
    mutants = common.add_command(
        commands, "mutants", _cmd_mutants, codes=MEASURING_CODES, parents=(parents.spec_and_image,)
    )
    mutants.add_argument(
        "--mutants",
        metavar="NAME[,NAME...]",
        help="which (default: all; the control always runs first)",
    )
    profile_option(mutants, "quick")
    mutants.add_argument(
        "--from",
        dest="mutants_from",
        type=Path,
        metavar="RUN_DIR",
        help="run nothing: say again which mutants were killed, by which restart and rule, "
        "by today's attribution (which workers count as the target's), from the check runs "
        "beside it (their summaries and decisions, as their verdicts were judged then), and "
        "write its mutants.json again",
    )
    common.output_option(mutants)


def _cmd_mutants(args: argparse.Namespace) -> int:
    """check kubelets whose back-off code is changed (/configz unchanged): each mutant must fail

    Build every kubelet code mutant kept for the release (and an unchanged control), run each on the
    worker whose curve it bends most with the other workers as controls, and say which the check
    killed, by which restart and rule, and how long after the pods were created. The image's kubelet
    is put back after each. mutants.json and a table.
    """
    if args.mutants_from is not None:
        return _rejudge(args.mutants_from, common.spec_of(args).kubernetes)
    spec = common.spec_of(args)
    kept = mutant_set(spec.kubernetes)
    for other in (m for m in kept if m.judged_by != CHECK):
        common.progress(
            f"mutant {other.name} left out: the check cannot see it; the scenario "
            f"{other.judged_by} judges it (`crashloop scenarios --scenarios {other.judged_by}` "
            f"after `crashloop kubelet --nodes {other.target} --patch {other.patch}`)"
        )
    chosen = choose([m for m in kept if m.judged_by == CHECK], args.mutants)
    profile = CHECK_PROFILES[args.profile]
    built = build_all(
        chosen, spec.kubernetes, common.progress
    )  # refused or built before any cluster
    cluster = lifecycle.up(spec, common.progress, image=args.image)
    _, run_dir = new_run_dir("mutants")
    results: list[MutantResult] = []

    def write(status: str) -> dict[str, object]:
        document = mutants_document(
            results, release=spec.kubernetes.version, profile=profile.name, status=status
        )
        write_mutants(run_dir, document)
        return document

    def keep(result: MutantResult) -> None:
        # Written after every mutant: a long run stopped half-way keeps what it judged.
        results.append(result)
        write("running")

    run = run_mutants(cluster, built, profile, common.progress, on_result=keep)
    status = "interrupted" if run.interrupted else "finished"
    document = write(status)
    point_latest_at(run_dir)
    SCREEN.tables.print(mutants_table(results, profile.name))
    SCREEN.tables.print(f"mutants: {run_dir / 'mutants.json'}")
    emit({"run_dir": str(run_dir), **document})
    if run.interrupted:
        return INTERRUPTED
    return 0 if all(r.as_expected for r in results) else 1


def _rejudge(run_dir: Path, pin: KubernetesPin) -> int:
    path = run_dir / MUTANTS_FILE
    try:
        written = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise HarnessError(
            f"{path}: not a mutants run's result ({error})", "give a mutants run's directory"
        ) from error
    results = rejudge(written, mutant_set(pin), run_dir.parent)
    document = mutants_document(
        results,
        release=str(written.get("release", pin.version)),
        profile=str(written.get("profile", "?")),
        status=str(written.get("status", "finished")),
    )
    write_mutants(run_dir, document)
    SCREEN.tables.print(mutants_table(results, str(document["profile"])))
    SCREEN.tables.print(f"mutants judged again: {path}")
    emit({"run_dir": str(run_dir), **document})
    return 0 if all(r.as_expected for r in results) else 1
