"""pytest plugin: a real kind cluster per session, its API, live node configs, namespaces.

Option names follow pytest-kind's where they overlap (--cluster-name,
--kind-image, --kind-bin, --kubeconfig); pytest-kind's own plugin must be off
(`-p no:pytest-kind`, set in this project's pytest configuration) because its
--keep-cluster is a plain flag and ours takes a policy.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from harness.cluster import lifecycle
from harness.cluster.kube import create_namespace, delete_namespace, node_configz
from harness.core import pins, timeouts
from harness.core.errors import HarnessError
from harness.core.paths import PROJECT_ROOT, runs_dir
from harness.outputs.evidence import collect_failure_evidence, evidence_dir, export_kind_logs
from harness.profiles import ClusterSpec, ProfileError, load_cluster_spec

KEEP_POLICIES = ("never", "on-failure", "always")


def pytest_configure(config: pytest.Config) -> None:
    """Refuse a timeout scale that is not a number before any cluster is touched."""
    del config
    if timeouts.SCALE_PROBLEM is not None:
        raise pytest.UsageError(timeouts.SCALE_PROBLEM)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("crashloop", "crashloop-harness kind cluster")
    try:
        group.addoption(
            "--cluster-name", default=None, help="kind cluster name (default: the spec's)"
        )
    except ValueError as error:
        raise pytest.UsageError(
            "pytest-kind's plugin is active and owns --cluster-name/--keep-cluster; "
            "disable it with `-p no:pytest-kind` (this project's pyproject.toml does)"
        ) from error
    group.addoption(
        "--cluster-config",
        default=str(PROJECT_ROOT / "clusters" / "crashloop.yaml"),
        help="cluster spec (workers and their kubelet profiles)",
    )
    group.addoption(
        "--kubernetes",
        default=pins.DEFAULT_KUBERNETES.minor,
        help="Kubernetes release of the nodes, one of "
        f"{', '.join(pin.minor for pin in pins.KUBERNETES.values())} (a cluster per release)",
    )
    group.addoption("--kind-image", default=None, help="node image (must exist locally)")
    group.addoption(
        "--kind-bin", default=None, help="kind binary to use instead of the pinned build"
    )
    group.addoption("--kubeconfig", default=None, help="where to write the cluster's kubeconfig")
    group.addoption(
        "--keep-cluster",
        default="on-failure",
        choices=KEEP_POLICIES,
        help="keep the cluster after the session: never, on-failure (default) or always",
    )
    group.addoption(
        "--check-profile",
        default="quick",
        choices=("quick", "full"),
        help="conformance observation length: quick (minutes) or full (about 11 minutes)",
    )
    group.addoption(
        "--reuse-cluster",
        action="store_true",
        help="reuse a running cluster created from the same config, and keep it afterwards",
    )
    group.addoption(
        "--crashloop-versions",
        default=",".join(pin.minor for pin in pins.KUBERNETES.values()),
        help="releases the `matrix` tests check, in order (default: every pinned one)",
    )


@dataclass(frozen=True)
class ClusterOptions:
    """The session's cluster options, as one fixture a user can override."""

    spec: ClusterSpec
    image: str | None
    kind_bin: Path | None
    kubeconfig: Path | None
    keep: str
    reuse: bool


def read_cluster_options(config: pytest.Config, spec_path: str) -> ClusterOptions:
    try:
        release = pins.kubernetes_pin(config.getoption("kubernetes"))
        spec = load_cluster_spec(Path(spec_path), release)
    except (ProfileError, ValueError) as error:
        raise pytest.UsageError(f"--kubernetes / --cluster-config: {error}") from error
    name = config.getoption("cluster_name")
    if name:
        spec = replace(spec, name=name)
    kind_bin = config.getoption("kind_bin")
    if kind_bin and not Path(kind_bin).is_file():
        raise pytest.UsageError(
            f"--kind-bin {kind_bin}: no such file; omit it to use the pinned kind"
        )
    kubeconfig = config.getoption("kubeconfig")
    return ClusterOptions(
        spec=spec,
        image=config.getoption("kind_image"),
        kind_bin=Path(kind_bin) if kind_bin else None,
        kubeconfig=Path(kubeconfig) if kubeconfig else None,
        keep=config.getoption("keep_cluster"),
        reuse=config.getoption("reuse_cluster"),
    )


@pytest.fixture(scope="session")
def cluster_options(pytestconfig: pytest.Config) -> ClusterOptions:
    return read_cluster_options(pytestconfig, pytestconfig.getoption("cluster_config"))


def _progress(message: str) -> None:
    print(f"[crashloop] {message}", flush=True)


def session_cluster(
    request: pytest.FixtureRequest, options: ClusterOptions
) -> Iterator[lifecycle.Cluster]:
    """Bring a cluster up for a scope and tear it down according to the keep policy."""
    try:
        up = lifecycle.up(
            options.spec,
            _progress,
            image=options.image,
            reuse=options.reuse,
            kind_bin=options.kind_bin,
            kubeconfig=options.kubeconfig,
            keep_on_failure=options.keep == "always",
        )
    except HarnessError as error:
        pytest.fail(str(error), pytrace=False)
    yield up
    failed = request.session.testsfailed > 0
    keep = options.reuse or options.keep == "always" or (options.keep == "on-failure" and failed)
    if keep:
        reporter = request.config.pluginmanager.get_plugin("terminalreporter")
        message = (
            f"kept cluster {up.name}: export KUBECONFIG={up.kubeconfig}; "
            f"delete it with `{up.kind_bin} delete cluster --name {up.name}`"
        )
        if reporter is not None:
            reporter.write_line(message)
        else:
            _progress(message)
    else:
        lifecycle.delete(up.name, _progress, kind_bin=up.kind_bin, kubeconfig=up.kubeconfig)


@pytest.fixture(scope="session")
def crashloop_cluster(
    request: pytest.FixtureRequest, cluster_options: ClusterOptions
) -> Iterator[lifecycle.Cluster]:
    """The crashloop cluster (one control-plane, one worker per profile), Ready."""
    yield from session_cluster(request, cluster_options)


@pytest.fixture(scope="session")
def kube_api(crashloop_cluster: lifecycle.Cluster) -> client.ApiClient:
    """An official-client ApiClient bound to the session cluster's own kubeconfig."""
    return crashloop_cluster.api()


@pytest.fixture(scope="session")
def node_configs(
    crashloop_cluster: lifecycle.Cluster, kube_api: client.ApiClient
) -> dict[str, dict[str, Any]]:
    """Each node's live kubelet config (/configz), read once per session."""
    nodes = client.CoreV1Api(kube_api).list_node().items
    return {node.metadata.name: node_configz(kube_api, node.metadata.name) for node in nodes}


_CALL_FAILED = pytest.StashKey[bool]()
_SESSION_STARTED = pytest.StashKey[str]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.when == "call" and report.failed:
        item.stash[_CALL_FAILED] = True
    return report


def session_evidence_dir(config: pytest.Config) -> Path:
    """One directory per session for the evidence of failed tests."""
    started = config.stash.setdefault(
        _SESSION_STARTED, time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    )
    return runs_dir() / f"{started}-pytest-evidence"


@pytest.fixture
def namespace(
    request: pytest.FixtureRequest, kube_api: client.ApiClient, crashloop_cluster: lifecycle.Cluster
) -> Iterator[str]:
    """A fresh namespace at the `restricted` Pod Security level, deleted afterwards.

    When the test failed, its pods, logs, events and the nodes' configs are
    collected first, into runs/<session>-pytest-evidence/<test>/.
    """
    name = create_namespace(kube_api, "crashloop")
    yield name
    if request.node.stash.get(_CALL_FAILED, False):
        target = evidence_dir(session_evidence_dir(request.config), request.node.nodeid)
        collect_failure_evidence(kube_api, [name], target)
        export_kind_logs(
            crashloop_cluster.kind_bin,
            crashloop_cluster.name,
            session_evidence_dir(request.config) / "kind-logs",
        )
        print(f"[crashloop] evidence of {request.node.nodeid} in {target}")
    delete_namespace(kube_api, name)
