"""Cluster spec and worker profile loading (crashloop_harness.cluster.profiles)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from crashloop_harness.cluster.profiles import (
    ClusterSpec,
    ProfileError,
    load_cluster_spec,
    load_profile,
)
from crashloop_harness.core.resources import CLUSTERS_DIR

CLUSTERS = CLUSTERS_DIR

HEADER = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
FAST = HEADER + "crashLoopBackOff:\n  maxContainerRestartPeriod: 2s\n"
REDUCED = (
    HEADER + "featureGates:\n  ReduceDefaultCrashLoopBackOffDecay: true\n"
    "crashLoopBackOff:\n  maxContainerRestartPeriod: 60s\n"
)
SPEC = """\
name: demo
workers:
  - {name: fast, profile: fast}
  - {name: slow, profile: default}
"""


def seconds(*values: float) -> list[timedelta]:
    return [timedelta(seconds=v) for v in values]


def make_cluster(root: Path, spec: str = SPEC, profiles: dict[str, str] | None = None) -> Path:
    """Write a spec and its profiles under root; return the spec path."""
    profile_dir = root / "profiles"
    profile_dir.mkdir(parents=True, exist_ok=True)
    for name, text in (profiles or {"fast": FAST, "default": HEADER}).items():
        (profile_dir / f"{name}.yaml").write_text(text, encoding="utf-8")
    spec_path = root / "crashloop.yaml"
    spec_path.write_text(spec, encoding="utf-8")
    return spec_path


def load_error(spec_path: Path) -> ProfileError:
    with pytest.raises(ProfileError) as caught:
        load_cluster_spec(spec_path)
    return caught.value


def assert_names(error: ProfileError, path: Path, worker: str | None, field: str) -> None:
    """The message names the file, the worker and the field, and has a fix."""
    message = str(error)
    assert error.path == path
    assert error.field == field
    assert error.worker == worker
    assert message.startswith(f"{path}: ")
    if worker is not None:
        assert f"worker {worker!r}" in message
    # A parse error names its place in the file instead of a field.
    at = field if field.startswith("line ") else f"field {field}"
    assert f": {at}: " in message
    assert "Fix: " in message
    assert error.fix
    assert isinstance(error, ValueError)


# --- the project's own files ------------------------------------------------------


def test_project_cluster_has_fast_reduced_default_workers() -> None:
    spec = load_cluster_spec(CLUSTERS / "crashloop.yaml")
    assert spec.name == "crashloop"
    assert [(w.name, w.profile.name) for w in spec.workers] == [
        ("fast", "fast"),
        ("reduced", "reduced"),
        ("default", "default"),
    ]
    assert spec.worker("fast").curve.delays(4) == seconds(0, 2, 2, 2)
    assert spec.worker("reduced").curve.delays(9) == seconds(0, 1, 2, 4, 8, 16, 32, 60, 60)
    assert spec.worker("default").curve.delays(8) == seconds(0, 10, 20, 40, 80, 160, 300, 300)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("fast", seconds(0, 2, 2, 2)),
        ("reduced", seconds(0, 1, 2, 4, 8, 16, 32, 60, 60)),
        ("default", seconds(0, 10, 20, 40, 80, 160, 300, 300)),
        ("gate-only", seconds(0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300)),
    ],
)
def test_project_profile_curves(name: str, expected: list[timedelta]) -> None:
    profile = load_profile(CLUSTERS / "profiles" / f"{name}.yaml")
    assert profile.name == name
    assert profile.curve.delays(len(expected)) == expected


def test_project_profiles_are_minimal_patches() -> None:
    default = load_profile(CLUSTERS / "profiles" / "default.yaml").patch()
    gate_only = load_profile(CLUSTERS / "profiles" / "gate-only.yaml").patch()
    assert default == {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
    }
    assert gate_only["featureGates"] == {"ReduceDefaultCrashLoopBackOffDecay": True}
    assert "crashLoopBackOff" not in gate_only


# --- the loaded objects -----------------------------------------------------------


def test_profiles_are_listed_once_in_first_use_order(tmp_path: Path) -> None:
    spec = load_cluster_spec(
        make_cluster(
            tmp_path,
            "name: demo\nworkers:\n  - {name: a, profile: default}\n"
            "  - {name: b, profile: fast}\n  - {name: c, profile: default}\n",
        )
    )
    assert [p.name for p in spec.profiles] == ["default", "fast"]
    assert spec.worker("a").profile is spec.worker("c").profile


def test_unknown_worker_lookup_raises_key_error(tmp_path: Path) -> None:
    spec = load_cluster_spec(make_cluster(tmp_path))
    with pytest.raises(KeyError, match="nope"):
        spec.worker("nope")


def test_patch_returns_a_fresh_copy(tmp_path: Path) -> None:
    profile = load_cluster_spec(make_cluster(tmp_path)).worker("fast").profile
    patch = profile.patch()
    patch["crashLoopBackOff"]["maxContainerRestartPeriod"] = "9s"
    assert profile.patch()["crashLoopBackOff"] == {"maxContainerRestartPeriod": "2s"}


def test_profiles_dir_can_be_moved(tmp_path: Path) -> None:
    make_cluster(tmp_path / "elsewhere")
    spec_path = tmp_path / "crashloop.yaml"
    spec_path.write_text("profilesDir: elsewhere/profiles\n" + SPEC, encoding="utf-8")
    assert load_cluster_spec(spec_path).worker("fast").profile.path == (
        tmp_path / "elsewhere" / "profiles" / "fast.yaml"
    )


def test_accepts_str_paths(tmp_path: Path) -> None:
    assert isinstance(load_cluster_spec(str(make_cluster(tmp_path))), ClusterSpec)


# --- config hash ------------------------------------------------------------------


def spec_hash(root: Path, spec: str = SPEC, profiles: dict[str, str] | None = None) -> str:
    return load_cluster_spec(make_cluster(root, spec, profiles)).config_hash


def test_config_hash_is_sha256_hex_and_stable(tmp_path: Path) -> None:
    first = spec_hash(tmp_path / "a")
    assert len(first) == 64
    assert int(first, 16) >= 0
    assert spec_hash(tmp_path / "b") == first


def test_config_hash_ignores_comments_formatting_and_key_order(tmp_path: Path) -> None:
    reformatted_spec = (
        "# comment\nworkers:\n- profile: fast\n  name: fast\n"
        "- name: slow\n  profile: default\nname: demo\n"
    )
    reformatted_fast = (
        "kind: KubeletConfiguration  # why\ncrashLoopBackOff: {maxContainerRestartPeriod: 2s}\n"
        "apiVersion: kubelet.config.k8s.io/v1beta1\n"
    )
    assert spec_hash(tmp_path / "a") == spec_hash(
        tmp_path / "b", reformatted_spec, {"fast": reformatted_fast, "default": HEADER}
    )


@pytest.mark.parametrize(
    ("spec", "profiles"),
    [
        (SPEC.replace("name: demo", "name: other"), None),
        (SPEC.replace("name: slow", "name: slower"), None),
        (
            "name: demo\nworkers:\n  - {name: slow, profile: default}\n"
            "  - {name: fast, profile: fast}\n",
            None,
        ),
        (SPEC, {"fast": FAST.replace("2s", "3s"), "default": HEADER}),
        (SPEC, {"fast": FAST, "default": HEADER + "featureGates: {ContainerRestartRules: true}\n"}),
    ],
)
def test_config_hash_changes_with_the_config(
    tmp_path: Path, spec: str, profiles: dict[str, str] | None
) -> None:
    assert spec_hash(tmp_path / "a") != spec_hash(tmp_path / "b", spec, profiles)


def test_unused_profiles_do_not_change_the_hash(tmp_path: Path) -> None:
    extra = {"fast": FAST, "default": HEADER, "reduced": REDUCED}
    assert spec_hash(tmp_path / "a") == spec_hash(tmp_path / "b", SPEC, extra)


def test_profile_content_hash_follows_the_patch(tmp_path: Path) -> None:
    spec = load_cluster_spec(make_cluster(tmp_path))
    fast, default = spec.worker("fast").profile, spec.worker("slow").profile
    assert len(fast.content_hash) == 64
    assert fast.content_hash != default.content_hash


# --- bad profile patches -------------------------------------------------------------


PERIOD = "crashLoopBackOff.maxContainerRestartPeriod"
REDUCE = "ReduceDefaultCrashLoopBackOffDecay"


def with_period(value: str) -> str:
    return HEADER + f"crashLoopBackOff:\n  maxContainerRestartPeriod: {value}\n"


def with_gates(gates: str) -> str:
    return HEADER + f"featureGates:\n{gates}"


BAD_PATCHES = [
    (with_period("500ms"), PERIOD, "500ms is outside 1s..300s"),
    (with_period("301s"), PERIOD, "5m1s is outside 1s..300s"),
    (with_period("999ms"), PERIOD, "outside 1s..300s"),
    (with_period("abc"), PERIOD, "invalid duration 'abc'"),
    (with_period("2"), PERIOD, "Go duration string"),
    (HEADER + "crashLoopBackOff: 2s\n", "crashLoopBackOff", "expected a map"),
    (
        HEADER + "crashLoopBackOff:\n  maxContainerRestartPeriods: 2s\n",
        "crashLoopBackOff.maxContainerRestartPeriods",
        "unknown field",
    ),
    (
        with_gates("  KubeletCrashLoopBackoffMax: true\n"),
        "featureGates.KubeletCrashLoopBackoffMax",
        "unknown feature gate",
    ),
    (with_gates("  NoSuchGate: true\n"), "featureGates.NoSuchGate", "unknown feature gate"),
    (with_gates(f"  {REDUCE}: 'true'\n"), f"featureGates.{REDUCE}", "expected true or false"),
    (HEADER + f"featureGates: [{REDUCE}]\n", "featureGates", "map of gate name"),
    (
        with_gates("  KubeletCrashLoopBackOffMax: false\n")
        + "crashLoopBackOff:\n  maxContainerRestartPeriod: 2s\n",
        PERIOD,
        "KubeletCrashLoopBackOffMax is disabled",
    ),
    (HEADER.replace("KubeletConfiguration", "[unclosed"), "line 3, column 1", "not valid YAML"),
    ("- " + HEADER.split("\n", 1)[0] + "\n", "(document)", "not a mapping (got list)"),
    ("", "(document)", "not a mapping (got NoneType)"),
    ("just text\n", "(document)", "not a mapping (got str)"),
    (HEADER + "---\n" + HEADER, "line 3, column 1", "not valid YAML"),
    (
        HEADER.replace("KubeletConfiguration", "KubeProxyConfiguration"),
        "kind",
        "expected 'KubeletConfiguration'",
    ),
    (HEADER.replace("kind: KubeletConfiguration\n", ""), "kind", "got None"),
    (HEADER.replace("v1beta1", "v1"), "apiVersion", "expected 'kubelet.config.k8s.io/v1beta1'"),
    (HEADER.split("\n", 1)[1], "apiVersion", "got None"),
    (
        HEADER + "crashloopBackOff:\n  maxContainerRestartPeriod: 2s\n",
        "crashloopBackOff",
        "misspelt field",
    ),
    (HEADER + f"featuregates:\n  {REDUCE}: true\n", "featuregates", "misspelt field"),
    (
        with_period("2s") + "  maxContainerRestartPeriod: 3s\n",
        "line 5, column 3",
        "duplicate key 'maxContainerRestartPeriod'",
    ),
    (
        HEADER + "evictionHard: {memory.available: 2024-01-01}\n",
        "(document)",
        "not plain JSON data",
    ),
]


@pytest.mark.parametrize(("patch", "field", "text"), BAD_PATCHES)
def test_bad_patch_names_file_worker_and_field(
    tmp_path: Path, patch: str, field: str, text: str
) -> None:
    spec_path = make_cluster(tmp_path, profiles={"fast": patch, "default": HEADER})
    error = load_error(spec_path)
    assert_names(error, tmp_path / "profiles" / "fast.yaml", "fast", field)
    assert text in str(error)


def test_range_error_says_how_to_fix(tmp_path: Path) -> None:
    patch = HEADER + "crashLoopBackOff:\n  maxContainerRestartPeriod: 500ms\n"
    error = load_error(make_cluster(tmp_path, profiles={"fast": patch, "default": HEADER}))
    assert '"1s" to "300s"' in error.fix
    assert "checked in milliseconds" in str(error)


def test_gate_typo_suggests_the_right_name(tmp_path: Path) -> None:
    patch = HEADER + "featureGates:\n  KubeletCrashLoopBackoffMax: true\n"
    error = load_error(make_cluster(tmp_path, profiles={"fast": patch, "default": HEADER}))
    assert 'did you mean "KubeletCrashLoopBackOffMax"' in str(error)


def test_gate_off_error_says_how_to_fix(tmp_path: Path) -> None:
    patch = (
        HEADER + "featureGates:\n  KubeletCrashLoopBackOffMax: false\n"
        "crashLoopBackOff:\n  maxContainerRestartPeriod: 2s\n"
    )
    error = load_error(make_cluster(tmp_path, profiles={"fast": patch, "default": HEADER}))
    assert "featureGates.KubeletCrashLoopBackOffMax: true" in error.fix


@pytest.mark.parametrize("field", ["1s", "300s", "1500ms", "5m", "300000.9ms"])
def test_edge_values_inside_the_range_load(tmp_path: Path, field: str) -> None:
    patch = HEADER + f"crashLoopBackOff:\n  maxContainerRestartPeriod: {field}\n"
    spec = load_cluster_spec(make_cluster(tmp_path, profiles={"fast": patch, "default": HEADER}))
    assert spec.worker("fast").profile.config.max_container_restart_period is not None


def test_other_kubelet_fields_are_kept_in_the_patch(tmp_path: Path) -> None:
    patch = FAST + "maxPods: 50\n"
    spec = load_cluster_spec(make_cluster(tmp_path, profiles={"fast": patch, "default": HEADER}))
    assert spec.worker("fast").profile.patch()["maxPods"] == 50


def test_broken_profile_is_reported_for_the_first_worker_using_it(tmp_path: Path) -> None:
    spec = "name: demo\nworkers:\n  - {name: one, profile: fast}\n  - {name: two, profile: fast}\n"
    bad = HEADER + "featureGates: {Nope: true}\n"
    error = load_error(make_cluster(tmp_path, spec, {"fast": bad}))
    assert_names(error, tmp_path / "profiles" / "fast.yaml", "one", "featureGates.Nope")


def test_load_profile_alone_has_no_worker(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("kind: Nope\n", encoding="utf-8")
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    assert_names(caught.value, path, None, "apiVersion")
    assert "worker" not in str(caught.value)


def test_unreadable_profile_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "missing.yaml"
    with pytest.raises(ProfileError) as caught:
        load_profile(path, worker="w")
    assert_names(caught.value, path, "w", "(file)")
    assert "cannot read" in str(caught.value)


# --- bad cluster specs ---------------------------------------------------------------


def named_spec(*workers: str, extra: str = "") -> str:
    """A spec named demo with the given flow-style worker entries."""
    return "name: demo\n" + extra + "workers:\n" + "".join(f"  - {w}\n" for w in workers)


LONG = "a" * 64
BAD_SPECS = [
    (named_spec("{name: fast}"), "fast", "workers[0].profile", "has no profile"),
    (
        named_spec("{name: fast, profile: nope}"),
        "fast",
        "workers[0].profile",
        "unknown profile 'nope'",
    ),
    (
        named_spec("{name: fast, profile: Fast}"),
        "fast",
        "workers[0].profile",
        "invalid name 'Fast'",
    ),
    (named_spec("{name: fast, profile: 3}"), "fast", "workers[0].profile", "invalid name 3"),
    (
        named_spec("{name: a, profile: fast}", "{name: a, profile: default}"),
        "a",
        "workers[1].name",
        "duplicate worker name 'a'",
    ),
    (named_spec("{name: a, profile: fast, image: x}"), "a", "workers[0].image", "unknown field"),
    (named_spec("{profile: fast}"), "workers[0]", "workers[0].name", "invalid name None"),
    (
        named_spec("{name: Fast_1, profile: fast}"),
        "Fast_1",
        "workers[0].name",
        "invalid name 'Fast_1'",
    ),
    (named_spec(f"{{name: {LONG}, profile: fast}}"), LONG, "workers[0].name", "invalid name"),
    (named_spec("fast"), None, "workers[0]", "expected a map"),
    ("name: demo\nworkers: []\n", None, "workers", "non-empty list"),
    ("name: demo\nworkers: fast\n", None, "workers", "non-empty list"),
    ("name: demo\n", None, "workers", "non-empty list"),
    ("workers:\n  - {name: fast, profile: fast}\n", None, "name", "invalid name None"),
    (SPEC.replace("demo", "Demo"), None, "name", "invalid name 'Demo'"),
    (named_spec("{name: fast, profile: fast}", extra="nodes: 3\n"), None, "nodes", "unknown field"),
    (
        named_spec("{name: fast, profile: fast}", extra="profilesDir: 7\n"),
        None,
        "profilesDir",
        "expected a directory path",
    ),
    ("name: demo\nname: again\nworkers: []\n", None, "line 2, column 1", "duplicate key 'name'"),
    ("name: [demo\n", None, "line 2, column 1", "not valid YAML"),
    ("- name: demo\n", None, "(document)", "not a mapping"),
]


@pytest.mark.parametrize(("spec", "worker", "field", "text"), BAD_SPECS)
def test_bad_spec_names_file_worker_and_field(
    tmp_path: Path, spec: str, worker: str | None, field: str, text: str
) -> None:
    spec_path = make_cluster(tmp_path, spec)
    error = load_error(spec_path)
    assert_names(error, spec_path, worker, field)
    assert text in str(error)


def test_unknown_profile_lists_the_available_ones(tmp_path: Path) -> None:
    error = load_error(
        make_cluster(tmp_path, "name: demo\nworkers:\n  - {name: a, profile: nope}\n")
    )
    assert "use one of: default, fast" in error.fix


def test_missing_profile_lists_the_available_ones(tmp_path: Path) -> None:
    error = load_error(make_cluster(tmp_path, "name: demo\nworkers:\n  - {name: a}\n"))
    assert "one of: default, fast" in error.fix


def test_missing_profiles_dir_is_explained(tmp_path: Path) -> None:
    spec_path = tmp_path / "crashloop.yaml"
    spec_path.write_text(SPEC, encoding="utf-8")
    error = load_error(spec_path)
    assert "(no profiles in" in error.fix


def test_missing_spec_file_is_reported(tmp_path: Path) -> None:
    error = load_error(tmp_path / "absent.yaml")
    assert_names(error, tmp_path / "absent.yaml", None, "(file)")


def test_yaml_merge_overrides_are_not_duplicates(tmp_path: Path) -> None:
    spec = "name: demo\nworkers:\n  - &a {name: a, profile: fast}\n  - <<: *a\n    name: b\n"
    loaded = load_cluster_spec(make_cluster(tmp_path, spec))
    assert [(w.name, w.profile.name) for w in loaded.workers] == [("a", "fast"), ("b", "fast")]
