"""The `crashloop` command: set up the substrate, bring clusters up, show them, tear them down."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Final

import urllib3
from kubernetes.client import ApiException
from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.cli.args import build_parser
from harness.cli.info import (
    cmd_completion,
    cmd_config,
    cmd_kubeconfig,
    cmd_rbac,
    existing_cluster,
    spec_of,
)
from harness.cli.out import SCREEN, emit
from harness.cli.overhead import cmd_overhead, cmd_overhead_compare
from harness.cluster import lifecycle
from harness.cluster.kube import api_client, node_statuses, unready_system_pods
from harness.cluster.profiles import ClusterSpec, ProfileError, load_cluster_spec
from harness.core import pins, timeouts
from harness.core.atomicfile import write_atomically
from harness.core.errors import HarnessError, first_line
from harness.core.paths import state_dir
from harness.core.resources import spec_path
from harness.live.demo import MAX_DURATION_S, DemoOptions, run_demo, run_replay
from harness.model.releases import release_of
from harness.outputs.coverage import uncovered
from harness.outputs.explain import explain
from harness.outputs.flakiness import flakiness_of
from harness.outputs.jobsummary import write_job_summary
from harness.outputs.matrix import MATRIX_FILE, markdown_table
from harness.outputs.render import (
    config_table,
    flakiness_table,
    matrix_table,
    summary_table,
    verdict_table,
)
from harness.outputs.report import write_report
from harness.outputs.summary import SUMMARY_FILE, RunSummary
from harness.outputs.summaryfile import read_summary
from harness.outputs.workloads import write_manifests
from harness.recording.recorder import Observer
from harness.runs.check import CheckResult, run_check
from harness.runs.checkprofiles import CHECK_PROFILES
from harness.runs.lifecycle import Target, new_run_dir
from harness.runs.matrix import matrix_from_runs, run_matrix
from harness.runs.scenarios import ScenarioRun, run_scenarios
from harness.runs.series import Series, checks_in_a_row, summaries_in
from harness.scenarios import (
    FIRST_MINOR,
    NODE_FILE_SCENARIOS,
    REGISTRY,
    SCENARIOS,
    scenarios_for,
    sized_registry,
)
from harness.scenarios.common import Scenario
from harness.scenarios.headline import headline_metrics
from harness.substrate.engine import engine_answers, ensure_engine, stop_engine
from harness.substrate.kindbin import ensure_kind
from harness.substrate.nodeimage.assemble import build_node_image
from harness.substrate.nodeselect import check_kubernetes_version, choose_node_image
from harness.substrate.workloadimage import STABLE_TAG, ensure_image, load_into

console = Console(stderr=True)
_started = time.monotonic()


def progress(message: str) -> None:
    console.print(f"[dim]{time.monotonic() - _started:7.1f}s[/dim] {message}")


def _cmd_engine(args: argparse.Namespace) -> int:
    if args.stop:
        console.print(f"stopped the docker engine (pid {stop_engine()}) and its containers")
        return 0
    engine = ensure_engine()
    where = "started by the harness" if engine.started_here else "already running"
    wrapper = ", capability wrapper on" if engine.capability_wrapper else ""
    console.print(f"docker engine {engine.version} ({where}{wrapper})")
    return 0


def _cmd_kind(_args: argparse.Namespace) -> int:
    print(ensure_kind())
    return 0


def _cmd_node_image(args: argparse.Namespace) -> int:
    pin = check_kubernetes_version(args.kubernetes)
    ensure_engine()
    if args.offline:
        print(build_node_image(progress, pin, tag=args.tag))
    else:
        print(choose_node_image(progress, None, pin))
    return 0


def _cmd_up(args: argparse.Namespace) -> int:
    spec = spec_of(args)
    up = lifecycle.up(spec, progress, image=args.image, recreate=args.recreate)
    progress(f"cluster {up.name} ready; KUBECONFIG={up.kubeconfig}")
    emit(_print_status(up.kubeconfig, spec))
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    spec = spec_of(args)
    if not engine_answers():
        raise HarnessError(
            "the docker engine is not running, so no cluster is either",
            "start it with `make engine`, or bring the cluster back with `crashloop up`",
        )
    kubeconfig = lifecycle.kubeconfig_path(spec.name)
    if not kubeconfig.exists():
        flag = (
            "" if spec.kubernetes == pins.DEFAULT_KUBERNETES else f" --kubernetes {args.kubernetes}"
        )
        raise HarnessError(f"no cluster {spec.name} is known here", f"run `crashloop up{flag}`")
    emit(_print_status(kubeconfig, spec))
    return 0


def _cmd_down(args: argparse.Namespace) -> int:
    spec = spec_of(args)
    lifecycle.delete(spec.name, progress)
    return 0


def _cmd_manifests(args: argparse.Namespace) -> int:
    """Write the replay YAML from the code the harness deploys with."""
    spec = spec_of(args)
    written = write_manifests(Path(args.output_dir), [worker.name for worker in spec.workers])
    for path in written:
        SCREEN.tables.print(str(path))
    return 0


def _cmd_workload_image(args: argparse.Namespace) -> int:
    """Build the workload image, load its stable tag into the cluster, say how to use kubectl."""
    spec = spec_of(args)
    up = lifecycle.up(spec, progress, image=args.image)
    progress("workload image")
    ensure_image()
    load_into(up.name, up.kind_bin, STABLE_TAG)
    link = state_dir() / "bin" / "kubectl"
    link.parent.mkdir(parents=True, exist_ok=True)
    link.unlink(missing_ok=True)
    link.symlink_to(up.kubectl_bin)
    out = SCREEN.tables
    out.print(f"{STABLE_TAG} is loaded into every node of cluster {up.name}. In a shell:")
    out.print(f"  export KUBECONFIG={up.kubeconfig}", soft_wrap=True)
    out.print(f"  export PATH={link.parent}:$PATH", soft_wrap=True)
    return 0


def _target(args: argparse.Namespace) -> Target:
    """The existing cluster the options name, else the harness's own (made or reused)."""
    if args.kubeconfig:
        return existing_cluster(args)
    if args.nodes or args.node_selector or args.context or args.namespace or args.workload_image:
        raise HarnessError(
            "--nodes, --node-selector, --context, --namespace and --workload-image choose an "
            "existing cluster's nodes and image, and need --kubeconfig",
            "add --kubeconfig PATH, or leave them out to measure the harness's own cluster",
        )
    return lifecycle.up(spec_of(args), progress, image=args.image)


def _cmd_check(args: argparse.Namespace) -> int:
    target = _target(args)
    result, summary = _run_and_report_check(target, args.profile, args.observer)
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


def _run_and_report_check(
    up: Target, profile_name: str, observer: Observer = "events"
) -> tuple[CheckResult, RunSummary]:
    profile = CHECK_PROFILES[profile_name]
    seen: dict[str, int] = {}

    def on_sample(result: CheckResult) -> None:
        counts = {worker: len(records) for worker, records in result.attempts.items()}
        if counts != seen:
            seen.clear()
            seen.update(counts)
            progress("attempts: " + ", ".join(f"{w} {n}" for w, n in sorted(counts.items())))

    progress(f"check {profile.name}: at most {profile.timeout_s:.0f}s")
    result = run_check(up, profile, progress, on_sample=on_sample, observer=observer)
    out = SCREEN.tables
    for worker, verdict in result.verdicts.items():
        out.print(verdict_table(verdict, result.curves[worker]))
    summary = read_summary(result.run_dir)
    out.print(summary_table(summary))
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


def _run_scenarios_one_by_one(
    up: Target, names: Sequence[str], catalog: Mapping[str, Scenario] = REGISTRY
) -> list[ScenarioRun]:
    """Each scenario on its own: together they load two cores past the verdict's tolerance."""
    runs = []
    for name in names:
        run = run_scenarios(up, progress, [name], catalog=catalog)
        for by_worker in run.results.values():
            for result in by_worker.values():
                state = "ok" if result.passed else "FAIL: " + "; ".join(result.failures[:2])
                SCREEN.tables.print(f"{name} on {result.worker}: {state}")
        runs.append(run)
        if run.status == "interrupted":
            break  # Ctrl-C ends the command, not just the scenario it was in
    return runs


def _cmd_scenarios(args: argparse.Namespace) -> int:
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
        version = spec_of(args).kubernetes.version
        if args.scenarios:
            _refuse_missing_api(version, names)
        names = _runnable(version, names)
    runs = _run_scenarios_one_by_one(_target(args), names, catalog)
    for run in runs:
        SCREEN.tables.print(f"{', '.join(run.scenarios)}: {run.status} ({run.run_dir})")
    emit({"runs": [_scenario_run_document(run) for run in runs]})
    if any(run.status == "interrupted" for run in runs):
        return 130
    return 0 if all(run.passed for run in runs) else 1


def _refuse_missing_api(version: str, names: Sequence[str]) -> None:
    """HarnessError, before anything is created, for scenarios ``version`` lacks the API of."""
    missing = scenarios_for(release_of(version).minor, names)[1]
    if missing:
        raise HarnessError(
            f"Kubernetes {version} cannot run {', '.join(missing)}: "
            + "; ".join(f"{n} needs 1.{FIRST_MINOR[n]} or later" for n in missing),
            "leave it out, or choose a later release with --kubernetes",
        )


def _runnable(version: str, names: Sequence[str]) -> list[str]:
    """The scenarios Kubernetes ``version`` can run, saying which it leaves out and why."""
    runnable, left_out = scenarios_for(release_of(version).minor, names)
    for name in left_out:
        progress(f"{name} left out: Kubernetes {version} lacks its API (1.{FIRST_MINOR[name]}+)")
    return runnable


def _scenario_run_document(run: ScenarioRun) -> dict[str, object]:
    summary = run.run_dir / SUMMARY_FILE
    return {
        "scenarios": list(run.scenarios),
        "status": run.status,
        "run_dir": str(run.run_dir),
        "summary": json.loads(summary.read_text()) if summary.is_file() else None,
    }


def _cmd_conformance(args: argparse.Namespace) -> int:
    """The nightly job: the full check and every scenario; the exit code is the verdict."""
    spec = spec_of(args)
    up = lifecycle.up(spec, progress, image=args.image)
    result, summary = _run_and_report_check(up, args.profile)
    write_job_summary(summary, result.run_dir)
    runs = _run_scenarios_one_by_one(up, _runnable(spec.kubernetes.version, SCENARIOS))
    metrics = [metric for run in runs for metric in headline_metrics(run.results)]
    report = write_report(result.run_dir, summary, result.attempts, metrics)
    SCREEN.tables.print(f"report: {report}")
    for run in runs:
        SCREEN.tables.print(f"{', '.join(run.scenarios)}: {run.status} ({run.run_dir})")
    if result.status == "interrupted" or any(run.status == "interrupted" for run in runs):
        return 130
    return 0 if summary.passed and all(run.passed for run in runs) else 1


def _cmd_flakiness(args: argparse.Namespace) -> int:
    """Checks in a row on one cluster (or ones already run): pass count and overshoot spread."""
    if args.runs_from:
        series = summaries_in([Path(run_dir) for run_dir in args.runs_from])
    else:
        series = _checks_in_a_row(args)
    # Whatever ended the series, what finished is pooled and written.
    report = flakiness_of(series.summaries)
    _, run_dir = new_run_dir("flakiness")
    written = write_atomically(run_dir / "flakiness.json", report.to_json().encode())
    SCREEN.tables.print(flakiness_table(report))
    SCREEN.tables.print(f"flakiness of {len(series.summaries)} runs in {written}")
    if series.error is not None:
        console.print(Text("error: ", style="bold red") + Text(series.error), soft_wrap=True)
        return 2
    if series.interrupted:
        return 130
    return 0 if report.all_passed else 1


def _checks_in_a_row(args: argparse.Namespace) -> Series:
    up = lifecycle.up(spec_of(args), progress, image=args.image)

    def run_one() -> tuple[CheckResult, RunSummary]:
        result, summary = _run_and_report_check(up, args.profile, args.observer)
        write_report(result.run_dir, summary, result.attempts)
        return result, summary

    return checks_in_a_row(args.runs, run_one, progress)


def _cmd_demo(args: argparse.Namespace) -> int:
    console = Console(force_terminal=False) if args.plain else Console()
    if args.replay:
        return run_replay(
            Path(args.replay), speed=args.speed, console=console, plain=args.plain, theme=args.theme
        )
    spec = spec_of(args)
    _refuse_missing_api(spec.kubernetes.version, args.scenarios)
    if not 30 <= args.duration <= MAX_DURATION_S:
        raise HarnessError(
            f"--duration {args.duration:g}s is outside 30..{MAX_DURATION_S:g}s",
            f"give a duration in seconds between 30 and {MAX_DURATION_S:g}",
        )
    options = DemoOptions(
        spec=spec,
        duration_s=args.duration,
        keep_cluster=not args.down,
        scenarios=tuple(args.scenarios),
        plain=args.plain,
        image=args.image,
        wait_for_enter=args.wait_for_enter,
        theme=args.theme,
    )
    return run_demo(options, console)


def _print_status(kubeconfig: Path, spec: ClusterSpec) -> dict[str, object]:
    """Nodes, system pods and each kubelet's live backoff config; fails on a mismatch.

    Returns the same as a document for ``--output json``.
    """
    api = api_client(kubeconfig)
    table = Table(title="nodes")
    for column in ("node", "ready", "kubelet", "profile"):
        table.add_column(column)
    statuses = node_statuses(api)
    for status in statuses:
        table.add_row(
            status.name,
            "Ready" if status.ready else "NotReady",
            status.kubelet_version,
            status.labels.get("crashloop.harness/profile", "-"),
        )
    SCREEN.tables.print(table)
    waiting = unready_system_pods(api)
    SCREEN.tables.print(
        "kube-system: all pods Running and Ready"
        if not waiting
        else f"kube-system waiting: {waiting}"
    )
    rows = lifecycle.live_config_rows(api, spec)
    SCREEN.tables.print(config_table(rows))
    document: dict[str, object] = {
        "cluster": spec.name,
        "kubeconfig": str(kubeconfig),
        "nodes": [
            {
                "name": status.name,
                "ready": status.ready,
                "kubelet": status.kubelet_version,
                "profile": status.labels.get("crashloop.harness/profile"),
            }
            for status in statuses
        ],
        "system_pods_waiting": waiting,
        "live_configs": [
            {
                "node": row.node,
                "worker": row.worker,
                "profile": row.profile,
                "kubelet": row.kubelet_version,
                "max_container_restart_period": row.max_container_restart_period,
                "feature_gates": row.feature_gates,
                "expected_delays_s": [d.total_seconds() for d in row.curve.delays(8)],
                "mismatches": list(row.mismatches),
            }
            for row in rows
        ],
    }
    lifecycle.check_live_configs(rows)
    return document


def _cmd_matrix(args: argparse.Namespace) -> int:
    """The check on each release in turn; the exit code says whether every one passed."""
    if args.markdown:
        # Refused before any release runs: a matrix is too long to lose to a bad path.
        try:
            Path(args.markdown).open("a", encoding="utf-8").close()
        except OSError as error:
            raise HarnessError(
                f"--markdown {args.markdown}: cannot write it ({error.strerror})",
                "name a file in a directory that exists and is writable",
            ) from error
    if args.runs_from:
        matrix, where = matrix_from_runs([Path(directory) for directory in args.runs_from])
    else:
        releases = [check_kubernetes_version(v) for v in args.versions.split(",") if v.strip()]
        if not releases:
            raise HarnessError("--versions names no release", "e.g. --versions 1.34,1.35")
        spec_file = spec_path(args.config)
        for pin in releases:
            load_cluster_spec(spec_file, pin)  # every profile valid on every release, up front
        matrix, where = run_matrix(
            spec_file,
            releases,
            CHECK_PROFILES[args.profile],
            progress,
            keep_clusters=args.keep_clusters,
        )
    if args.markdown:
        with Path(args.markdown).open("a", encoding="utf-8") as markdown:
            markdown.write(markdown_table(matrix))
    out = SCREEN.tables
    out.print(matrix_table(matrix))
    for change in matrix.changes or ["no change in median delay beyond the noise"]:
        out.print(f"  {change}")
    out.print(f"matrix: {where / MATRIX_FILE}")
    if any(entry.status == "interrupted" for entry in matrix.entries):
        return 130
    return 0 if matrix.passed else 1


HANDLERS: Final[Mapping[str, Callable[[argparse.Namespace], int]]] = {
    "engine": _cmd_engine,
    "kind": _cmd_kind,
    "node-image": _cmd_node_image,
    "up": _cmd_up,
    "status": _cmd_status,
    "down": _cmd_down,
    "manifests": _cmd_manifests,
    "workload-image": _cmd_workload_image,
    "check": _cmd_check,
    "scenarios": _cmd_scenarios,
    "conformance": _cmd_conformance,
    "flakiness": _cmd_flakiness,
    "demo": _cmd_demo,
    "matrix": _cmd_matrix,
    "overhead": lambda args: cmd_overhead(args, progress),
    "overhead-compare": cmd_overhead_compare,
    "config": cmd_config,
    "kubeconfig": cmd_kubeconfig,
    "completion": cmd_completion,
    "rbac": cmd_rbac,
}


def _raise_interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def interrupt_on_hangup_and_terminate() -> None:
    """SIGTERM and SIGHUP end a run as Ctrl-C does: judged, written, cleaned up.

    Their default is to kill the process on the spot, which leaves the run's
    namespace and its crash-looping pods behind (a closed terminal sends
    SIGHUP, `kill` and CI runners SIGTERM).
    """
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _raise_interrupt)


def main(argv: Sequence[str] | None = None) -> int:
    # A process a non-interactive shell starts in the background inherits SIGINT
    # ignored, and Python then never raises KeyboardInterrupt: Ctrl-C, or a CI
    # runner's SIGINT, must still stop a run cleanly and keep what it measured.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    interrupt_on_hangup_and_terminate()
    args = build_parser().parse_args(argv)
    handler = HANDLERS[args.command]
    SCREEN.format = getattr(args, "output", "text")
    if args.runs_dir:
        os.environ["CRASHLOOP_RUNS_DIR"] = str(Path(args.runs_dir).resolve())
    if timeouts.SCALE_PROBLEM is not None:
        console.print(
            Text("error: ", style="bold red") + Text(timeouts.SCALE_PROBLEM), soft_wrap=True
        )
        return 2
    try:
        code = handler(args)
    except (HarnessError, ProfileError) as error:
        # Unwrapped and without markup: paths and values stay whole and copyable.
        console.print(Text("error: ", style="bold red") + Text(str(error)), soft_wrap=True)
        emit({"error": str(error), "exit_code": 2})
        return 2
    except (ApiException, urllib3.exceptions.HTTPError) as error:
        # The API server went away under us: say so in one line, not a traceback.
        console.print(
            Text("error: ", style="bold red")
            + Text(f"the Kubernetes API did not answer: {first_line(error)}"),
            soft_wrap=True,
        )
        console.print("  fix: check the cluster with `crashloop status`; `crashloop up` repairs it")
        emit({"error": f"the Kubernetes API did not answer: {first_line(error)}", "exit_code": 2})
        return 2
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/yellow]")
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
