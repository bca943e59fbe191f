"""`crashloop mutants`: the verdict proved on kubelet code mutants of the pinned release."""

from __future__ import annotations

import argparse

from harness.cli.codes import MEASURING_CODES
from harness.cli.common import Commands, Parents, add_command, output_option, progress, spec_of
from harness.cli.measure import profile_option
from harness.cli.out import SCREEN, emit
from harness.cluster import lifecycle
from harness.outputs.mutants import MutantResult, mutants_document, mutants_table, write_mutants
from harness.runs.checkprofiles import CHECK_PROFILES
from harness.runs.lifecycle import new_run_dir, point_latest_at
from harness.runs.mutants import build_all, run_mutants
from harness.substrate.mutantset import choose, mutant_set


def register(commands: Commands, parents: Parents) -> None:
    mutants = add_command(
        commands,
        "mutants",
        _cmd_mutants,
        summary="check kubelets whose back-off code is changed (/configz unchanged): each "
        "mutant must fail",
        description="Build every kubelet code mutant kept for the release (and an unchanged "
        "control), run each on the worker whose curve it bends most with the other workers "
        "as controls, and say which the check killed, by which restart and rule, and how long "
        "after the pods were created. The image's kubelet is put back after each. "
        "mutants.json and a table.",
        codes=MEASURING_CODES,
        parents=(parents.spec_and_image,),
    )
    mutants.add_argument(
        "--mutants",
        metavar="NAME[,NAME...]",
        help="which (default: all; the control always runs first)",
    )
    profile_option(mutants, "quick")
    output_option(mutants)


def _cmd_mutants(args: argparse.Namespace) -> int:
    spec = spec_of(args)
    chosen = choose(mutant_set(spec.kubernetes), args.mutants)
    profile = CHECK_PROFILES[args.profile]
    built = build_all(chosen, spec.kubernetes, progress)  # refused or built before any cluster
    cluster = lifecycle.up(spec, progress, image=args.image)
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

    run = run_mutants(cluster, built, profile, progress, on_result=keep)
    status = "interrupted" if run.interrupted else "finished"
    document = write(status)
    point_latest_at(run_dir)
    SCREEN.tables.print(mutants_table(results, profile.name))
    SCREEN.tables.print(f"mutants: {run_dir / 'mutants.json'}")
    emit({"run_dir": str(run_dir), **document})
    if run.interrupted:
        return 130
    return 0 if all(r.as_expected for r in results) else 1
