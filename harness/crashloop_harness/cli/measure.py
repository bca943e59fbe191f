"""`crashloop check | scenarios | conformance`: one measured run each (or a few), judged."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from kubernetes import client
from rich.text import Text

from crashloop_harness.cli import common
from crashloop_harness.cli.codes import CHECK_CODES, MEASURING_CODES, verdict_exit
from crashloop_harness.cli.out import SCREEN, emit
from crashloop_harness.cluster import lifecycle
from crashloop_harness.cluster.kubeletapi import access_line
from crashloop_harness.cluster.target import API_ONLY, NODE_ACCESS, RunTarget
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.exitcodes import INTERRUPTED
from crashloop_harness.outputs.clusterresults import RUNS_KEPT, keep_results
from crashloop_harness.outputs.explain import explain
from crashloop_harness.outputs.jobsummary import write_job_summary
from crashloop_harness.outputs.render import verdict_table
from crashloop_harness.outputs.report import write_report
from crashloop_harness.outputs.summary import RunSummary
from crashloop_harness.outputs.summaryview import summary_view
from crashloop_harness.recording.recorder import Observer
from crashloop_harness.runs.check import CheckResult, run_check
from crashloop_harness.runs.checkprofiles import CHECK_PROFILES
from crashloop_harness.runs.lifecycle import point_latest_at
from crashloop_harness.runs.scenarioplan import ScenarioPlan, plan_scenarios, run_one_at_a_time
from crashloop_harness.runs.scenarios import ScenarioRun
from crashloop_harness.scenarios import (
    REGISTRY,
    SCENARIOS,
    STATEFULSET_ORDINAL,
    sized_registry,
)
from crashloop_harness.scenarios.common import Scenario
from crashloop_harness.scenarios.headline import headline_metrics
from crashloop_harness.scenarios.statefulset_ordinal import DEFAULT_FAIL_TIMES
from crashloop_harness.verdict.coverage import uncovered

_RESTARTING = tuple(name for name, s in REGISTRY.items() if s.restarts_kubelets)
_NODE_FILES = tuple(n for n, s in REGISTRY.items() if s.reads_node_files and n not in _RESTARTING)


def register(commands: common.Commands, parents: common.Parents) -> None:
    _add_check(commands, parents)
    _add_scenarios(commands, parents)
    _add_conformance(commands, parents)


def _add_check(commands: common.Commands, parents: common.Parents) -> None:
    check = common.add_command(
        commands, "check", _cmd_check, codes=CHECK_CODES, parents=(parents.spec_and_image,)
    )
    profile_option(check, "quick")
    common.observer_option(check)
    common.output_option(check)
    common.existing_cluster_options(check)
    check.add_argument(
        "--keep-in-cluster",
        action="store_true",
        help="with --namespace: also keep summary.json and junit.xml in a ConfigMap there "
        f"(the newest {RUNS_KEPT} kept) and a Warning Event on each node that did not pass, "
        "as the nightly CronJob does (`crashloop cronjob`)",
    )


def _add_scenarios(commands: common.Commands, parents: common.Parents) -> None:
    scenarios = common.add_command(
        commands,
        "scenarios",
        _cmd_scenarios,
        codes=MEASURING_CODES,
        parents=(parents.spec_and_image,),
    )
    scenarios.add_argument(
        "--scenarios",
        nargs="+",
        choices=SCENARIOS,
        default=None,
        metavar="NAME",
        help=f"which, of {', '.join(SCENARIOS)} (default: all but {', '.join(_RESTARTING)}, "
        "which restarts the workers' kubelets, and "
        f"{', '.join(n for n, s in REGISTRY.items() if s.only_when_named)}, which needs the "
        "crashloop-pids cluster: each runs only when named; with --kubeconfig not "
        f"{', '.join(_NODE_FILES)} either, which needs the node's files)",
    )
    scenarios.add_argument(
        "--ordinal-failures",
        type=common.positive_int,
        default=None,
        metavar="K",
        help=f"{STATEFULSET_ORDINAL}: how many times ordinal 1 fails before it runs "
        f"(default {DEFAULT_FAIL_TIMES})",
    )
    common.output_option(scenarios)
    common.existing_cluster_options(scenarios)


def _add_conformance(commands: common.Commands, parents: common.Parents) -> None:
    conformance = common.add_command(
        commands,
        "conformance",
        _cmd_conformance,
        codes=CHECK_CODES,
        parents=(parents.spec_and_image,),
    )
    conformance.add_argument("--profile", choices=sorted(CHECK_PROFILES), default="full")
    common.output_option(conformance)


def profile_option(parser: argparse.ArgumentParser, default: str) -> None:
    parser.add_argument(
        "--profile",
        choices=sorted(CHECK_PROFILES),
        default=default,
        help="quick: a few minutes; full: about 11 minutes, every curve at its cap",
    )


def _cmd_check(args: argparse.Namespace) -> int:
    """measure every worker's restarts and check them against the curve

    The conformance check: a bare crashing container on every worker, each restart recorded from the
    container runtime, judged against the curve the worker's live kubelet config gives. A restart
    not seen, a level not confirmed or an observation cut short fails the check. With --kubeconfig,
    the nodes of an existing cluster instead, through the API alone: each attempt's times from the
    workload's own report in the pod status, each node against its own live config.
    """
    if args.keep_in_cluster and not (args.kubeconfig and args.namespace):
        raise HarnessError(
            "--keep-in-cluster keeps the results in the check's prepared namespace of an "
            "existing cluster",
            "add --namespace NAMESPACE (the role's: `crashloop rbac`) and the cluster's "
            "--kubeconfig or --node-selector",
        )
    target = common.target(args)
    result, summary = run_and_report_check(target, args.profile, args.observer)
    report = write_report(result.run_dir, summary, result.attempts)
    write_job_summary(summary, result.run_dir)
    SCREEN.tables.print(f"results in {result.run_dir}; report: {report}")
    if args.keep_in_cluster:
        _keep_in_cluster(target, args.namespace, result.run_dir, summary)
    # The last line is the verdict's: a log reader (a CronJob's) finds it there.
    SCREEN.tables.print(verdict_line(summary), soft_wrap=True)
    emit(
        {
            "run_dir": str(result.run_dir),
            "report": str(report),
            "summary": json.loads(summary.to_json()),
        }
    )
    return verdict_exit(result.status, summary.passed)


def _keep_in_cluster(target: RunTarget, namespace: str, run_dir: Path, summary: RunSummary) -> None:
    """The run's results kept in the cluster, or why not. A refusal is said and changes no
    verdict: the run is measured and judged, and its exit code is the kubelets' answer."""
    try:
        kept = keep_results(target.api(), namespace, run_dir, summary)
    except client.ApiException as error:
        SCREEN.tables.print(
            f"results not kept in the cluster: the API server answered {error.status} "
            f"{error.reason}: {str(error.body)[:300]} (the role: `crashloop rbac`)",
            soft_wrap=True,
        )
        return
    SCREEN.tables.print(f"kept in the cluster: configmap {namespace}/{kept}")


def verdict_line(summary: RunSummary) -> str:
    return f"{summary.status.upper()}: {summary.reason or 'every worker on its curve'}"


def run_and_report_check(
    up: RunTarget, profile_name: str, observer: Observer = "events"
) -> tuple[CheckResult, RunSummary]:
    """One check on ``up``, its progress, tables and verdict on the screen."""
    profile = CHECK_PROFILES[profile_name]
    seen: dict[str, int] = {}

    def on_sample(result: CheckResult) -> None:
        counts = {worker: len(records) for worker, records in result.attempts.items()}
        if counts != seen:
            seen.clear()
            seen.update(counts)
            common.progress("attempts: " + ", ".join(f"{w} {n}" for w, n in sorted(counts.items())))

    common.progress(f"check {profile.name}: at most {profile.timeout_s:.0f}s")
    result = run_check(up, profile, common.progress, on_sample=on_sample, observer=observer)
    out = SCREEN.tables
    for worker, verdict in result.verdicts.items():
        out.print(verdict_table(verdict, result.curves[worker]))
    summary = result.written_summary()
    out.print(summary_view(summary))
    if summary.observer is not None:
        out.print(summary.observer.headline(), soft_wrap=True)
    if summary.cluster.kubelet_access:
        out.print(access_line(summary.cluster.kubelet_access), soft_wrap=True)
    out.print(verdict_line(summary), soft_wrap=True)
    if summary.passed:
        # A pass says what it did not check.
        for line in uncovered({w.worker: w.coverage for w in summary.workers}):
            out.print(f"  not covered by this pass: {line}", soft_wrap=True)
    if summary.passed and summary.recorder_notes:
        # A pass's reason carries no failure; what the recorder met is still worth a look.
        out.print(
            f"recorder notes: {len(summary.recorder_notes)} (summary.json recorder_notes), "
            f"the first: {summary.recorder_notes[0]}",
            soft_wrap=True,
        )
    if not summary.passed:
        out.print(Text(explain(summary), style="bold red"))
    return result, summary


def _one_at_a_time(
    up: RunTarget, names: Sequence[str], catalog: Mapping[str, Scenario] = REGISTRY
) -> list[ScenarioRun]:
    """Each scenario in a run of its own, each worker's outcome on the screen as it ends."""

    def show(run: ScenarioRun) -> None:
        for name, by_worker in run.results.items():
            for result in by_worker.values():
                state = "ok" if result.passed else "FAIL: " + "; ".join(result.failures[:2])
                SCREEN.tables.print(f"{name} on {result.worker}: {state}")

    return run_one_at_a_time(up, names, common.progress, catalog=catalog, on_run=show)


def _cmd_scenarios(args: argparse.Namespace) -> int:
    """measure the scenarios on every worker, one scenario at a time

    The scenarios (the talk's three, a StatefulSet held back by a crash-looping ordinal, a
    liveness-probe kill loop, KEP-5307 restart rules, KEP-5532 RestartAllContainers; and, only when
    named, a kubelet restarted under an app beside a sidecar) on every worker, one scenario at a
    time, each with its headline number against the model. With --kubeconfig, on the nodes of an
    existing cluster, each against its own live config, recorded from the API alone (all but
    restart-all, which reads the node's files, and the kubelet restart).
    """
    catalog = sized_registry(ordinal_failures=args.ordinal_failures)
    # Planned before the cluster is reached, so that a refusal comes first: an existing
    # cluster (--kubeconfig) is read through its API alone, its release known only then.
    plan = plan_scenarios(
        args.scenarios,
        capabilities=API_ONLY if args.kubeconfig else NODE_ACCESS,
        release=None if args.kubeconfig else common.spec_of(args).kubernetes.version,
        catalog=catalog,
    )
    names = _said(plan)
    runs = _one_at_a_time(common.target(args), names, catalog)
    for run in runs:
        SCREEN.tables.print(f"{', '.join(run.scenarios)}: {run.status} ({run.run_dir})")
    emit({"runs": [_scenario_run_document(run) for run in runs]})
    if any(run.status == "interrupted" for run in runs):
        return INTERRUPTED
    return 0 if all(run.passed for run in runs) else 1


def _said(plan: ScenarioPlan) -> list[str]:
    """The plan's scenarios, once it said which it left out and why."""
    for line in plan.left_out:
        common.progress(line)
    return list(plan.names)


def _scenario_run_document(run: ScenarioRun) -> dict[str, object]:
    return {
        "scenarios": list(run.scenarios),
        "status": run.status,
        "run_dir": str(run.run_dir),
        "summary": json.loads(run.written_summary().to_json()),
    }


def _cmd_conformance(args: argparse.Namespace) -> int:
    """the nightly job: full check, every scenario, plots and a report

    The nightly job: the full check, then every scenario, plots and a report.
    """
    spec = common.spec_of(args)
    up = lifecycle.up(spec, common.progress, image=args.image)
    result, summary = run_and_report_check(up, args.profile)
    write_job_summary(summary, result.run_dir)
    plan = plan_scenarios(None, capabilities=up.capabilities, release=spec.kubernetes.version)
    runs = _one_at_a_time(up, _said(plan))
    metrics = [metric for run in runs for metric in headline_metrics(run.results)]
    report = write_report(result.run_dir, summary, result.attempts, metrics)
    SCREEN.tables.print(f"report: {report}")
    point_latest_at(result.run_dir)  # the conformance report, not its last scenario
    for run in runs:
        SCREEN.tables.print(f"{', '.join(run.scenarios)}: {run.status} ({run.run_dir})")
    emit(
        {
            "run_dir": str(result.run_dir),
            "summary": json.loads(summary.to_json()),
            "report": str(report),
            "scenarios": [_scenario_run_document(run) for run in runs],
        }
    )
    if result.status == "interrupted" or any(run.status == "interrupted" for run in runs):
        return INTERRUPTED
    if summary.passed and all(run.passed for run in runs):
        return 0
    # An error (no answer) only when nothing failed: a failure pages whatever else errored.
    statuses = {result.status, *(run.status for run in runs)} - {"passed"}
    return verdict_exit("error", passed=False) if statuses == {"error"} else 1
