"""The `crashloop` command line: every command, option and help text (no behaviour).

:mod:`harness.cli` runs the command a parsed line names; keeping the
arguments here lets a reader see the whole interface in one place.
"""

from __future__ import annotations

import argparse
from importlib import metadata
from pathlib import Path
from typing import Final

from harness.cli.help import ENVIRONMENT, describe
from harness.cli.out import FORMATS
from harness.core import pins
from harness.core.resources import DEFAULT_SPEC_NAME
from harness.live.demo import DEFAULT_DURATION_S, MAX_DURATION_S
from harness.live.view import THEMES
from harness.model.overhead import REPEAT_WITHIN
from harness.recording.recorder import OBSERVERS
from harness.runs.checkprofiles import CHECK_PROFILES
from harness.runs.overheadplan import DEFAULT_PODS as OVERHEAD_PODS
from harness.runs.overheadplan import DEFAULT_WARMUP_S
from harness.runs.overheadplan import DEFAULT_WORKERS as OVERHEAD_WORKERS
from harness.scenarios import (
    NODE_FILE_SCENARIOS,
    SCENARIOS,
    STATEFULSET_ORDINAL,
    TALK_SCENARIOS,
)
from harness.scenarios.statefulset_ordinal import DEFAULT_FAIL_TIMES

CONFIG_HELP: Final = (
    "cluster spec: a YAML file or a built-in name (crashloop, gate-only, substrate; "
    "default crashloop)"
)
# `crashloop manifests` writes beside the user, as kubectl users expect.
REPLAY_DIR: Final = "workloads"

_Commands = argparse._SubParsersAction


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="crashloop",
        description="See, measure and check how the kubelet restarts crashing containers.",
        epilog=ENVIRONMENT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=version_text())
    parser.add_argument(
        "--runs-dir",
        metavar="DIR",
        help="where run directories are written (default ./runs, or $CRASHLOOP_RUNS_DIR)",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    spec = _spec_options(image=False)
    spec_and_image = _spec_options(image=True)
    _add_substrate(commands)
    _add_cluster(commands, spec, spec_and_image)
    _add_replay(commands, spec, spec_and_image)
    _add_measuring(commands, spec_and_image)
    _add_flakiness(commands, spec_and_image)
    _add_matrix(commands)
    _add_overhead(commands, spec_and_image)
    _add_overhead_compare(commands)
    _add_demo(commands, spec_and_image)
    _add_completion(commands)
    describe(commands)
    return parser


def version_text() -> str:
    try:
        mine = metadata.version("crashloop-harness")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        mine = "unknown"
    return (
        f"crashloop-harness {mine} (kind {pins.KIND_VERSION}, Kubernetes "
        f"{', '.join(pin.version for pin in pins.KUBERNETES.values())}; default "
        f"{pins.DEFAULT_KUBERNETES.version})"
    )


def _output_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--output",
        "-o",
        choices=FORMATS,
        default="text",
        help="json: one JSON document on stdout (the summary and its run directory), tables "
        "on stderr",
    )


def _add_completion(commands: _Commands[argparse.ArgumentParser]) -> None:
    completion = commands.add_parser("completion", help="print a shell completion script")
    completion.add_argument("shell", choices=("bash", "zsh", "tcsh"))


def _spec_options(*, image: bool) -> argparse.ArgumentParser:
    """--config (and --image): every command that touches the cluster takes them."""
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("--config", default=DEFAULT_SPEC_NAME, help=CONFIG_HELP)
    _kubernetes_option(options)
    if image:
        options.add_argument("--image", help="node image to use (must exist locally)")
    return options


def _add_substrate(commands: _Commands[argparse.ArgumentParser]) -> None:
    engine = commands.add_parser("engine", help="find or install and start a Docker engine")
    engine.add_argument(
        "--stop",
        action="store_true",
        help="stop the engine the harness started, with every container (a cluster then "
        "needs `crashloop up`)",
    )
    commands.add_parser(
        "kind", help=f"print the path of kind {pins.KIND_VERSION}, building it if needed"
    )
    image = commands.add_parser("node-image", help="choose or build the kind node image")
    image.add_argument(
        "--offline",
        action="store_true",
        help="build crashloop.local/node:<version> even if the official image could be pulled",
    )
    _kubernetes_option(image)
    image.add_argument(
        "--tag",
        help="tag of the offline build (with --offline; default crashloop.local/node:<version>)",
    )


def _add_cluster(
    commands: _Commands[argparse.ArgumentParser],
    spec: argparse.ArgumentParser,
    spec_and_image: argparse.ArgumentParser,
) -> None:
    up = commands.add_parser(
        "up",
        parents=[spec_and_image],
        help="create or reuse the cluster and wait until it is Ready",
    )
    up.add_argument("--recreate", action="store_true", help="delete an existing cluster first")
    status = commands.add_parser(
        "status", parents=[spec], help="show the cluster's nodes and system pods"
    )
    _output_option(status)
    commands.add_parser("down", parents=[spec], help="delete the cluster")
    commands.add_parser(
        "config",
        parents=[spec],
        help="print the kind config and each worker's kubelet patch (creates nothing)",
    )
    commands.add_parser(
        "kubeconfig", parents=[spec], help="print the path of the cluster's kubeconfig"
    )
    commands.add_parser(
        "rbac", help="print the least-privilege role for checking an existing cluster (YAML)"
    )


def _add_replay(
    commands: _Commands[argparse.ArgumentParser],
    spec: argparse.ArgumentParser,
    spec_and_image: argparse.ArgumentParser,
) -> None:
    """`crashloop manifests` and `crashloop workload-image`: the replay by hand."""
    manifests = commands.add_parser(
        "manifests",
        parents=[spec],
        help="write the talk's workloads as YAML to replay by hand with kubectl",
    )
    manifests.add_argument(
        "--output-dir", default=REPLAY_DIR, help=f"where to write them (default ./{REPLAY_DIR})"
    )
    commands.add_parser(
        "workload-image",
        parents=[spec_and_image],
        help="build the workload image and load its stable tag into the cluster (for the YAML)",
    )


def _add_measuring(
    commands: _Commands[argparse.ArgumentParser], spec_and_image: argparse.ArgumentParser
) -> None:
    """`check`, `scenarios` and `conformance`: one measured run each (or a few)."""
    check = commands.add_parser(
        "check",
        parents=[spec_and_image],
        help="measure every worker's restarts and check them against the curve",
    )
    check.add_argument(
        "--profile",
        choices=sorted(CHECK_PROFILES),
        default="quick",
        help="quick: a few minutes; full: about 11 minutes, every curve at its cap",
    )
    _observer_option(check)
    _output_option(check)
    _existing_cluster_options(check)
    scenarios = commands.add_parser(
        "scenarios",
        parents=[spec_and_image],
        help="measure the scenarios on every worker, one scenario at a time",
    )
    scenarios.add_argument(
        "--scenarios",
        nargs="+",
        choices=SCENARIOS,
        default=None,
        help="which (default: all; with --kubeconfig all but "
        f"{', '.join(NODE_FILE_SCENARIOS)}, which needs the node's files)",
    )
    scenarios.add_argument(
        "--ordinal-failures",
        type=_positive_int,
        default=None,
        metavar="K",
        help=f"{STATEFULSET_ORDINAL}: how many times ordinal 1 fails before it runs "
        f"(default {DEFAULT_FAIL_TIMES})",
    )
    _output_option(scenarios)
    _existing_cluster_options(scenarios)
    conformance = commands.add_parser(
        "conformance",
        parents=[spec_and_image],
        help="the nightly job: full check, every scenario, plots and a report",
    )
    conformance.add_argument("--profile", choices=sorted(CHECK_PROFILES), default="full")


def _add_flakiness(
    commands: _Commands[argparse.ArgumentParser], spec_and_image: argparse.ArgumentParser
) -> None:
    """`crashloop flakiness`: checks in a row, or the summaries of finished ones."""
    flakiness = commands.add_parser(
        "flakiness",
        parents=[spec_and_image],
        help="run the check many times in a row on one cluster; pass count and overshoot spread",
    )
    flakiness.add_argument("--profile", choices=sorted(CHECK_PROFILES), default="quick")
    _observer_option(flakiness)
    source = flakiness.add_mutually_exclusive_group()
    source.add_argument(
        "--runs", type=_positive_int, default=10, help="how many checks to run (default 10)"
    )
    source.add_argument(
        "--from",
        dest="runs_from",
        nargs="+",
        metavar="RUN_DIR",
        help="run nothing: aggregate the summaries of these finished quick or full check runs "
        "(a demo, a drill or a scenario run is refused)",
    )


def _add_overhead(
    commands: _Commands[argparse.ArgumentParser], spec_and_image: argparse.ArgumentParser
) -> None:
    """`crashloop overhead`: the talk's cost analysis, a sweep of pod counts per worker."""
    overhead = commands.add_parser(
        "overhead",
        parents=[spec_and_image],
        help="what N crash-looping pods cost a worker's kubelet and runtime, per back-off config",
    )
    # --pods, --workers and --warmup default to None so that --from, which runs
    # nothing, can refuse them when given; cmd_overhead fills in the defaults.
    overhead.add_argument(
        "--pods",
        help=f"pod counts, comma-separated; 'full': as many as the node takes (default "
        f"{OVERHEAD_PODS})",
    )
    overhead.add_argument(
        "--workers", help=f"workers to load, one at a time (default {OVERHEAD_WORKERS})"
    )
    overhead.add_argument(
        "--duration",
        type=float,
        metavar="S",
        help=(
            "each crashing cell's measured window (default per worker: 180s, or its cap "
            "plus 10%% where that is longer; a baseline's is 60s)"
        ),
    )
    overhead.add_argument(
        "--warmup",
        type=float,
        metavar="S",
        help="settling time before the window, after every pod started (crashing pods: "
        "after every one reached its back-off cap); the window then also waits for the "
        "kubelet's event writes to fall to a trickle "
        f"(default {DEFAULT_WARMUP_S:g})",
    )
    overhead.add_argument(
        "--from",
        dest="overhead_from",
        type=Path,
        metavar="RUN_DIR",
        help="run nothing: write a finished sweep's overhead.json, table, plots and report "
        "again with the current analysis (peaks recomputed from the series it kept)",
    )
    _output_option(overhead)


def _add_overhead_compare(commands: _Commands[argparse.ArgumentParser]) -> None:
    """`crashloop overhead-compare`: two finished sweeps' talk figures side by side."""
    compare = commands.add_parser(
        "overhead-compare",
        help="set two finished overhead sweeps' talk figures side by side; exit 1 when one "
        f"moved more than {REPEAT_WITHIN * 100:.0f}%%",
    )
    compare.add_argument(
        "first", type=Path, metavar="FIRST", help="a sweep's run directory or overhead.json"
    )
    compare.add_argument("second", type=Path, metavar="SECOND", help="the rerun, likewise")
    _output_option(compare)


def _add_matrix(commands: _Commands[argparse.ArgumentParser]) -> None:
    """`crashloop matrix`: the check on each pinned release, one after the other."""
    matrix = commands.add_parser(
        "matrix",
        help="run the check on each pinned Kubernetes release in turn; matrix.json, a table and "
        "the behaviour changes between releases",
    )
    matrix.add_argument("--config", default=DEFAULT_SPEC_NAME, help=CONFIG_HELP)
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
    matrix.add_argument(
        "--markdown",
        metavar="FILE",
        help="also append the table and the behaviour changes to FILE as Markdown "
        "(for example $GITHUB_STEP_SUMMARY)",
    )


def _add_demo(
    commands: _Commands[argparse.ArgumentParser], spec_and_image: argparse.ArgumentParser
) -> None:
    demo = commands.add_parser(
        "demo",
        parents=[spec_and_image],
        help="the talk's demo: set up, observe live, plot, report",
    )
    demo.add_argument(
        "--duration",
        type=float,
        default=DEFAULT_DURATION_S,
        help=f"observation window in seconds (default {DEFAULT_DURATION_S:g}, "
        f"at most {MAX_DURATION_S:g})",
    )
    demo.add_argument(
        "--scenarios",
        nargs="*",
        choices=SCENARIOS,
        default=list(TALK_SCENARIOS),
        help="scenarios to run beside the bare curve (default: the talk's three, "
        f"{', '.join(TALK_SCENARIOS)}; none: only the curve)",
    )
    demo.add_argument("--plain", action="store_true", help="plain timestamped lines, no live view")
    demo.add_argument("--down", action="store_true", help="delete the cluster afterwards")
    demo.add_argument(
        "--theme",
        choices=THEMES,
        default="dark",
        help="colours for a dark or a light terminal (both high contrast, for a projector)",
    )
    demo.add_argument(
        "--replay",
        metavar="RUN_DIR",
        help="no cluster: show a recorded demo run (its runs/<id>-check-demo-* directory) "
        "through the same live view, then the same takeaways",
    )
    demo.add_argument(
        "--speed",
        type=float,
        default=1.0,
        help="with --replay: how many times faster than it happened (default 1)",
    )
    demo.add_argument(
        "--wait-for-enter",
        action="store_true",
        help="set everything up, say ready, and start the live window when Enter is pressed",
    )


def _kubernetes_option(parser: argparse.ArgumentParser) -> None:
    pinned = ", ".join(pin.minor for pin in pins.KUBERNETES.values())
    parser.add_argument(
        "--kubernetes",
        default=pins.DEFAULT_KUBERNETES.minor,
        metavar="VERSION",
        help=f"Kubernetes release of the nodes: {pinned} (default "
        f"{pins.DEFAULT_KUBERNETES.minor}); another than the default gets a cluster of its own, "
        "named after it",
    )


def _existing_cluster_options(parser: argparse.ArgumentParser) -> None:
    existing = parser.add_argument_group(
        "an existing cluster (no docker, no kind: the kubeconfig's credentials alone)"
    )
    existing.add_argument(
        "--kubeconfig",
        metavar="PATH",
        help="measure the kubelets of the cluster this kubeconfig reaches instead of the "
        "harness's own; each selected node is judged against its own live /configz",
    )
    existing.add_argument("--context", help="the kubeconfig context (default: its current one)")
    existing.add_argument("--nodes", metavar="NODE[,NODE...]", help="the nodes to measure, by name")
    existing.add_argument(
        "--node-selector",
        metavar="SELECTOR",
        help="the nodes to measure, by label: key or key=value, comma-separated (all must match)",
    )
    existing.add_argument(
        "--workload-image",
        metavar="REF",
        help="the workload's image as the nodes can pull it (default: the harness's "
        "local build, present only where it was loaded, as on its own kind clusters)",
    )
    existing.add_argument(
        "--namespace",
        help="run in this prepared namespace (harness/resources/rbac/crashloop-check.yaml); "
        "default: create one and delete it afterwards",
    )


def _observer_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--observer",
        choices=OBSERVERS,
        default="events",
        help="events (default): one reader per node on the runtime's event stream; poll: list "
        "and inspect every node twice a second through `docker exec` (runtimes without an "
        "event stream, and to compare the two)",
    )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of runs of at least 1")
    return value
