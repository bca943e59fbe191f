"""A patched kubelet's inputs: which files a diff touches, where they live in the module
cache, and a patch that does not apply refused before anything is built."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from crashloop_harness.core import pins
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.substrate import kubeletbuild
from crashloop_harness.substrate.kubeletbuild import apply_patch, module_file, patched_paths

PIN = pins.KUBERNETES["1.35"]

ORIGINAL = textwrap.dedent(
    """\
    package kubelet

    func initial() int {
    \treturn 10
    }
    """
)

PATCH = textwrap.dedent(
    """\
    Initial back-off 20 s: a header line patch ignores.
    --- a/pkg/kubelet/backoff.go
    +++ b/pkg/kubelet/backoff.go
    @@ -1,5 +1,5 @@
     package kubelet
    {blank}
     func initial() int {
    -\treturn 10
    +\treturn 20
     }
    """
).replace("{blank}", " ")


def test_a_diff_names_the_files_it_changes_once_each() -> None:
    two = PATCH + PATCH.replace("pkg/kubelet/backoff.go", "staging/src/k8s.io/client-go/b.go")
    assert patched_paths(two) == ["pkg/kubelet/backoff.go", "staging/src/k8s.io/client-go/b.go"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("just words\n", "changes no file"),
        ("--- /dev/null\n+++ b/pkg/new.go\n@@ -0,0 +1 @@\n+package x\n", "adds or removes"),
        ("--- pkg/a.go\n+++ pkg/a.go\n", "not b/<path>"),
    ],
)
def test_a_diff_the_overlay_cannot_carry_is_refused(text: str, problem: str) -> None:
    with pytest.raises(HarnessError, match=problem):
        patched_paths(text)


def test_staging_files_map_to_their_own_module_at_the_matching_version() -> None:
    assert module_file("staging/src/k8s.io/client-go/util/flowcontrol/backoff.go", "v1.35.8") == (
        "k8s.io/client-go",
        "v0.35.8",
        "util/flowcontrol/backoff.go",
    )
    assert module_file("pkg/kubelet/kubelet.go", "v1.35.8") == (
        "k8s.io/kubernetes",
        "v1.35.8",
        "pkg/kubelet/kubelet.go",
    )


@pytest.fixture
def module_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A release tree holding one file of the release, read-only as Go leaves it."""
    root = tmp_path / "tree-kubernetes"
    source = root / "pkg" / "kubelet" / "backoff.go"
    source.parent.mkdir(parents=True)
    source.write_text(ORIGINAL)
    source.chmod(0o444)
    return root


def test_a_patch_becomes_an_overlay_of_the_module_cache_s_file(
    module_cache: Path, tmp_path: Path
) -> None:
    patch = tmp_path / "initial-20s.patch"
    patch.write_text(PATCH)
    ((original, text),) = apply_patch(patch, PIN, {"k8s.io/kubernetes": module_cache})
    assert original == str(module_cache / "pkg" / "kubelet" / "backoff.go")
    assert "return 20" in text
    assert "return 10" in Path(original).read_text()  # the cache is never written


def test_a_patch_that_does_not_apply_is_refused_with_patch_s_words(
    module_cache: Path, tmp_path: Path
) -> None:
    patch = tmp_path / "stale.patch"
    patch.write_text(PATCH.replace("-\treturn 10", "-\treturn 11"))
    with pytest.raises(HarnessError, match=r"does not apply to Kubernetes v1\.35\.8") as error:
        apply_patch(patch, PIN, {"k8s.io/kubernetes": module_cache})
    assert "FAILED" in str(error.value)


def test_a_patch_of_a_module_without_a_tree_is_refused(module_cache: Path, tmp_path: Path) -> None:
    patch = tmp_path / "api.patch"
    patch.write_text(PATCH.replace("pkg/kubelet/backoff.go", "staging/src/k8s.io/api/x.go"))
    with pytest.raises(HarnessError, match=r"patches reach k8s\.io/kubernetes only"):
        apply_patch(patch, PIN, {"k8s.io/kubernetes": module_cache})


def test_a_patch_of_a_file_the_release_lacks_is_refused(module_cache: Path, tmp_path: Path) -> None:
    patch = tmp_path / "elsewhere.patch"
    patch.write_text(PATCH.replace("pkg/kubelet/backoff.go", "pkg/kubelet/nothere.go"))
    with pytest.raises(HarnessError, match=r"which Kubernetes v1\.35\.8 does not have"):
        apply_patch(patch, PIN, {"k8s.io/kubernetes": module_cache})


def test_a_tree_that_is_not_kubernetes_is_refused(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("module example.com/other\n")
    with pytest.raises(HarnessError, match="not a Kubernetes source tree"):
        kubeletbuild.check_source_tree(tmp_path)


def test_a_binary_of_another_minor_is_refused(tmp_path: Path) -> None:
    binary = tmp_path / "kubelet"
    binary.write_text("#!/bin/sh\necho Kubernetes v1.34.11\n")
    binary.chmod(0o755)
    with pytest.raises(HarnessError, match=r"the cluster runs Kubernetes v1\.35\.8"):
        kubeletbuild.kubelet_from_binary(binary, PIN)
    binary.write_text("#!/bin/sh\necho Kubernetes v1.35.9-dirty\n")
    assert kubeletbuild.kubelet_from_binary(binary, PIN).release == "v1.35.9-dirty"


def test_a_kubernetes_tree_is_known_by_its_module_line_after_go_mod_s_comments(
    tmp_path: Path,
) -> None:
    (tmp_path / "go.mod").write_text("// generated\n\nmodule k8s.io/kubernetes\n\ngo 1.25\n")
    (tmp_path / "cmd" / "kubelet").mkdir(parents=True)
    # Past the module check, the tree must have a tag to say which kubelet it is.
    with pytest.raises(HarnessError, match="no release tag"):
        kubeletbuild.check_source_tree(tmp_path)


def test_a_kubelet_from_a_tree_reports_the_trees_version_not_v0_0_0_master(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unstamped, a kubelet built from a checkout says v0.0.0-master: no release's rules apply
    to it and its node never settles (found on a real tree). It is stamped as upstream does."""
    calls: list[list[str]] = []

    def fake_run(command: list[str], **_kwargs: object) -> str:
        calls.append(command)
        answers = {
            "--abbrev=0": "v1.35.8\n",
            "rev-parse": "b7cb6c7a2d5c0000000000000000000000000000\n",
            "--dirty": "v1.35.8-1-gb7cb6c7a\n",
            "--format=%cI": "2026-12-04T20:00:00+00:00\n",
            "diff": "",
        }
        for word, answer in answers.items():
            if word in command:
                return answer
        if command[:2] == ["go", "build"]:
            Path(command[command.index("-o") + 1]).write_bytes(b"kubelet")
        return ""

    def fake_cache(_what: str, _key: str, make: object) -> Path:
        out = tmp_path / "cache"
        out.mkdir()
        assert callable(make)
        make(out)
        return out

    monkeypatch.setattr(kubeletbuild, "run", fake_run)
    monkeypatch.setattr(kubeletbuild, "cached_dir", fake_cache)
    monkeypatch.setattr(kubeletbuild, "go_version", lambda: "go1.26")
    (tmp_path / "go.mod").write_text("module k8s.io/kubernetes\n")
    (tmp_path / "cmd" / "kubelet").mkdir(parents=True)
    kubelet = kubeletbuild.kubelet_from_source(tmp_path, PIN)
    (build,) = [c for c in calls if c[:2] == ["go", "build"]]
    ldflags = build[build.index("-ldflags") + 1]
    assert "-X k8s.io/component-base/version.gitVersion=v1.35.8-1-gb7cb6c7a" in ldflags
    assert "-X k8s.io/component-base/version.gitMinor=35" in ldflags
    assert kubelet.release == "v1.35.8"
