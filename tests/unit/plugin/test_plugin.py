"""The pytest plugin as a user's suite meets it: alone or beside pytest-kind, options, markers,
output."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from crashloop_harness.core import pins

USAGE_ERROR = pytest.ExitCode.USAGE_ERROR


def test_both_plugins_load_together_and_offer_their_options(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    assert result.ret == pytest.ExitCode.OK
    text = result.stdout.str()
    for option in ("--crashloop-config", "--crashloop-kubernetes", "--crashloop-keep"):
        assert option in text
    # pytest-kind's own, used by this plugin rather than defined twice.
    for option in ("--cluster-name", "--keep-cluster", "--kind-image", "--kind-bin"):
        assert text.count(option) >= 1


# pytest-kind's plugin, as its entry point names it: `-p no:` it and the session is one
# whose environment has the plugin without the `kind` extra.
WITHOUT_PYTEST_KIND = ("-p", "no:pytest-kind-ng")
# Options suites of Kubernetes tests commonly define for themselves.
THEIR_OPTIONS = (
    "--kubeconfig",
    "--cluster-name",
    "--keep-cluster",
    "--kind-image",
    "--context",
    "--namespace",
)


def test_a_suite_with_its_own_kubernetes_options_runs_beside_the_plugin(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(
        "def pytest_addoption(parser):\n"
        + "".join(f"    parser.addoption({name!r}, default=None)\n" for name in THEIR_OPTIONS)
    )
    pytester.makepyfile(
        """
        def test_theirs(pytestconfig):
            assert pytestconfig.getoption("--kubeconfig") == "theirs.yaml"
        """
    )
    result = pytester.runpytest(*WITHOUT_PYTEST_KIND, "--kubeconfig", "theirs.yaml")
    result.assert_outcomes(passed=1)


def test_every_option_the_plugin_adds_is_prefixed(pytester: pytest.Pytester) -> None:
    bare = pytester.runpytest("-p", "no:crashloop", *WITHOUT_PYTEST_KIND, "--help")
    ours = pytester.runpytest(*WITHOUT_PYTEST_KIND, "--help")
    options = re.compile(r"^\s+(--[a-z][\w-]*)", re.MULTILINE)
    added = set(options.findall(ours.stdout.str())) - set(options.findall(bare.stdout.str()))
    assert added
    assert {option for option in added if not option.startswith("--crashloop-")} == set()


def test_without_pytest_kind_its_own_options_name_the_cluster(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(USES_THE_CLUSTER)
    result = pytester.runpytest(
        *WITHOUT_PYTEST_KIND,
        "--co",
        "--crashloop-cluster-name",
        "theirs",
        "--crashloop-keep",
        "always",
    )
    text = result.stdout.str()
    assert "cluster theirs (Kubernetes" in text
    assert "keep always" in text


def test_crashloop_kind_cluster_without_pytest_kind_names_the_extra(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(
        """
        import sys
        from pathlib import Path

        import pytest

        sys.modules["pytest_kind"] = None  # as if never installed: importing it fails


        @pytest.fixture(scope="session")
        def crashloop_cluster():
            return object()
        """
    )
    pytester.makepyfile("def test_it(crashloop_kind_cluster): pass\n")
    result = pytester.runpytest(*WITHOUT_PYTEST_KIND)
    result.assert_outcomes(errors=1)
    text = result.stdout.str()
    assert "pip install 'crashloop-harness[kind]'" in text
    assert "Traceback" not in text


def test_only_its_namespaced_markers_are_registered(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.crashloop_matrix
        @pytest.mark.crashloop_disruptive
        def test_marked():
            pass
        """
    )
    pytester.runpytest("--strict-markers", "-m", "crashloop_matrix").assert_outcomes(passed=1)
    markers = pytester.runpytest("--markers", "--crashloop-keep", "never").stdout.str()
    assert "@pytest.mark.crashloop_matrix" in markers
    for generic in ("e2e", "slow", "matrix", "disruptive", "conformance", "scenarios"):
        assert f"@pytest.mark.{generic}:" not in markers, generic


def test_a_project_that_names_no_marker_of_ours_sees_none(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_theirs(): pass\n")
    pytester.runpytest("--strict-markers").assert_outcomes(passed=1)
    markers = pytester.runpytest("--markers").stdout.str()
    assert "crashloop" not in markers


def test_a_user_s_own_marker_of_a_generic_name_is_theirs(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nmarkers =\n    slow: this project's own slow tests\n")
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.slow
        def test_theirs():
            pass
        """
    )
    result = pytester.runpytest("--strict-markers", "--markers")
    assert "this project's own slow tests" in result.stdout.str()
    pytester.runpytest("--strict-markers").assert_outcomes(passed=1)


def test_a_matrix_test_runs_only_when_m_names_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.crashloop_matrix
        def test_every_release():
            pass

        def test_other():
            pass
        """
    )
    pytester.runpytest().assert_outcomes(passed=1, deselected=1)
    pytester.runpytest("-m", "crashloop_matrix").assert_outcomes(passed=1, deselected=1)


def test_a_disruptive_test_runs_after_every_other(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.crashloop_disruptive
        def test_a_breaks_nodes():
            pass

        def test_b_measures():
            pass
        """
    )
    result = pytester.runpytest("-v")
    lines = [line for line in result.outlines if "PASSED" in line]
    assert ["test_b_measures" in lines[0], "test_a_breaks_nodes" in lines[1]] == [True, True]


def test_the_check_profile_and_the_versions_come_from_the_plugin(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        def test_options(crashloop_check_profile, crashloop_versions):
            assert crashloop_check_profile.name == "full"
            assert [pin.minor for pin in crashloop_versions] == ["1.34", "1.35"]
        """
    )
    result = pytester.runpytest(
        "--crashloop-check-profile", "full", "--crashloop-versions", "1.34,1.35"
    )
    result.assert_outcomes(passed=1)
    pytester.makeini("[pytest]\ncrashloop_check_profile = full\ncrashloop_versions = 1.34,1.35\n")
    pytester.runpytest().assert_outcomes(passed=1)


def test_every_pinned_release_is_the_default_of_versions(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        f"""
        PINNED = {list(pins.SUPPORTED_KUBERNETES_VERSIONS)!r}

        def test_versions(crashloop_versions):
            assert [p.version for p in crashloop_versions] == PINNED
        """
    )
    pytester.runpytest().assert_outcomes(passed=1)


def test_ini_settings_choose_the_release_and_the_command_line_wins(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\ncrashloop_kubernetes = 1.34\ncrashloop_keep = never\n")
    pytester.makepyfile(
        """
        def test_options(crashloop_cluster_options, request):
            expected = request.config.getoption("crashloop_kubernetes") or "1.34"
            assert crashloop_cluster_options.spec.kubernetes.minor == expected
            assert crashloop_cluster_options.keep == "never"
        """
    )
    from_ini = pytester.runpytest()
    from_ini.assert_outcomes(passed=1)
    assert "Kubernetes v1.34.11" in from_ini.stdout.str()
    from_line = pytester.runpytest("--crashloop-kubernetes", "1.36")
    from_line.assert_outcomes(passed=1)
    assert "Kubernetes v1.36.4" in from_line.stdout.str()


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("--crashloop-kubernetes", "1.99"), "1.99"),
        (("--crashloop-config", "no-such-spec"), "gate-only"),
        (("--crashloop-versions", "1.35,latest"), "latest"),
        (("--kind-bin", "/nonexistent/kind"), "/nonexistent/kind"),
        (("--crashloop-cluster-name", "My_Cluster"), "invalid name 'My_Cluster'"),
    ],
)
def test_bad_values_are_refused_once_at_start(
    pytester: pytest.Pytester, args: tuple[str, ...], named: str
) -> None:
    pytester.makepyfile("def test_a(): pass\ndef test_b(): pass\n")
    result = pytester.runpytest(*args)
    assert result.ret == USAGE_ERROR
    errors = result.stderr.str()
    assert named in errors
    assert errors.count("ERROR:") == 1


def test_a_bad_ini_choice_names_the_key_and_the_choices(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ncrashloop_keep = sometimes\n")
    result = pytester.runpytest()
    assert result.ret == USAGE_ERROR
    assert "crashloop_keep = 'sometimes'" in result.stderr.str()
    assert "never, on-failure, always" in result.stderr.str()


def test_every_fixture_is_prefixed_and_explained(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--fixtures")
    text = result.stdout.str()
    for fixture in (
        "crashloop_cluster",
        "crashloop_api",
        "crashloop_node_configs",
        "crashloop_namespace",
        "crashloop_kind_cluster",
        "crashloop_workload_image",
        "crashloop_existing_cluster",
        "crashloop_cluster_options",
        "crashloop_progress",
        "crashloop_check_profile",
        "crashloop_versions",
    ):
        line = next(line for line in text.splitlines() if line.startswith(fixture + " "))
        following = text.splitlines()[text.splitlines().index(line) + 1]
        assert following.strip(), f"{fixture} has no docstring"


def test_progress_reaches_the_terminal_while_output_is_captured(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        def test_progress(crashloop_progress):
            crashloop_progress("building the node image")
            print("captured, not shown")
        """
    )
    result = pytester.runpytest()  # capture on, as by default
    result.assert_outcomes(passed=1)
    assert "[crashloop] 0:00 building the node image" in result.stdout.str()
    assert "captured, not shown" not in result.stdout.str()
    # A suite that measured nothing leaves no runs/ behind.
    assert not (pytester.path / "runs").exists()


USES_THE_CLUSTER = "def test_it(crashloop_cluster_options): pass\n"


def test_pytest_kind_keep_cluster_means_keep_always(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(USES_THE_CLUSTER)
    result = pytester.runpytest("--keep-cluster", "--co")
    assert "keep always" in result.stdout.str()


def test_parallel_workers_are_refused_when_a_test_uses_the_cluster(
    pytester: pytest.Pytester,
) -> None:
    # What pytest-xdist gives each worker; the plugin must refuse from there.
    pytester.makeconftest(
        """
        def pytest_configure(config):
            config.workerinput = {"workercount": 2, "workerid": "gw0"}
        """
    )
    pytester.makepyfile("def test_cluster(crashloop_cluster_options): pass\n")
    result = pytester.runpytest()
    assert result.ret == USAGE_ERROR
    assert "-n 0" in result.stderr.str()


def test_parallel_workers_without_the_cluster_are_left_alone(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        def pytest_configure(config):
            config.workerinput = {"workercount": 2, "workerid": "gw0"}
        """
    )
    pytester.makepyfile("def test_plain(): pass\n")
    pytester.runpytest().assert_outcomes(passed=1)


def test_importing_the_plugin_loads_neither_the_client_nor_the_cluster_code() -> None:
    probe = (
        "import sys, crashloop_harness.plugin; "
        "print(sorted(m for m in ('kubernetes', 'crashloop_harness.cluster.lifecycle', "
        "'pytest_kind') "
        "if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == "[]"


def test_the_header_names_cluster_release_and_keep_policy(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(USES_THE_CLUSTER)
    result = pytester.runpytest("--co")
    text = result.stdout.str()
    assert f"cluster crashloop (Kubernetes {pins.DEFAULT_KUBERNETES.version})" in text
    assert f"kind {pins.KIND_VERSION}" in text
    assert "keep on-failure" in text


def test_the_existing_cluster_fixture_says_what_it_needs(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    kubeconfig = pytester.path / "kubeconfig"
    kubeconfig.write_text(_KUBECONFIG)
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    pytester.makepyfile("def test_it(crashloop_existing_cluster): pass\n")
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    assert "which nodes of the existing cluster? none named" in result.stdout.str()


def test_the_existing_cluster_fixture_takes_kubectl_s_kubeconfig_and_errs_once(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$KUBECONFIG alone reaches the cluster (here an API server that refuses), and the
    refusal prints once: no chain of causes, no urllib3 retry warnings."""
    kubeconfig = pytester.path / "kubeconfig"
    kubeconfig.write_text(_KUBECONFIG)
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    pytester.makepyfile("def test_it(crashloop_existing_cluster): pass\n")
    # -rN: pytest's short summary repeats the message in full where $CI is set and cut short
    # elsewhere; without it, what remains is the error report alone.
    result = pytester.runpytest("--crashloop-existing-nodes", "n1", "-rN")
    result.assert_outcomes(errors=1)
    text = result.stdout.str()
    assert f"the API server of {kubeconfig} did not answer" in text
    assert text.count("did not answer") == 1
    for noise in ("direct cause", "During handling", "Retrying", "Traceback"):
        assert noise not in text


def test_the_existing_cluster_fixture_refuses_a_missing_kubeconfig(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile("def test_it(crashloop_existing_cluster): pass\n")
    result = pytester.runpytest(
        "--crashloop-existing-kubeconfig", "/nonexistent", "--crashloop-existing-nodes", "n1"
    )
    result.assert_outcomes(errors=1)
    assert "kubeconfig /nonexistent: no such file" in result.stdout.str()


def test_a_project_that_uses_none_of_it_hears_nothing_of_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_theirs(): pass\n")
    (pytester.path / "runs").mkdir()
    (pytester.path / "runs" / "20260101T000000Z-check-quick-abcd").mkdir()
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    # pytest's own "plugins:" line names every plugin installed; nothing else is ours.
    ours = [line for line in result.outlines if "crashloop" in line and "plugins:" not in line]
    assert ours == []


def test_an_option_of_ours_given_is_use_enough_for_the_header(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_theirs(): pass\n")
    result = pytester.runpytest("--crashloop-keep", "never")
    assert "keep never" in result.stdout.str()


_KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: ops, context: {cluster: c, user: u}}]
current-context: ops
"""


def test_the_existing_context_is_the_one_asked_for(pytester: pytest.Pytester) -> None:
    kubeconfig = pytester.path / "kubeconfig"
    kubeconfig.write_text(_KUBECONFIG)
    pytester.makepyfile("def test_it(crashloop_existing_cluster): pass\n")
    result = pytester.runpytest(
        "--crashloop-existing-kubeconfig",
        str(kubeconfig),
        "--crashloop-existing-context",
        "prod",
        "--crashloop-existing-nodes",
        "n1",
    )
    result.assert_outcomes(errors=1)
    assert "has no context 'prod'" in result.stdout.str()


def test_nodes_named_and_selected_at_once_are_refused(pytester: pytest.Pytester) -> None:
    kubeconfig = pytester.path / "kubeconfig"
    kubeconfig.write_text(_KUBECONFIG)
    pytester.makeini("[pytest]\ncrashloop_existing_node_selector = pool=batch\n")
    pytester.makepyfile("def test_it(crashloop_existing_cluster): pass\n")
    result = pytester.runpytest(
        "--crashloop-existing-kubeconfig", str(kubeconfig), "--crashloop-existing-nodes", "n1"
    )
    result.assert_outcomes(errors=1)
    assert "both named and selected" in result.stdout.str()


def test_reuse_from_the_flag_or_the_ini_key(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_options(crashloop_cluster_options):
            assert crashloop_cluster_options.reuse
        """
    )
    pytester.runpytest("--crashloop-reuse").assert_outcomes(passed=1)
    pytester.makeini("[pytest]\ncrashloop_reuse = true\n")
    pytester.runpytest().assert_outcomes(passed=1)


def test_the_runs_dir_is_where_runs_go(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        from crashloop_harness.core.paths import runs_path

        def test_where(crashloop_progress, tmp_path_factory):
            assert runs_path().name == "elsewhere"
        """
    )
    # In a process of its own: the option sets the environment the runs are written by.
    result = pytester.runpytest_subprocess("--crashloop-runs-dir", "elsewhere")
    result.assert_outcomes(passed=1)


def _project_with_its_own_marker(pytester: pytest.Pytester, tmp_path: Path) -> Path:
    """A project whose ini registers its own marker, a test using it, and a kubeconfig in
    another folder (returned)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    kubeconfig = elsewhere / "config"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    pytester.makeini("[pytest]\nmarkers =\n    ours: the project's own marker\n")
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.ours
        def test_it():
            pass
        """
    )
    return kubeconfig


def test_a_path_option_written_with_equals_keeps_the_project_s_own_ini(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """pytest finds the rootdir (and so the ini) before a plugin's options are known, so a path
    after ``--crashloop-existing-kubeconfig`` and a space would be taken for the tests' own
    folder. Written with ``=``, as docs/plugin.md writes every path option, the project's ini
    still holds: its marker is known under --strict-markers."""
    kubeconfig = _project_with_its_own_marker(pytester, tmp_path)
    result = pytester.runpytest_subprocess(
        "--strict-markers", f"--crashloop-existing-kubeconfig={kubeconfig}"
    )
    result.assert_outcomes(passed=1)
    assert str(pytester.path) in result.stdout.str()


def test_a_path_option_written_with_a_space_loses_the_project_s_ini(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """The space form, as pytest treats it (why docs/plugin.md writes ``=``): the path is
    taken for an argument before the plugin's options are known, the rootdir moves to its
    folder and the project's ini, and its marker, are not read."""
    kubeconfig = _project_with_its_own_marker(pytester, tmp_path)
    result = pytester.runpytest_subprocess(
        "--strict-markers", "--crashloop-existing-kubeconfig", str(kubeconfig)
    )
    assert result.ret != pytest.ExitCode.OK
    assert "'ours' not found in `markers` configuration option" in result.stdout.str()
    assert f"rootdir: {pytester.path}\n" not in result.stdout.str()
