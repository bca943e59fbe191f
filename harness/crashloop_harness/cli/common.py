"""What every `crashloop` verb family shares: the options several commands take, the
cluster a command runs on, progress lines, and how a verb family adds its commands.

A verb family is a module of :mod:`crashloop_harness.cli` with one ``register`` function: it
adds its commands, each with its flags, its help and its handler beside it.
"""

from __future__ import annotations

import argparse
import inspect
import math
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypeAlias

from rich.console import Console
from rich.text import Text

from crashloop_harness.cli.helptext import WrappingFormatter, example_epilog
from crashloop_harness.cli.out import FORMATS
from crashloop_harness.cluster import lifecycle
from crashloop_harness.cluster.incluster import in_a_pod
from crashloop_harness.cluster.kubeconfig import kubectl_default_kubeconfig
from crashloop_harness.cluster.profiles import ClusterSpec, load_cluster_spec
from crashloop_harness.cluster.remote import RemoteCluster, connect
from crashloop_harness.cluster.target import RunTarget
from crashloop_harness.core import pins
from crashloop_harness.core.conventions import PROGRESS_VARIABLE
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.resources import DEFAULT_SPEC_NAME, spec_path
from crashloop_harness.model.durations import DurationError, parse_duration
from crashloop_harness.outputs.steps import StepLines
from crashloop_harness.recording.recorder import OBSERVERS
from crashloop_harness.substrate.nodeselect import check_kubernetes_version
from crashloop_harness.substrate.workloadimage import image_tag

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
Handler: TypeAlias = Callable[[argparse.Namespace], int]

CONFIG_HELP: Final = (
    "cluster spec: a YAML file or a built-in name (crashloop, crashloop-pids, gate-only, "
    "substrate; default crashloop)"
)

# Progress goes to stderr, apart from results and JSON; CRASHLOOP_PROGRESS=stdout puts it on
# stdout instead, one stream whose order a log keeps (the nightly's pod: a container's two
# streams are read apart, so a line of one may land after a later line of the other).
console: Final = Console(stderr=os.environ.get(PROGRESS_VARIABLE) != "stdout")


# Every command's progress: a line per step as it starts, terminal or not, and a line a
# minute while one runs long (the command runs inside ``with STEPS``: crashloop_harness.cli.app).
STEPS: Final = StepLines(lambda line: console.print(Text(line), soft_wrap=True))


def progress(message: str) -> None:
    STEPS(message)


@dataclass(frozen=True)
class Parents:
    """Option sets several commands inherit (argparse parents)."""

    spec: argparse.ArgumentParser  # --config, --kubernetes
    spec_and_image: argparse.ArgumentParser  # the same and --image


def parents() -> Parents:
    return Parents(spec=_spec_options(image=False), spec_and_image=_spec_options(image=True))


def add_command(
    commands: Commands,
    name: str,
    handler: Handler,
    *,
    codes: str,
    parents: tuple[argparse.ArgumentParser, ...] = (),
    words: Mapping[str, object] | None = None,
) -> argparse.ArgumentParser:
    """One command, its help read from its handler's docstring (:func:`help_of`), its exit
    codes as the epilog. ``words`` fill the docstring's ``{placeholders}`` (a pinned
    version, a threshold), so the help says the value the code uses."""
    summary, description = help_of(handler, words)
    # `crashloop --help` lists the commands under headings (helptext.command_listing,
    # from COMMAND_SUMMARIES); argparse's flat listing is hidden with the COMMAND
    # positional, while help= keeps each command known to shell completion.
    parser = commands.add_parser(
        name,
        parents=list(parents),
        help=summary,
        description=description,
        epilog=example_epilog(name, codes),
        formatter_class=WrappingFormatter,
    )
    COMMAND_SUMMARIES[name] = summary
    parser.set_defaults(handler=handler)
    return parser


# command -> its one-line help, as the commands register (the same every time).
COMMAND_SUMMARIES: Final[dict[str, str]] = {}


def help_of(handler: Handler, words: Mapping[str, object] | None = None) -> tuple[str, str]:
    """A command's one-line help and its description, from its handler's docstring.

    The docstring's first paragraph is the one line ``crashloop --help`` lists, the
    paragraphs after it what ``crashloop COMMAND --help`` says the command does; each
    paragraph's lines are joined, as the help was written before it moved beside the
    handler.
    """
    text = inspect.getdoc(handler)
    if text is None and sys.flags.optimize >= 2:
        # python -OO (PYTHONOPTIMIZE=2) strips every docstring: the commands still run,
        # their help is blank.
        return "", ""
    if not text or "\n\n" not in text:
        raise TypeError(
            f"{handler.__qualname__} needs a docstring: a one-line help, a blank line, and "
            "what the command does"
        )
    if words is not None:
        text = text.format(**words)
    paragraphs = [" ".join(paragraph.split()) for paragraph in text.split("\n\n")]
    return paragraphs[0], "\n\n".join(paragraphs[1:])


def _spec_options(*, image: bool) -> argparse.ArgumentParser:
    """--config (and --image): every command that touches the cluster takes them."""
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("--config", default=DEFAULT_SPEC_NAME, help=CONFIG_HELP)
    kubernetes_option(options)
    if image:
        options.add_argument("--image", help="node image to use (must exist locally)")
    return options


def output_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--output",
        "-o",
        choices=FORMATS,
        default="text",
        help="json or yaml: one document on stdout (the summary and its run directory), "
        "tables on stderr",
    )


def kubernetes_option(parser: argparse.ArgumentParser) -> None:
    pinned = ", ".join(pin.minor for pin in pins.KUBERNETES.values())
    parser.add_argument(
        "--kubernetes",
        default=pins.DEFAULT_KUBERNETES.minor,
        metavar="VERSION",
        help=f"Kubernetes release of the nodes: {pinned} (default "
        f"{pins.DEFAULT_KUBERNETES.minor}); another than the default gets a cluster of its own, "
        "named after it",
    )


# --kubeconfig given without a path: kubectl's own kubeconfig, resolved once parsed.
KUBECTL_DEFAULT: Final = "<kubectl's>"


def resolve_kubeconfig(args: argparse.Namespace) -> None:
    """kubectl's rule: --kubeconfig PATH, else $KUBECONFIG, else ~/.kube/config, whenever
    the options name an existing cluster (--kubeconfig alone, --context, --nodes or
    --node-selector); a path given is kept as given (a list included). In a pod, where
    no cluster of the harness's own can be made, the cluster it runs in is the one meant
    (its ServiceAccount, as client-go takes it in a pod)."""
    if not hasattr(args, "kubeconfig"):
        return
    given = args.kubeconfig
    names_existing = any(
        getattr(args, option, None) for option in ("context", "nodes", "node_selector")
    )
    if given == KUBECTL_DEFAULT or (given is None and (names_existing or in_a_pod())):
        args.kubeconfig = str(kubectl_default_kubeconfig())


def existing_cluster_options(parser: argparse.ArgumentParser) -> None:
    existing = parser.add_argument_group(
        "an existing cluster (no docker, no kind: the kubeconfig's credentials alone)"
    )
    existing.add_argument(
        "--kubeconfig",
        metavar="PATH",
        nargs="?",
        const=KUBECTL_DEFAULT,
        help="measure the kubelets of the cluster this kubeconfig reaches instead of the "
        "harness's own; each selected node is judged against its own live /configz. A "
        "colon-separated list is merged as kubectl merges $KUBECONFIG; --kubeconfig alone, or "
        "--context, --nodes or --node-selector without it, reads kubectl's own ($KUBECONFIG, "
        "else ~/.kube/config)",
    )
    existing.add_argument(
        "--context", help="the kubeconfig context (default: its current one, as kubectl's)"
    )
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
        help="run in this prepared namespace "
        "(harness/crashloop_harness/resources/rbac/crashloop-check.yaml); "
        "default: create one and delete it afterwards",
    )


def observer_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--observer",
        choices=OBSERVERS,
        default="events",
        help="events (default): one reader per node on the runtime's event stream; poll: list "
        "and inspect every node twice a second through `docker exec` (runtimes without an "
        "event stream, and to compare the two)",
    )


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return value


def seconds(text: str) -> float:
    """A duration as every other duration here is written ("90s", "2m"), or bare seconds;
    a window of no time (or less, or not a number) is refused."""
    try:
        value = float(text)
    except ValueError:
        try:
            value = parse_duration(text).total_seconds()
        except DurationError as error:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a duration: write it as Go does (90s, 2m, 1m30s) or in seconds"
            ) from error
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a duration must be more than 0, such as 90s")
    return value


def positive_number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number above 0")
    return value


def spec_of(args: argparse.Namespace) -> ClusterSpec:
    """The cluster spec of --config for the --kubernetes release (refused before anything runs)."""
    return load_cluster_spec(spec_path(args.config), check_kubernetes_version(args.kubernetes))


def existing_cluster(args: argparse.Namespace) -> RemoteCluster:
    """The existing cluster the options name, its nodes chosen and Ready; nothing created."""
    return connect(
        Path(args.kubeconfig),
        context=args.context,
        nodes=[n.strip() for n in (args.nodes or "").split(",") if n.strip()],
        selector=args.node_selector,
        workload_image=args.workload_image or image_tag(),
        namespace=args.namespace,
    )


def target(args: argparse.Namespace) -> RunTarget:
    """The existing cluster the options name, else the harness's own (made or reused)."""
    if args.kubeconfig:
        return existing_cluster(args)
    if args.nodes or args.node_selector or args.context or args.namespace or args.workload_image:
        raise HarnessError(
            "--nodes, --node-selector, --namespace and --workload-image choose an existing "
            "cluster's nodes and image, and need --kubeconfig, --context, --nodes or "
            "--node-selector",
            "add --kubeconfig PATH (or --kubeconfig alone for kubectl's), or leave them out to "
            "measure the harness's own cluster",
        )
    return lifecycle.up(spec_of(args), progress, image=args.image)


def no_cluster_hint(spec: ClusterSpec, args: argparse.Namespace) -> str:
    """How to bring up the cluster of ``spec``: `crashloop up`, with --kubernetes if needed."""
    flag = "" if spec.kubernetes == pins.DEFAULT_KUBERNETES else f" --kubernetes {args.kubernetes}"
    return f"run `crashloop up{flag}`"
