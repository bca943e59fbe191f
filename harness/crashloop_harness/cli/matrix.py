"""`crashloop matrix`: the check on each pinned Kubernetes release, one after the other;
`crashloop newest`: the releases a nightly that follows new releases tests tonight."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from crashloop_harness.cli import common
from crashloop_harness.cli.codes import MEASURING_CODES, SETUP_CODES
from crashloop_harness.cli.out import SCREEN, emit
from crashloop_harness.cluster.profiles import load_cluster_spec
from crashloop_harness.core import pins
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.exitcodes import INTERRUPTED
from crashloop_harness.core.resources import DEFAULT_SPEC_NAME, spec_path
from crashloop_harness.model.newest import newest as newest_releases
from crashloop_harness.outputs.matrix import (
    MATRIX_FILE,
    Matrix,
    against,
    markdown_table,
    read_matrix,
)
from crashloop_harness.outputs.render import matrix_table
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES
from crashloop_harness.runs.lifecycle import point_latest_at
from crashloop_harness.runs.matrix import matrix_from_runs, run_matrix
from crashloop_harness.substrate.nodeselect import check_kubernetes_version
from crashloop_harness.substrate.proxyversions import listed_kubernetes_versions


def register(commands: common.Commands, _parents: common.Parents) -> None:
    _add_matrix(commands)
    newest = common.add_command(commands, "newest", _cmd_newest, codes=SETUP_CODES)
    common.output_option(newest)


def _cmd_newest(_args: argparse.Namespace) -> int:
    """print the releases a nightly that follows new releases tests tonight

    Ask the Go module proxy which k8s.io/kubernetes versions exist and print, per pinned minor, its
    newest patch (never older than the pin) and the newest pre-release beyond the newest minor: what
    the nightly's follow job runs the conformance check on. The proxy's list, because the nodes are
    built offline from its modules (a version it lists is one the harness can build) and it lists a
    tag within minutes, where kind publishes node images later and not for every release. Give one
    of them to --kubernetes (e.g. --kubernetes v1.37.2): a newer patch of a pinned minor is built
    offline with that minor's etcd and CoreDNS.
    """
    tonight = newest_releases(listed_kubernetes_versions(), pins.KUBERNETES)
    for release in tonight:
        why = "newer than the pin " + release.pinned if release.newer_than_pin else "the pin"
        kind = ", a pre-release" if release.pre_release else ""
        SCREEN.tables.print(f"{release.minor}: {release.version} ({why}{kind})")
    emit({"releases": [asdict(release) for release in tonight]})
    if not SCREEN.document:
        # The versions alone on stdout, for a workflow to read.
        print(" ".join(release.version for release in tonight))
    return 0


def _add_matrix(commands: common.Commands) -> None:
    matrix = common.add_command(commands, "matrix", _cmd_matrix, codes=MEASURING_CODES)
    matrix.add_argument("--config", default=DEFAULT_SPEC_NAME, help=common.CONFIG_HELP)
    matrix.add_argument(
        "--versions",
        default=",".join(pin.minor for pin in pins.KUBERNETES.values()),
        help="comma-separated releases, in order (default: every pinned one)",
    )
    matrix.add_argument("--profile", choices=sorted(CHECK_PROFILES), default="quick")
    matrix.add_argument(
        "--keep-clusters",
        action="store_true",
        help="keep each release's cluster (default: delete all but the default release's)",
    )
    matrix.add_argument(
        "--from",
        dest="runs_from",
        nargs="+",
        metavar="DIR",
        help="run nothing: line up the quick or full check runs found under these directories "
        "(one job's runs/ per release, as the nightly workflow downloads them; scenario runs "
        "are passed over, a check of another profile refused)",
    )
    common.output_option(matrix)
    matrix.add_argument(
        "--against",
        metavar="MATRIX_JSON",
        help="also say what moved against a published matrix (one kept under docs/matrix/): "
        "a result that changed, a median delay beyond the noise, a release only one has",
    )
    matrix.add_argument(
        "--markdown",
        metavar="FILE",
        help="also append the table and the behaviour changes to FILE as Markdown "
        "(for example $GITHUB_STEP_SUMMARY)",
    )


def _cmd_matrix(args: argparse.Namespace) -> int:
    """run the check on each pinned Kubernetes release in turn; matrix.json, a table and the
    behaviour changes between releases

    The check on each pinned Kubernetes release in turn, each on a cluster of its own; matrix.json,
    a table, a plot and the behaviour changes between neighbouring releases. With --from, line up
    quick or full check runs already made.
    """
    if args.markdown:
        # Refused before any release runs: a matrix is too long to lose to a bad path.
        try:
            Path(args.markdown).open("a", encoding="utf-8").close()
        except OSError as error:
            raise HarnessError(
                f"--markdown {args.markdown}: cannot write it ({error.strerror})",
                "name a file in a directory that exists and is writable",
            ) from error
    published = read_matrix(Path(args.against)) if args.against else None
    matrix, where = _matrix_of(args)
    moved = against(published, matrix) if published is not None else None
    if args.markdown:
        with Path(args.markdown).open("a", encoding="utf-8") as markdown:
            markdown.write(markdown_table(matrix))
            if moved is not None:
                markdown.write(f"\nAgainst {args.against}:\n\n")
                markdown.write("".join(f"- {line}\n" for line in moved or ["nothing moved"]))
    out = SCREEN.tables
    out.print(matrix_table(matrix))
    for change in matrix.changes or ["no change in median delay beyond the noise"]:
        out.print(f"  {change}")
    if moved is not None:
        out.print(f"against {args.against}:")
        for line in moved or ["nothing moved beyond the noise"]:
            out.print(f"  {line}")
    out.print(f"matrix: {where / MATRIX_FILE}")
    point_latest_at(where)
    emit(
        {
            "run_dir": str(where),
            "matrix": json.loads((where / MATRIX_FILE).read_text()),
            "against": None if moved is None else {"published": args.against, "moved": moved},
        }
    )
    if any(entry.status == "interrupted" for entry in matrix.entries):
        return INTERRUPTED
    return 0 if matrix.passed else 1


def _matrix_of(args: argparse.Namespace) -> tuple[Matrix, Path]:
    """The matrix of runs already made (--from), else of each release checked now."""
    if args.runs_from:
        return matrix_from_runs([Path(directory) for directory in args.runs_from])
    releases = [check_kubernetes_version(v) for v in args.versions.split(",") if v.strip()]
    if not releases:
        raise HarnessError("--versions names no release", "e.g. --versions 1.34,1.35")
    spec_file = spec_path(args.config)
    for pin in releases:
        load_cluster_spec(spec_file, pin)  # every profile valid on every release, up front
    return run_matrix(
        spec_file,
        releases,
        CHECK_PROFILES[args.profile],
        common.progress,
        keep_clusters=args.keep_clusters,
    )
