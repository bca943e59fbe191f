"""The plugin's settings: ``--crashloop-*`` options, and pytest-kind's where it is installed.

Every option the plugin adds is prefixed, so none can clash with a suite's own
``--kubeconfig`` or ``--cluster-name``. pytest-kind (the ``kind`` extra, its plugin
on by default) owns --cluster-name, --keep-cluster, --kubeconfig, --kind-image and
--kind-bin; where it is installed they mean here what they mean there, and ours
win when both are given. Each option of our own has an ini equivalent
(``crashloop_config = gate-only`` in pytest.ini / pyproject.toml), the
command line winning. Reading them is pure: every bad value becomes one
UsageError naming the option and the fix, before any cluster is touched.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final

import pytest

from crashloop_harness.core import pins
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.resources import DEFAULT_SPEC_NAME, spec_path

if TYPE_CHECKING:
    # Loaded when a session asks for a cluster: a session that never does pays nothing
    # for YAML and the back-off model at start-up.
    from crashloop_harness.cluster.profiles import ClusterSpec

KEEP_POLICIES: Final = ("never", "on-failure", "always")
CHECK_PROFILE_NAMES: Final = ("quick", "full")
# pytest-kind's --cluster-name default: left as it is, the spec names the cluster.
PYTEST_KIND_DEFAULT_NAME: Final = "pytest-kind"


@dataclass(frozen=True)
class OurOption:
    """One ``--crashloop-<name>`` option and its ini key ``crashloop_<name>``."""

    name: str
    help: str
    default: str
    choices: tuple[str, ...] = ()
    flag: bool = False

    @property
    def flag_name(self) -> str:
        return f"--crashloop-{self.name}"

    @property
    def dest(self) -> str:
        return f"crashloop_{self.name.replace('-', '_')}"


OPTIONS: Final = (
    OurOption(
        "config",
        "cluster spec: a YAML file or a built-in name (crashloop, crashloop-pids, gate-only, "
        "substrate)",
        DEFAULT_SPEC_NAME,
    ),
    OurOption(
        "kubernetes",
        "Kubernetes release of the nodes, one of "
        + ", ".join(pin.minor for pin in pins.KUBERNETES.values())
        + " (a cluster per release)",
        pins.DEFAULT_KUBERNETES.minor,
    ),
    OurOption(
        "keep",
        "keep the cluster after the session: never, on-failure or always "
        "(pytest-kind's --keep-cluster means always)",
        "on-failure",
        choices=KEEP_POLICIES,
    ),
    OurOption(
        "reuse",
        "reuse a running cluster created from the same spec, and keep it afterwards",
        "false",
        flag=True,
    ),
    OurOption(
        "check-profile",
        "the crashloop_check_profile fixture: quick (minutes) or full (about 11 minutes)",
        "quick",
        choices=CHECK_PROFILE_NAMES,
    ),
    OurOption(
        "versions",
        "the crashloop_versions fixture: the releases crashloop_matrix tests check, in order",
        ",".join(pin.minor for pin in pins.KUBERNETES.values()),
    ),
    OurOption("runs-dir", "where run directories are written (default ./runs)", ""),
    # The cluster's name, node image and kind binary (pytest-kind's --cluster-name,
    # --kind-image and --kind-bin, for suites without it).
    OurOption("cluster-name", "the kind cluster's name (default: the spec's)", ""),
    OurOption("kind-image", "the node image (default: the release's, built if missing)", ""),
    OurOption("kind-bin", "a kind binary (default: the pinned kind, built if missing)", ""),
    # An existing cluster (crashloop_existing_cluster): a kubeconfig alone, no docker.
    OurOption("existing-kubeconfig", "an existing cluster's kubeconfig (no docker, no kind)", ""),
    OurOption("existing-context", "its context (default: the kubeconfig's current one)", ""),
    OurOption("existing-nodes", "its nodes to check, by name, comma-separated", ""),
    OurOption("existing-node-selector", "its nodes to check, by label (key or key=value)", ""),
    OurOption("existing-namespace", "a namespace prepared with `crashloop rbac`", ""),
    OurOption("workload-image", "the crashing workload's image as the nodes can pull it", ""),
)
_BY_NAME: Final = {option.name: option for option in OPTIONS}


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("crashloop", "crashloop-harness (kubelet CrashLoopBackOff)")
    for option in OPTIONS:
        suffix = f" [ini: {option.dest}; default {option.default or 'none'}]"
        if option.flag:
            group.addoption(
                option.flag_name, action="store_true", default=None, help=option.help + suffix
            )
            parser.addini(option.dest, option.help, type="bool", default=False)
        else:
            group.addoption(
                option.flag_name,
                default=None,
                choices=option.choices or None,
                help=option.help + suffix,
            )
            parser.addini(option.dest, option.help, default=option.default)


def asked_for(config: pytest.Config) -> bool:
    """Whether the user gave any option of ours, on the command line or as an ini key."""
    given = any(config.getoption(option.dest) not in (None, False) for option in OPTIONS)
    return given or any(
        config.getini(option.dest) != (False if option.flag else option.default)
        for option in OPTIONS
    )


def ours(config: pytest.Config, name: str) -> str:
    """Our option ``name``: command line, else ini, else default; checked against its choices."""
    option = _BY_NAME[name]
    value = config.getoption(option.dest)
    if value is None:
        value = config.getini(option.dest)
    text = str(value).strip()
    if option.choices and text not in option.choices:
        raise pytest.UsageError(
            f"{option.dest} = {text!r}: must be one of {', '.join(option.choices)}"
        )
    return text


def flag(config: pytest.Config, name: str) -> bool:
    option = _BY_NAME[name]
    value = config.getoption(option.dest)
    return bool(config.getini(option.dest)) if value is None else bool(value)


# pytest-kind's options that choose the cluster, by their dest.
PYTEST_KIND_CLUSTER_OPTIONS: Final = ("cluster_name", "kind_bin", "kind_image", "kubeconfig")


def kind_options_given(config: pytest.Config) -> bool:
    """Whether an option of pytest-kind's that chooses the cluster was given."""
    named = any(
        pytest_kind_option(config, dest) not in (None, PYTEST_KIND_DEFAULT_NAME)
        for dest in PYTEST_KIND_CLUSTER_OPTIONS
    )
    return named or bool(config.getoption("keep_cluster", default=False))


def pytest_kind_option(config: pytest.Config, dest: str) -> str | None:
    """pytest-kind's option ``dest``; None when unset or pytest-kind's plugin is off."""
    value = config.getoption(dest, default=None)
    return None if value in (None, "", False) else str(value)


@dataclass(frozen=True)
class ClusterOptions:
    """Everything that decides which cluster a session gets and what happens to it."""

    spec: ClusterSpec
    image: str | None
    kind_bin: Path | None
    kubeconfig: Path | None
    keep: str
    reuse: bool


def release(config: pytest.Config) -> pins.KubernetesPin:
    try:
        return pins.kubernetes_pin(ours(config, "kubernetes"))
    except ValueError as error:
        raise pytest.UsageError(f"--crashloop-kubernetes: {error}") from error


def read_cluster_options(config: pytest.Config, spec: str | Path | None = None) -> ClusterOptions:
    """The cluster options for ``spec`` (default: --crashloop-config), refused if wrong."""
    from crashloop_harness.cluster.profiles import ProfileError, load_cluster_spec, name_problem

    name_or_path = spec if spec is not None else ours(config, "config")
    try:
        cluster_spec = load_cluster_spec(spec_path(name_or_path), release(config))
    except (ProfileError, HarnessError) as error:
        raise pytest.UsageError(f"--crashloop-config: {error}") from error
    name = ours(config, "cluster-name") or pytest_kind_option(config, "cluster_name")
    wrong = name_problem(name) if name else None
    if wrong is not None:
        raise pytest.UsageError(f"--crashloop-cluster-name: {wrong}")
    if name and name != PYTEST_KIND_DEFAULT_NAME:
        cluster_spec = replace(cluster_spec, name=name)
    kind_bin = ours(config, "kind-bin") or pytest_kind_option(config, "kind_bin")
    if kind_bin and not Path(kind_bin).is_file():
        raise pytest.UsageError(
            f"--crashloop-kind-bin {kind_bin}: no such file; omit it to use the pinned kind"
        )
    kubeconfig = pytest_kind_option(config, "kubeconfig")
    keep = "always" if config.getoption("keep_cluster", default=False) else ours(config, "keep")
    return ClusterOptions(
        spec=cluster_spec,
        image=ours(config, "kind-image") or pytest_kind_option(config, "kind_image"),
        kind_bin=Path(kind_bin) if kind_bin else None,
        kubeconfig=Path(kubeconfig) if kubeconfig else None,
        keep=keep,
        reuse=flag(config, "reuse"),
    )
