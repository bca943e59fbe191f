"""`crashloop cronjob`: the nightly check as a CronJob the cluster runs, with its role."""

from __future__ import annotations

import argparse
import sys

import yaml

from crashloop_harness.cli import common
from crashloop_harness.cli.codes import SETUP_CODES
from crashloop_harness.cluster.rbac import rbac_yaml
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.fleet.expect import parse_expectation
from crashloop_harness.pods.nightly import (
    NightlySpec,
    configmap_problem,
    cronjob,
    schedule_problem,
    selector_problem,
)
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES
from crashloop_harness.substrate.harnessimage import stable_tag
from crashloop_harness.substrate.workloadimage import STABLE_TAG as WORKLOAD_TAG


def add_cronjob(commands: common.Commands) -> None:
    cronjob = common.add_command(commands, "cronjob", _cmd_cronjob, codes=SETUP_CODES)
    cronjob.add_argument(
        "--node-selector",
        metavar="SELECTOR",
        help="the nodes each night's check measures, by label: key or key=value, "
        "comma-separated (all must match)",
    )
    cronjob.add_argument(
        "--per-group",
        type=common.positive_int,
        metavar="K",
        help="instead of --node-selector: each night, the fleet's plan over this cluster "
        "(every node grouped by its live curve, K nodes of each group checked)",
    )
    cronjob.add_argument(
        "--expect",
        action="append",
        default=[],
        metavar="LABEL[=VALUE]:max=D[,initial=D]",
        help="with --per-group: the back-off the nodes one label selects should run "
        "(repeatable, as `crashloop fleet --expect`)",
    )
    cronjob.add_argument(
        "--image",
        default=stable_tag(),
        help="the harness's image as the cluster pulls it (default %(default)s, what "
        "`crashloop harness-image` loads into the harness's kind cluster)",
    )
    cronjob.add_argument(
        "--workload-image",
        metavar="REF",
        default=WORKLOAD_TAG,
        help="the workload's image as the nodes pull it (default %(default)s: "
        "`crashloop workload-image --oci-archive` writes it for your registry)",
    )
    cronjob.add_argument(
        "--schedule",
        default=NightlySpec.schedule,
        help="when, in cron's words (default %(default)s)",
    )
    cronjob.add_argument(
        "--profile",
        choices=sorted(CHECK_PROFILES),
        default=NightlySpec.profile,
        help="the check's profile (default %(default)s)",
    )
    cronjob.add_argument(
        "--kubelet-ca-configmap",
        metavar="NAME",
        help="a ConfigMap in the check's namespace whose ca.crt holds the kubelets' serving "
        "CAs, for kubelets that sign their own certificate (kubeadm's and kind's "
        "/var/lib/kubelet/pki/kubelet.crt); default: the cluster's CA alone",
    )
    cronjob.add_argument(
        "--node-proxy",
        action="store_true",
        help="grant nodes/proxy too, for kubelets that refuse a direct read (the whole "
        "kubelet API: see docs/nightly.md)",
    )


def _cmd_cronjob(args: argparse.Namespace) -> int:
    """print the nightly check as a CronJob the cluster runs, with its role (YAML)

    Print what `crashloop rbac` prints and a CronJob that runs `crashloop check` in the
    cluster, as its ServiceAccount, on the nodes the selector names: no kubeconfig, no
    credentials of its own. The Job's exit status is the verdict (0 passed, 1 a kubelet
    failed, 4 no answer) and its log's last line says why. Apply it as an admin.
    """
    if (args.node_selector is None) == (args.per_group is None):
        raise HarnessError(
            "which nodes each night? name them one way: --node-selector or --per-group",
            "--node-selector KEY[=VALUE] for a check of those nodes, or --per-group K for the "
            "fleet's plan over every node pool",
        )
    if args.expect and args.per_group is None:
        raise HarnessError(
            "--expect judges the fleet's plan, and --per-group was not given",
            "add --per-group K, or leave out --expect",
        )
    for expected in args.expect:
        parse_expectation(expected)  # a mistyped expectation is refused here, not at night
    problem = None if args.node_selector is None else selector_problem(args.node_selector)
    if problem is not None:
        raise HarnessError(
            f"--node-selector {args.node_selector!r}: {problem}",
            "write it as key or key=value, comma-separated, such as crashloop.harness/profile",
        )
    if args.kubelet_ca_configmap is not None:
        problem = configmap_problem(args.kubelet_ca_configmap)
        if problem is not None:
            raise HarnessError(
                f"--kubelet-ca-configmap: {problem}",
                "name the ConfigMap as it is in the check's namespace, such as kubelet-cas",
            )
    problem = schedule_problem(args.schedule)
    if problem is not None:
        raise HarnessError(
            f"--schedule: {problem}", "write it as cron does, such as '0 3 * * *' or @daily"
        )
    spec = NightlySpec(
        image=args.image,
        workload_image=args.workload_image,
        node_selector=args.node_selector or "",
        schedule=args.schedule,
        profile=args.profile,
        kubelet_ca_configmap=args.kubelet_ca_configmap,
        node_proxy=args.node_proxy,
        per_group=args.per_group,
        expect=tuple(args.expect),
    )
    sys.stdout.write(rbac_yaml(node_proxy=spec.node_proxy))
    sys.stdout.write("---\n")
    sys.stdout.write(yaml.safe_dump(cronjob(spec), sort_keys=False))
    return 0
