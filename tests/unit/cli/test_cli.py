"""The CLI refuses bad input before it creates anything."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
from pathlib import Path

import pytest

from crashloop_harness.cli import app as cli
from crashloop_harness.cli import cluster as cli_cluster
from crashloop_harness.cli import common
from crashloop_harness.cli.app import build_parser
from crashloop_harness.cluster import lifecycle, nodecontainers
from crashloop_harness.cluster.kube import NodeStatus
from crashloop_harness.core import pins
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.resources import CLUSTERS_DIR
from crashloop_harness.substrate import engine, nodeselect, workloadindex


@pytest.fixture
def spec_copy(tmp_path: Path) -> Path:
    target = tmp_path / "clusters"
    shutil.copytree(CLUSTERS_DIR, target)
    return target


@pytest.fixture(autouse=True)
def nothing_is_created(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the CLI tried to create a cluster from bad input")

    monkeypatch.setattr(lifecycle, "up", refuse)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("500ms", "500ms"), ("301s", "5m1s"), ("abc", "abc")],
)
def test_a_bad_max_period_is_refused_naming_file_worker_and_field(
    spec_copy: Path, capsys: pytest.CaptureFixture[str], value: str, expected: str
) -> None:
    fast = spec_copy / "profiles" / "fast.yaml"
    fast.write_text(fast.read_text().replace("2s", value))
    code = cli.main(["up", "--config", str(spec_copy / "crashloop.yaml")])
    message = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert "fast.yaml" in message
    assert "'fast'" in message
    assert "maxContainerRestartPeriod" in message
    assert expected in message


def test_an_unknown_feature_gate_is_refused(
    spec_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reduced = spec_copy / "profiles" / "reduced.yaml"
    reduced.write_text(reduced.read_text().replace("ReduceDefault", "ReduceDefualt"))
    assert cli.main(["up", "--config", str(spec_copy / "crashloop.yaml")]) == 2
    message = " ".join(capsys.readouterr().err.split())
    assert "reduced.yaml" in message
    assert "featureGates" in message


def test_invalid_yaml_is_refused(spec_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (spec_copy / "profiles" / "default.yaml").write_text("kind: [unclosed\n")
    assert cli.main(["up", "--config", str(spec_copy / "crashloop.yaml")]) == 2
    assert "default.yaml" in " ".join(capsys.readouterr().err.split())


def test_a_worker_without_a_profile_is_refused(
    spec_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = spec_copy / "crashloop.yaml"
    spec.write_text(spec.read_text().replace("    profile: default\n", ""))
    assert cli.main(["up", "--config", str(spec)]) == 2
    message = " ".join(capsys.readouterr().err.split())
    assert "crashloop.yaml" in message
    assert "'default'" in message
    assert "profile" in message


def test_a_kubernetes_version_that_is_not_pinned_is_refused() -> None:
    with pytest.raises(HarnessError, match=r"v1\.34\.0 is not pinned") as raised:
        nodeselect.check_kubernetes_version("v1.34.0")
    for version in pins.SUPPORTED_KUBERNETES_VERSIONS:
        assert version in raised.value.problem
    assert "--kubernetes" in raised.value.fix


@pytest.mark.parametrize("text", ["1.34", "v1.34", "v1.34.11", "1.34.11"])
def test_a_pinned_release_is_found_by_minor_or_exact_version(text: str) -> None:
    assert nodeselect.check_kubernetes_version(text).version == "v1.34.11"


def test_a_newer_patch_the_proxy_does_not_serve_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The proxy's answer stands in for the network here; the command itself is
    # shown in docs/results.md (`crashloop config --kubernetes 1.35.99`).
    answers = {"v1.35.99": "403 Forbidden: This module version is not available."}
    monkeypatch.setattr(nodeselect, "served", answers.get)
    with pytest.raises(HarnessError, match=r"v1\.35\.99 cannot be built here") as raised:
        nodeselect.check_kubernetes_version("1.35.99")
    assert "not available" in raised.value.problem
    assert pins.KUBERNETES_VERSION in raised.value.fix
    assert nodeselect.check_kubernetes_version("1.35.9").version == "v1.35.9"


def test_the_default_kubernetes_version_is_accepted() -> None:
    assert nodeselect.check_kubernetes_version(pins.KUBERNETES_VERSION) == pins.DEFAULT_KUBERNETES


def test_an_engine_the_harness_did_not_start_is_not_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("crashloop_harness.substrate.engine.cache_dir", lambda: tmp_path)
    (tmp_path / "engine").mkdir()
    # A pid no process has: the pidfile of an engine that is long gone.
    (tmp_path / "engine" / "dockerd.pid").write_text("999999999\n")
    assert cli.main(["engine", "--stop"]) == 2
    err = capsys.readouterr().err
    assert "no running Docker engine was started by the harness" in err
    assert "systemctl stop docker" in err


def test_kubectl_copies_of_removed_images_are_pruned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("kubectl-aaaaaaaaaaaaaaaa", "kubectl-bbbbbbbbbbbbbbbb", "kubectl-cc.partial"):
        (bin_dir / name).write_text("")
    (bin_dir / "kind-v0.33.0").write_text("")
    monkeypatch.setattr(nodeselect, "cache_dir", lambda: tmp_path)
    monkeypatch.setattr(
        nodeselect, "run", lambda _argv, **_kw: "sha256:" + "a" * 64 + "\nsha256:" + "d" * 64 + "\n"
    )
    nodeselect.prune_kubectl_copies()
    assert sorted(p.name for p in bin_dir.iterdir()) == [
        "kind-v0.33.0",
        "kubectl-aaaaaaaaaaaaaaaa",
        "kubectl-cc.partial",
    ]


def test_a_pid_that_is_not_dockerd_is_never_taken_for_the_engine() -> None:
    # A stale pidfile's number may belong to any process by now, this one say.
    assert not engine.is_live_dockerd(os.getpid())
    assert not engine.is_live_dockerd(999_999_999)


def _status(name: str, internal_ip: str | None) -> NodeStatus:
    return NodeStatus(
        name=name, ready=True, kubelet_version="v1.35.8", labels={}, internal_ip=internal_ip
    )


def test_nodes_whose_addresses_swapped_after_a_restart_are_named() -> None:
    statuses = [
        _status("crashloop-worker", "172.18.0.3"),
        _status("crashloop-worker2", "172.18.0.4"),
        _status("crashloop-control-plane", "172.18.0.2"),
        _status("crashloop-worker3", None),
    ]
    ips = {
        "crashloop-worker": "172.18.0.4",
        "crashloop-worker2": "172.18.0.3",
        "crashloop-control-plane": "172.18.0.2",
        "crashloop-worker3": "172.18.0.5",
    }
    assert nodecontainers.moved_nodes(statuses, ips) == [
        "crashloop-worker: the API server has 172.18.0.3, the container has 172.18.0.4",
        "crashloop-worker2: the API server has 172.18.0.4, the container has 172.18.0.3",
    ]
    assert nodecontainers.moved_nodes(statuses[2:], ips) == []


def test_sigint_interrupts_even_when_inherited_as_ignored(
    capsys: pytest.CaptureFixture[str],
) -> None:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with pytest.raises(SystemExit):
            cli.main(["--help"])
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)
    assert "crashloop" in capsys.readouterr().out


def test_every_command_has_its_handler_its_description_and_its_exit_codes() -> None:
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    for name, command in commands.choices.items():
        assert callable(command.get_default("handler")), name
        assert command.description, f"{name} has no description"
        assert command.epilog, name
        assert command.epilog.startswith("example:\n  "), name
        assert "\n\nexit codes:\n" in command.epilog, name


def test_a_scenario_that_needs_the_node_s_files_is_refused_on_an_existing_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kubeconfig = tmp_path / "kubeconfig"  # never read: the refusal comes first
    code = cli.main(
        [
            "scenarios",
            "--kubeconfig",
            str(kubeconfig),
            "--nodes",
            "n1",
            "--scenarios",
            "restart-all",
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "run restart-all, which reads the workload's files on the node" in err
    assert "without --kubeconfig" in err


def test_ordinal_failures_below_one_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["scenarios", "--ordinal-failures", "0"])
    assert "--ordinal-failures" in capsys.readouterr().err


def test_a_scenario_a_release_cannot_run_is_refused_before_anything(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = cli.main(["scenarios", "--kubernetes", "1.34", "--scenarios", "restart-rules"])
    assert code == 2
    err = capsys.readouterr().err
    assert "restart-rules needs 1.35 or later" in err
    assert "--kubernetes" in err


def test_the_demo_refuses_a_scenario_its_release_cannot_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = cli.main(["demo", "--kubernetes", "1.34", "--plain", "--scenarios", "restart-all"])
    assert code == 2
    assert "restart-all needs 1.35 or later" in capsys.readouterr().err


def test_a_bug_of_the_harness_exits_3_not_1_with_its_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(_args: object) -> int:
        """a command with a bug

        Its help is read when the parser is built, as every command's is.
        """
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(cli_cluster, "_cmd_rbac", broken)
    assert cli.main(["rbac"]) == cli.INTERNAL_ERROR == 3
    err = " ".join(capsys.readouterr().err.split())
    assert "Traceback" in err
    assert "internal error: ZeroDivisionError: division by zero" in err


@pytest.mark.parametrize(("text", "seconds"), [("3m", 180.0), ("1m30s", 90.0), ("90", 90.0)])
def test_a_duration_is_written_as_every_other_duration_here(text: str, seconds: float) -> None:
    args = build_parser().parse_args(["demo", "--duration", text])
    assert args.duration == seconds


def test_a_demo_duration_too_short_is_refused_in_its_own_syntax(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["demo", "--duration", "2s"]) == 2
    error = " ".join(capsys.readouterr().err.split())
    assert "--duration 2s is outside 30..360s" in error
    assert "invalid float" not in error


@pytest.mark.parametrize("text", ["-5", "0", "0s", "nan", "inf"])
def test_a_duration_of_no_time_is_refused_even_for_a_replay(
    capsys: pytest.CaptureFixture[str], text: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["demo", "--replay", "--duration", text])
    assert exited.value.code == 2
    assert "a duration must be more than 0" in capsys.readouterr().err


def test_status_without_the_docker_cli_says_so_not_that_the_engine_stopped(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("crashloop_harness.cli.cluster.shutil.which", lambda _name: None)
    assert cli.main(["status"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "the docker CLI is not installed" in err
    assert "not running" not in err


def test_a_replay_speed_of_zero_is_refused_before_anything_is_drawn(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["demo", "--replay", str(tmp_path), "--speed", "0"])
    assert exited.value.code == 2
    captured = capsys.readouterr()
    assert "'0' is not a number above 0" in captured.err
    assert captured.out == ""


# What prints content rather than a report (YAML to apply, a shell script) or draws a live
# view for a room: no JSON form.
NO_JSON = {
    "rbac": "YAML for kubectl apply",
    "cronjob": "YAML for kubectl apply",
    "completion": "a shell script",
    "demo": "a live view",
}


def test_every_command_that_reports_something_speaks_json() -> None:
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    without = {
        name
        for name, sub in commands.choices.items()
        if not any("--output" in action.option_strings for action in sub._actions)
    }
    assert without == set(NO_JSON)


def test_config_as_json_is_the_kind_config_and_each_worker_s_patch(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["config", "-o", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["kind_config"]["kind"] == "Cluster"
    assert [w["worker"] for w in document["workers"]] == ["fast", "reduced", "default"]
    assert document["workers"][0]["patch"]["crashLoopBackOff"] == {
        "maxContainerRestartPeriod": "2s"
    }


def test_manifests_as_json_list_what_was_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "w"
    assert cli.main(["manifests", "--output-dir", str(out), "-o", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert sorted(document["written"]) == sorted(str(p) for p in out.iterdir())


def test_an_oci_archive_where_none_can_be_written_is_refused_before_any_build(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_build(*_args: object, **_kwargs: object) -> Path:
        raise AssertionError("built before the path was checked")

    monkeypatch.setattr(workloadindex, "build_local", no_build)
    assert cli.main(["workload-image", "--oci-archive", str(tmp_path)]) == 2
    assert "is a directory: name the archive file to write" in capsys.readouterr().err
    missing = tmp_path / "no-such-folder" / "workload.oci.tar"
    assert cli.main(["workload-image", "--oci-archive", str(missing)]) == 2
    assert "does not exist: create it" in capsys.readouterr().err


def test_keeping_results_in_the_cluster_without_its_namespace_is_refused_first(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused before any cluster is made or reached: the harness's own cluster keeps nothing."""

    def no_cluster(*_: object, **__: object) -> None:
        raise AssertionError("a cluster was asked for")

    monkeypatch.setattr(common, "target", no_cluster)
    assert cli.main(["check", "--keep-in-cluster"]) == 2
    message = " ".join(capsys.readouterr().err.split())
    assert "--keep-in-cluster keeps the results in the check's prepared namespace" in message
    assert "add --namespace NAMESPACE" in message


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        ([], "name them one way: --node-selector or --per-group"),
        (["--node-selector", "a", "--per-group", "2"], "name them one way"),
        (["--node-selector", "a", "--expect", "a:max=1s"], "--per-group was not given"),
        (["--per-group", "2", "--expect", "pool=a:max=soon"], "soon"),
        (["--per-group", "2", "--kubelet-ca-configmap", "Kubelet CAs"], "not a ConfigMap name"),
    ],
    ids=["neither", "both", "expect without a plan", "a mistyped expectation", "a bad name"],
)
def test_a_cronjob_that_names_its_nodes_wrongly_is_refused_before_anything_is_printed(
    capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    assert cli.main(["cronjob", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert said in " ".join(captured.err.split())


def test_a_fleet_that_keeps_results_in_its_clusters_needs_their_namespace(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["fleet", "--keep-in-cluster", "--kubeconfig", "/nonexistent"]) == 2
    message = " ".join(capsys.readouterr().err.split())
    assert "--keep-in-cluster keeps the results in the checks' prepared namespace" in message
