"""The pytest plugin: a real kind cluster for a session, its API, live kubelet configs, namespaces.

Loaded through the ``pytest11`` entry point. Its options are all ``--crashloop-*``
with ini equivalents (:mod:`crashloop_harness.plugin.options`), so none clashes with a
suite's own; where pytest-kind is installed (the ``kind`` extra) its options
(--cluster-name, --keep-cluster, --kubeconfig, --kind-image, --kind-bin) choose the
cluster too, and ``crashloop_kind_cluster`` hands over its ``KindCluster`` for the
session's cluster. Importing this module is cheap:
the kubernetes client and the cluster code load when a fixture needs them.

Fixtures (all prefixed ``crashloop_``; ``pytest --fixtures`` explains each):
``crashloop_cluster``, ``crashloop_api``, ``crashloop_node_configs``,
``crashloop_namespace``, ``crashloop_workload_image``, ``crashloop_kind_cluster``,
``crashloop_cluster_options``, ``crashloop_progress``, ``crashloop_check_profile``,
``crashloop_versions``, and ``crashloop_existing_cluster`` for a cluster reached by a
kubeconfig alone. Markers: ``crashloop_matrix`` (run only when ``-m`` names it) and
``crashloop_disruptive`` (run last), registered only once a test module names one.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from crashloop_harness.core import pins, timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.paths import runs_dir, runs_path
from crashloop_harness.plugin.failures import fail_with, quiet_retries
from crashloop_harness.plugin.markers import (
    DISRUPTIVE_MARKER,
    MATRIX_MARKER,
    pytest_collect_file,
    register_markers,
)
from crashloop_harness.plugin.options import (
    ClusterOptions,
    add_options,
    asked_for,
    kind_options_given,
    ours,
    read_cluster_options,
    release,
)
from crashloop_harness.plugin.report import (
    header_lines,
    progress_writer,
    record,
    summary_lines,
    write_line,
)

if TYPE_CHECKING:
    from kubernetes import client
    from pytest_kind import KindCluster

    from crashloop_harness.cluster.lifecycle import Cluster
    from crashloop_harness.cluster.remote import RemoteCluster
    from crashloop_harness.runs.checkprofiles import CheckProfile

__all__ = ["ClusterOptions", "pytest_collect_file", "read_cluster_options", "session_cluster"]

_CALL_FAILED = pytest.StashKey[bool]()
_SESSION_STARTED = pytest.StashKey[str]()
_OPTIONS = pytest.StashKey[ClusterOptions]()


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    """Every option checked, before any test or cluster exists."""
    if asked_for(config):
        register_markers(config)
    if timeouts.SCALE_PROBLEM is not None:
        raise pytest.UsageError(timeouts.SCALE_PROBLEM)
    runs = ours(config, "runs-dir")
    if runs:
        os.environ["CRASHLOOP_RUNS_DIR"] = str(Path(runs).resolve())
    ours(config, "check-profile")
    for version in ours(config, "versions").split(","):
        if version.strip():
            try:
                pins.kubernetes_pin(version)
            except ValueError as error:
                raise pytest.UsageError(f"--crashloop-versions: {error}") from error
    if asked_for(config) or kind_options_given(config):
        # Checked now, before any test runs; a session that names no cluster option reads
        # its (default) spec only when a fixture or the header asks (session_options).
        config.stash[_OPTIONS] = read_cluster_options(config)
    if asked_for(config):
        _used(config)


def session_options(config: pytest.Config) -> ClusterOptions:
    """The session's cluster options, read once."""
    if _OPTIONS not in config.stash:
        config.stash[_OPTIONS] = read_cluster_options(config)
    return config.stash[_OPTIONS]


def _used(config: pytest.Config) -> None:
    """From now on the session uses the plugin: the run directories there are now are noted,
    so that the summary names those the session makes."""
    session = record(config)
    if not session.used:
        session.used = True
        session.runs_before = frozenset(_run_names())


def pytest_report_header(config: pytest.Config) -> list[str]:
    # A project that does not use the plugin hears nothing of it.
    return _header(config) if record(config).used else []


def _header(config: pytest.Config) -> list[str]:
    options = session_options(config)
    pin = release(config)
    image = options.image or (
        f"{pin.version}'s: kind's official image if present, else the offline build"
        if pin.official_node_image
        else f"{pin.version}'s offline build"
    )
    return header_lines(
        cluster=options.spec.name,
        kubernetes=pin.version,
        image=image,
        kind=str(options.kind_bin) if options.kind_bin else f"{pins.KIND_VERSION} (pinned)",
        keep=options.keep,
        reuse=options.reuse,
        runs=runs_path(),
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Refuse parallel workers when a test uses the cluster: their load would falsify timing."""
    workers = getattr(config, "workerinput", {}).get("workercount", 1)
    if workers > 1 and any(
        name.startswith("crashloop_")
        for item in items
        for name in getattr(item, "fixturenames", ())
    ):
        raise pytest.UsageError(
            f"crashloop fixtures under pytest-xdist with {workers} workers: parallel tests load "
            "the nodes and falsify the kubelet's measured delays; run them with -n 0 "
            "(or -p no:xdist)"
        )
    # A matrix test (a cluster per release, tens of minutes) only when -m names it.
    if MATRIX_MARKER not in (config.getoption("markexpr") or ""):
        left_out = [item for item in items if item.get_closest_marker(MATRIX_MARKER)]
        if left_out:
            config.hook.pytest_deselected(items=left_out)
            items[:] = [item for item in items if not item.get_closest_marker(MATRIX_MARKER)]
    # A test that changes or breaks nodes goes last: should its clean-up fail,
    # it spoils no other test's measurement. The sort is stable.
    items.sort(key=lambda item: item.get_closest_marker(DISRUPTIVE_MARKER) is not None)
    if not record(config).used and any(
        name.startswith("crashloop_")
        for item in items
        for name in getattr(item, "fixturenames", ())
    ):
        # Collected tests use our fixtures: the header comes now, once.
        _used(config)
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            for line in _header(config):
                reporter.write_line(line)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "call" and report.failed:
        item.stash[_CALL_FAILED] = True
    return report


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    if not record(config).used:
        return
    lines = summary_lines(record(config), _run_names(), runs_path())
    if lines:
        terminalreporter.section("crashloop")
        for line in lines:
            terminalreporter.write_line(line)


def _run_names() -> list[str]:
    """The run directories there are now; none made (a suite that never measures leaves none)."""
    directory = runs_path()
    if not directory.is_dir():
        return []
    return sorted(p.name for p in directory.iterdir() if p.is_dir() and not p.is_symlink())


def session_evidence_dir(config: pytest.Config) -> Path:
    """One directory per session for the evidence of failed tests."""
    started = config.stash.setdefault(
        _SESSION_STARTED, time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    )
    return runs_dir() / f"{started}-pytest-evidence"


def session_cluster(request: pytest.FixtureRequest, options: ClusterOptions) -> Iterator[Cluster]:
    """Bring a cluster up for a fixture's scope; afterwards keep or delete it by policy.

    For a fixture of your own with another spec:
    ``yield from session_cluster(request, read_cluster_options(request.config, "gate-only"))``.
    """
    from crashloop_harness.cluster import lifecycle
    from crashloop_harness.outputs.steps import StepLines

    progress = progress_writer(request.config)
    try:
        # A line a minute while a step (a node image built from nothing) runs long.
        with StepLines(progress, stamp=False, ends=True) as steps:
            up = lifecycle.up(
                options.spec,
                steps,
                image=options.image,
                reuse=options.reuse,
                kind_bin=options.kind_bin,
                kubeconfig=options.kubeconfig,
                keep_on_failure=options.keep == "always",
            )
    except HarnessError as error:
        fail_with(error)
    yield up
    failed = request.session.testsfailed > 0
    keep = options.reuse or options.keep == "always" or (options.keep == "on-failure" and failed)
    if keep:
        record(request.config).kept.append(
            f"{up.name}: export KUBECONFIG={up.kubeconfig}; "
            f"delete it with `{up.kind_bin} delete cluster --name {up.name}`"
        )
    else:
        lifecycle.delete(up.name, progress, kind_bin=up.kind_bin, kubeconfig=up.kubeconfig)


@pytest.fixture(scope="session")
def crashloop_cluster_options(pytestconfig: pytest.Config) -> ClusterOptions:
    """The session's cluster options (spec, release, image, keep policy); override to change."""
    return session_options(pytestconfig)


@pytest.fixture(scope="session")
def crashloop_check_profile(pytestconfig: pytest.Config) -> CheckProfile:
    """The check profile --crashloop-check-profile names (quick or full): what to observe."""
    from crashloop_harness.runs.checkprofiles import CHECK_PROFILES

    return CHECK_PROFILES[ours(pytestconfig, "check-profile")]


@pytest.fixture(scope="session")
def crashloop_versions(pytestconfig: pytest.Config) -> list[pins.KubernetesPin]:
    """The releases --crashloop-versions names (every pinned one by default), in order."""
    names = [v for v in ours(pytestconfig, "versions").split(",") if v.strip()]
    return [pins.kubernetes_pin(name) for name in names]


@pytest.fixture(scope="session")
def crashloop_progress(pytestconfig: pytest.Config) -> Callable[[str], None]:
    """``progress(message)``: a line on the terminal now, with the session's elapsed time."""
    return progress_writer(pytestconfig)


@pytest.fixture(scope="session")
def crashloop_cluster(
    request: pytest.FixtureRequest, crashloop_cluster_options: ClusterOptions
) -> Iterator[Cluster]:
    """The crashloop kind cluster (a control plane, one worker per kubelet profile), Ready.

    Created, or reused when one made from the same spec runs (--crashloop-reuse
    keeps it afterwards); the node image is built offline when it is missing.
    Deleted after the session unless kept (--crashloop-keep, --keep-cluster).
    """
    yield from session_cluster(request, crashloop_cluster_options)


@pytest.fixture(scope="session")
def crashloop_existing_cluster(pytestconfig: pytest.Config) -> RemoteCluster:
    """An existing cluster reached by --crashloop-existing-kubeconfig alone, its nodes chosen.

    Nothing is created here; ``run_check(crashloop_existing_cluster, ...)`` runs the check on
    it through the API (no docker, no kind), each node against its own live config.
    """
    from crashloop_harness.cluster.kubeconfig import kubectl_default_kubeconfig
    from crashloop_harness.cluster.remote import connect
    from crashloop_harness.substrate.workloadimage import image_tag

    # kubectl's rule, as every verb: the option, else $KUBECONFIG, else ~/.kube/config.
    kubeconfig = ours(pytestconfig, "existing-kubeconfig") or str(kubectl_default_kubeconfig())
    nodes = ours(pytestconfig, "existing-nodes")
    try:
        with quiet_retries():
            return connect(
                Path(kubeconfig),
                context=ours(pytestconfig, "existing-context") or None,
                nodes=[n.strip() for n in nodes.split(",") if n.strip()],
                selector=ours(pytestconfig, "existing-node-selector") or None,
                workload_image=ours(pytestconfig, "workload-image") or image_tag(),
                namespace=ours(pytestconfig, "existing-namespace") or None,
            )
    except HarnessError as error:
        fail_with(error)


@pytest.fixture(scope="session")
def crashloop_kind_cluster(crashloop_cluster: Cluster) -> KindCluster:
    """pytest-kind's ``KindCluster`` for the session's cluster (its kind, kubectl, kubeconfig);
    pytest-kind comes with the ``kind`` extra (``pip install 'crashloop-harness[kind]'``)."""
    try:
        from pytest_kind import KindCluster
    except ImportError:
        fail_with(
            HarnessError(
                "crashloop_kind_cluster is pytest-kind's KindCluster, and pytest-kind is not "
                "installed",
                "pip install 'crashloop-harness[kind]'",
            )
        )
    return KindCluster(
        crashloop_cluster.name,
        kubeconfig=crashloop_cluster.kubeconfig,
        image=crashloop_cluster.image,
        kind_path=crashloop_cluster.kind_bin,
        kubectl_path=crashloop_cluster.kubectl_bin,
    )


@pytest.fixture(scope="session")
def crashloop_workload_image(crashloop_cluster: Cluster) -> str:
    """The crashing workload's image, built if needed and loaded into every node; its tag.

    Pods made with ``crashloop_harness.pods.skeleton.crashing_pod(worker, run_id, image)``
    use it: a static program that exits at once with the code it is given.
    """
    from crashloop_harness.substrate.workloadimage import ensure_image, load_into

    image = ensure_image()
    load_into(crashloop_cluster.name, crashloop_cluster.kind_bin, image)
    return image


@pytest.fixture(scope="session")
def crashloop_api(crashloop_cluster: Cluster) -> client.ApiClient:
    """An official-client ``ApiClient`` bound to the session cluster's own kubeconfig."""
    return crashloop_cluster.api()


@pytest.fixture(scope="session")
def crashloop_node_configs(crashloop_api: client.ApiClient) -> dict[str, dict[str, Any]]:
    """Each node's live kubelet config (``/configz``), by node name, read once per session."""
    from kubernetes import client

    from crashloop_harness.cluster.kube import node_configz

    nodes = client.CoreV1Api(crashloop_api).list_node().items
    return {node.metadata.name: node_configz(crashloop_api, node.metadata.name) for node in nodes}


@pytest.fixture
def crashloop_namespace(
    request: pytest.FixtureRequest, crashloop_api: client.ApiClient, crashloop_cluster: Cluster
) -> Iterator[str]:
    """A fresh namespace at the ``restricted`` Pod Security level, deleted afterwards.

    When the test failed, its pods, logs, events and the nodes' kubelet logs
    are collected first, into runs/<session>-pytest-evidence/<test>/.
    """
    from crashloop_harness.cluster.evidence import collect_failure_evidence, evidence_dir
    from crashloop_harness.cluster.kindlogs import export_kind_logs
    from crashloop_harness.cluster.kube import create_namespace, delete_namespace

    name = create_namespace(crashloop_api, "crashloop")
    yield name
    if request.node.stash.get(_CALL_FAILED, False):
        session_dir = session_evidence_dir(request.config)
        target = evidence_dir(session_dir, request.node.nodeid)
        collect_failure_evidence(crashloop_api, [name], target)
        export_kind_logs(
            crashloop_cluster.kind_bin, crashloop_cluster.name, session_dir / "kind-logs"
        )
        record(request.config).evidence.append(target)
        write_line(request.config, f"evidence of {request.node.nodeid} in {target}")
    delete_namespace(crashloop_api, name)
