"""`crashloop demo`: the talk's demo, live or replayed from a recorded run."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Final

from rich.console import Console

from crashloop_harness.cli import common
from crashloop_harness.cli.codes import MEASURING_CODES
from crashloop_harness.cluster.target import NODE_ACCESS
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.resources import RESOURCES
from crashloop_harness.live.demo import (
    DEFAULT_DURATION_S,
    MAX_DURATION_S,
    DemoOptions,
    run_demo,
    run_replay,
)
from crashloop_harness.live.view import THEMES
from crashloop_harness.runs.scenarioplan import plan_scenarios
from crashloop_harness.scenarios import REGISTRY, SCENARIOS, TALK_SCENARIOS

# --replay alone: the recording the package ships (scripts/keep-demo.py keeps a new one).
SHIPPED_DEMO: Final = "<shipped>"
SHIPPED_DEMO_DIR: Final = RESOURCES / "demo"


# A scenario that restarts the workers' kubelets would wipe the curve the demo shows beside it.
_BESIDE_THE_CURVE = tuple(name for name in SCENARIOS if not REGISTRY[name].restarts_kubelets)


def register(commands: common.Commands, parents: common.Parents) -> None:
    demo = common.add_command(
        commands, "demo", _cmd_demo, codes=MEASURING_CODES, parents=(parents.spec_and_image,)
    )
    demo.add_argument(
        "--duration",
        type=common.seconds,
        default=DEFAULT_DURATION_S,
        help=f"observation window, e.g. 3m or 180 (seconds; default {DEFAULT_DURATION_S:g}s, "
        f"at most {MAX_DURATION_S:g}s)",
    )
    demo.add_argument(
        "--scenarios",
        nargs="*",
        choices=_BESIDE_THE_CURVE,
        default=list(TALK_SCENARIOS),
        metavar="NAME",
        help=f"scenarios to run beside the bare curve, of {', '.join(_BESIDE_THE_CURVE)} "
        f"(default: the talk's three, {', '.join(TALK_SCENARIOS)}; `--scenarios` with no name: "
        "only the curve)",
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
        nargs="?",
        const=SHIPPED_DEMO,
        help="no cluster, no engine, no network: show a recorded demo through the same live "
        "view, then the same takeaways; alone, the recording the package ships (a real "
        "v1.35.8 run), or a run directory (runs/<id>-check-demo-*)",
    )
    demo.add_argument(
        "--speed",
        type=common.positive_number,
        default=1.0,
        help="with --replay: how many times faster than it happened (default 1)",
    )
    demo.add_argument(
        "--wait-for-enter",
        action="store_true",
        help="set everything up, say ready, and start the live window when Enter is pressed",
    )


def _cmd_demo(args: argparse.Namespace) -> int:
    """the talk's demo: set up, observe live, plot, report

    The talk's demo: set up, watch every worker restart its crashing container live, then plots and
    a report.
    """
    console = Console(force_terminal=False) if args.plain else Console()
    if args.replay:
        return run_replay(
            SHIPPED_DEMO_DIR if args.replay == SHIPPED_DEMO else Path(args.replay),
            speed=args.speed,
            console=console,
            plain=args.plain,
            theme=args.theme,
        )
    spec = common.spec_of(args)
    # The demo runs on the harness's own cluster, whose nodes it reads.
    plan = plan_scenarios(args.scenarios, capabilities=NODE_ACCESS, release=spec.kubernetes.version)
    if not 30 <= args.duration <= MAX_DURATION_S:
        raise HarnessError(
            f"--duration {args.duration:g}s is outside 30..{MAX_DURATION_S:g}s",
            f"give a duration between 30s and {MAX_DURATION_S:g}s, e.g. --duration 3m",
        )
    options = DemoOptions(
        spec=spec,
        duration_s=args.duration,
        keep_cluster=not args.down,
        scenarios=plan.names,
        plain=args.plain,
        image=args.image,
        wait_for_enter=args.wait_for_enter,
        theme=args.theme,
    )
    return run_demo(options, console)
