"""`crashloop check | scenarios | conformance`: one measured run each (or a few), judged."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence

from rich.text import Text

from crashloop_harness.cli import common
from crashloop_harness.cli.codes import MEASURING_CODES
from crashloop_harness.cli.out import SCREEN, emit
from crashloop_harness.cluster import lifecycle
from crashloop_harness.cluster.target import RunTarget
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.model.releases import release_of
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
from crashloop_harness.runs.scenarios import ScenarioRun, run_scenarios
from crashloop_harness.scenarios import (
    FIRST_MINOR,
    NODE_FILE_SCENARIOS,
    REGISTRY,
    SCENARIOS,
    STATEFULSET_ORDINAL,
    scenarios_for,
    sized_registry,
)
from crashloop_harness.scenarios.common import Scenario
from crashloop_harness.scenarios.headline import headline_metrics
from crashloop_harness.scenarios.statefulset_ordinal import DEFAULT_FAIL_TIMES
from crashloop_harness.verdict.coverage import uncovered


def register(commands: common.Commands, parents: common.Parents) -> None:
    _add_check(commands, parents)
    _add_scenarios(commands, parents)
    _add_conformance(commands, parents)


def _add_check(commands: common.Commands, parents: common.Parents) -> None:
    check = common.add_command(
        commands, "check", _cmd_check, codes=MEASURING_CODES, parents=(parents.spec_and_image,)
    )
    profile_option(check, "quick")
    common.observer_option(check)
    common.output_option(check)
    common.existing_cluster_options(check)


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
        help=f"which, of {', '.join(SCENARIOS)} (default: all; with --kubeconfig all but "
        f"{', '.join(NODE_FILE_SCENARIOS)}, which needs the node's files)",
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
        codes=MEASURING_CODES,
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
    result, summary = run_and_report_check(common.target(args), args.profile, args.observer)
    report = write_report(result.run_dir, summary, result.attempts)
    write_job_summary(summary, result.run_dir)
    SCREEN.tables.print(f"results in {result.run_dir}; report: {report}")
    emit(
        {
            "run_dir": str(result.run_dir),
            "report": str(report),
            "summary": json.loads(summary.to_json()),
        }
    )
    if result.status == "interrupted":
        return 130
    return 0 if summary.passed else 1


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
    out.print(f"{summary.status.upper()}: {summary.reason or 'every worker on its curve'}")
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


def run_scenarios_one_by_one(
    up: RunTarget, names: Sequence[str], catalog: Mapping[str, Scenario] = REGISTRY
) -> list[ScenarioRun]:
    """Each scenario on its own: together they load two cores past the verdict's tolerance."""
    runs = []
    for name in names:
        run = run_scenarios(up, common.progress, [name], catalog=catalog)
        for by_worker in run.results.values():
            for result in by_worker.values():
                state = "ok" if result.passed else "FAIL: " + "; ".join(result.failures[:2])
                SCREEN.tables.print(f"{name} on {result.worker}: {state}")
        runs.append(run)
        if run.status == "interrupted":
            break  # Ctrl-C ends the command, not just the scenario it was in
    return runs


def _cmd_scenarios(args: argparse.Namespace) -> int:
    """measure the scenarios on every worker, one scenario at a time

    The scenarios (the talk's three, a StatefulSet held back by a crash-looping ordinal, a
    liveness-probe kill loop, KEP-5307 restart rules, KEP-5532 RestartAllContainers) on every
    worker, one scenario at a time, each with its headline number against the model. With
    --kubeconfig, on the nodes of an existing cluster, each against its own live config, recorded
    from the API alone (all but restart-all, which reads the node's files).
    """
    catalog = sized_registry(ordinal_failures=args.ordinal_failures)
    names = args.scenarios or (
        [s for s in SCENARIOS if s not in NODE_FILE_SCENARIOS] if args.kubeconfig else SCENARIOS
    )
    if args.kubeconfig and (node_only := [s for s in names if s in NODE_FILE_SCENARIOS]):
        raise HarnessError(
            f"{', '.join(node_only)} reads the workload's files on the node, which a "
            "kubeconfig alone cannot reach",
            "leave it out, or run it on the harness's own cluster (without --kubeconfig)",
        )
    if not args.kubeconfig:
        version = common.spec_of(args).kubernetes.version
        if args.scenarios:
            refuse_missing_api(version, names)
        names = runnable(version, names)
    runs = run_scenarios_one_by_one(common.target(args), names, catalog)
    for run in runs:
        SCREEN.tables.print(f"{', '.join(run.scenarios)}: {run.status} ({run.run_dir})")
    emit({"runs": [_scenario_run_document(run) for run in runs]})
    if any(run.status == "interrupted" for run in runs):
        return 130
    return 0 if all(run.passed for run in runs) else 1


def refuse_missing_api(version: str, names: Sequence[str]) -> None:
    """HarnessError, before anything is created, for scenarios ``version`` lacks the API of."""
    missing = scenarios_for(release_of(version).minor, names)[1]
    if missing:
        raise HarnessError(
            f"Kubernetes {version} cannot run {', '.join(missing)}: "
            + "; ".join(f"{n} needs 1.{FIRST_MINOR[n]} or later" for n in missing),
            "leave it out, or choose a later release with --kubernetes",
        )


def runnable(version: str, names: Sequence[str]) -> list[str]:
    """The scenarios Kubernetes ``version`` can run, saying which it leaves out and why."""
    can_run, left_out = scenarios_for(release_of(version).minor, names)
    for name in left_out:
        common.progress(
            f"{name} left out: Kubernetes {version} lacks its API (1.{FIRST_MINOR[name]}+)"
        )
    return can_run


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
    runs = run_scenarios_one_by_one(up, runnable(spec.kubernetes.version, SCENARIOS))
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
        return 130
    return 0 if summary.passed and all(run.passed for run in runs) else 1
