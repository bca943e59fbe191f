"""What each `crashloop` command's --help says beyond its one line: what it does, exit codes.

Kept apart from the argument definitions (:mod:`harness.cli.args`) so the
prose can be read and reviewed as prose.
"""

from __future__ import annotations

import argparse
from typing import Final

from harness.model.overhead import REPEAT_WITHIN

# What a run's exit code means; the same for every command that measures.
MEASURING_CODES: Final = """exit codes:
  0    every verdict passed
  1    a verdict failed: the run directory (runs/latest) has the summary, plots and evidence
  2    bad input, or set-up failed before anything was measured (the message names the fix)
  130  interrupted (Ctrl-C, SIGTERM, SIGHUP): what was measured is judged and kept"""

OVERHEAD_CODES: Final = """exit codes:
  0    every cell measured: overhead.json, the table, plots and report in the run directory
  2    bad input (refused before anything is created), or set-up failed
  130  interrupted: the cells measured so far are written
  (a cell that cannot be measured stops the sweep with 2; the cells before it are kept)"""

COMPARE_CODES: Final = f"""exit codes:
  0    every talk figure of the second run is within {REPEAT_WITHIN:.0%} of the first's
  1    a figure as measured moved more than that (even one the machine's pace explains),
       one run did not measure it, or either read it over a window short of the cap or
       among the kubelet's onset events
  2    a path that is not a sweep's run directory or overhead.json"""

SETUP_CODES: Final = """exit codes:
  0    done
  2    bad input or a set-up error (the message names the fix)
  130  interrupted"""

STATUS_CODES: Final = """exit codes:
  0    the cluster is up and every kubelet runs its profile's backoff config
  2    no such cluster, the engine is down, or a kubelet's live config differs from its profile"""

ENVIRONMENT: Final = """environment:
  CRASHLOOP_RUNS_DIR       where run directories go (default ./runs; --runs-dir sets it)
  CRASHLOOP_STATE_DIR      kubeconfigs, kind configs and patches (default
                           $XDG_STATE_HOME/crashloop-harness or ~/.local/state/crashloop-harness)
  CRASHLOOP_CACHE_DIR      build caches: Go, kind, node image parts (default
                           $XDG_CACHE_HOME/crashloop-harness or ~/.cache/crashloop-harness)
  CRASHLOOP_TIMEOUT_SCALE  multiply every timeout (a slow machine: 2)
  CRASHLOOP_DEBIAN_MIRROR  Debian mirror for the offline node image's rootfs"""

# name -> (what it does, in a few sentences; which exit codes apply)
DESCRIPTIONS: Final[dict[str, tuple[str, str]]] = {
    "engine": (
        "Find a running Docker engine, or install (apt) and start one. On hosts that cannot "
        "grant every capability a kind node asks for, a runc wrapper becomes the default "
        "runtime.",
        SETUP_CODES,
    ),
    "kind": ("Print the path of the pinned kind, built from its Go module if needed.", SETUP_CODES),
    "node-image": (
        "Choose the node image of a pinned Kubernetes release: kind's official image when it "
        "can be pulled, else an offline build from Debian packages and Go modules (about 18 "
        "minutes from empty caches, nothing when its inputs did not change).",
        SETUP_CODES,
    ),
    "up": (
        "Create the cluster of a spec (a control plane, one worker per kubelet profile), or "
        "reuse a running one made from the same spec; repair one whose containers stopped. "
        "Waits until every node is Ready and checks each kubelet's live config.",
        SETUP_CODES,
    ),
    "status": (
        "Show the cluster's nodes, its system pods and each kubelet's live backoff config "
        "(from /configz) against its profile.",
        STATUS_CODES,
    ),
    "down": ("Delete the cluster.", SETUP_CODES),
    "config": (
        "Print what the harness applies, without creating anything: the kind cluster config "
        "and each worker's KubeletConfiguration patch, the recipe to copy to your own nodes.",
        SETUP_CODES,
    ),
    "kubeconfig": (
        "Print the path of the cluster's kubeconfig, for `export KUBECONFIG=$(crashloop "
        "kubeconfig)` and a second pane with kubectl.",
        STATUS_CODES,
    ),
    "rbac": (
        "Print the namespace, ServiceAccount and roles `crashloop check --kubeconfig` needs on "
        "an existing cluster: nodes and their kubelets' /configz and /metrics read, pods in "
        "its own namespace; nothing cluster-wide that writes. Apply it as an admin.",
        SETUP_CODES,
    ),
    "manifests": (
        "Write the talk's workloads as YAML, generated from the code the harness deploys, to "
        "replay by hand with kubectl.",
        SETUP_CODES,
    ),
    "workload-image": (
        "Build the workload image, load it into every node and link the cluster's kubectl.",
        SETUP_CODES,
    ),
    "check": (
        "The conformance check: a bare crashing container on every worker, each restart "
        "recorded from the container runtime, judged against the curve the worker's live "
        "kubelet config gives. A restart not seen, a level not confirmed or an observation "
        "cut short fails the check. With --kubeconfig, the nodes of an existing cluster "
        "instead, through the API alone: each attempt's times from the workload's own report "
        "in the pod status, each node against its own live config.",
        MEASURING_CODES,
    ),
    "scenarios": (
        "The scenarios (the talk's three, a StatefulSet held back by a crash-looping ordinal, "
        "a liveness-probe kill loop, KEP-5307 restart rules, KEP-5532 RestartAllContainers) "
        "on every worker, one scenario at a time, each with its headline number against the "
        "model. With --kubeconfig, on the nodes of an existing cluster, each against its own "
        "live config, recorded from the API alone (all but restart-all, which reads the "
        "node's files).",
        MEASURING_CODES,
    ),
    "conformance": (
        "The nightly job: the full check, then every scenario, plots and a report.",
        MEASURING_CODES,
    ),
    "flakiness": (
        "Run the check many times in a row on one cluster (or pool finished runs): the pass "
        "count and the spread of the overshoot.",
        MEASURING_CODES,
    ),
    "overhead": (
        "The talk's cost analysis: for each worker and pod count, N crash-looping pods on that "
        "worker alone (and N running pods as the baseline); the kubelet's and the runtime's "
        "CPU, the kubelet's memory and API request rate, restarts achieved against the curve. "
        "Each cell starts once every worker's runtime is rid of the cells before it; its "
        "window opens once the pods are at their cap and the kubelet's onset events are sent. "
        "overhead.json, a table, plots and a report.",
        OVERHEAD_CODES,
    ),
    "overhead-compare": (
        "Set two finished overhead sweeps side by side: each talk figure (crashing / running "
        "kubelet CPU, peak API requests) from both runs and how far apart they are. Peaks are "
        "recomputed from the runs' request series; a run that kept none is compared on its "
        "busiest single sample interval. The machine's pace comes first (what the same "
        "running pods cost the kubelet in each run), and beside each figure what the pace "
        "predicts of it: a worker off its curve restarts as fast as the machine lets it, so "
        "its figures move by the pace's inverse.",
        COMPARE_CODES,
    ),
    "matrix": (
        "The check on each pinned Kubernetes release in turn, each on a cluster of its own; "
        "matrix.json, a table, a plot and the behaviour changes between neighbouring releases. "
        "With --from, line up quick or full check runs already made.",
        MEASURING_CODES,
    ),
    "demo": (
        "The talk's demo: set up, watch every worker restart its crashing container live, "
        "then plots and a report.",
        MEASURING_CODES,
    ),
    "completion": (
        "Print a shell completion script: `crashloop completion bash > "
        "/etc/bash_completion.d/crashloop`, or `source <(crashloop completion bash)`.",
        SETUP_CODES,
    ),
}


def describe(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Give every subcommand its description and exit codes (a test checks none is missing)."""
    for name, parser in commands.choices.items():
        details, codes = DESCRIPTIONS[name]
        parser.description = details
        parser.epilog = codes
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
