"""Worker profiles and the cluster description, loaded and validated up front.

Files (the built-in ones under ``harness/crashloop_harness/resources/clusters/``):

* ``crashloop.yaml`` — the cluster: its ``name``, an optional ``profilesDir``
  (default ``profiles``, relative to the file) and the ordered ``workers``,
  each ``{name: <worker>, profile: <profile>}``;
* ``profiles/<profile>.yaml`` — a KubeletConfiguration patch per profile, which
  kubeadm applies to that worker's kubelet config when it joins.

Everything is checked before anything is created: a mistake surfaces as a
:class:`ProfileError` naming the file, the worker and the field, and saying how
to fix it, instead of a kubelet that never becomes Ready ten minutes later.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from crashloop_harness.core.pins import DEFAULT_KUBERNETES, KubernetesPin
from crashloop_harness.model.backoff import BackoffCurve, curve_for
from crashloop_harness.model.kubeletconfig import (
    KubeletBackoffConfig,
    KubeletConfigError,
    validate_config,
)
from crashloop_harness.model.releases import (
    DEFAULT_RELEASE,
    RESTART_ALL_CONTAINERS,
    KubeletRelease,
    gates_to_enable,
    release_of,
)

KUBELET_CONFIG_API_VERSION: Final = "kubelet.config.k8s.io/v1beta1"
KUBELET_CONFIG_KIND: Final = "KubeletConfiguration"
DEFAULT_PROFILES_DIR: Final = "profiles"
PROFILE_SUFFIX: Final = ".yaml"

_SPEC_FIELDS: Final = frozenset({"name", "profilesDir", "workers"})
_WORKER_FIELDS: Final = frozenset({"name", "profile"})
_CRASHLOOP_FIELDS: Final = frozenset({"maxContainerRestartPeriod"})
# The patch fields the model reads. A key that differs from one of these only
# in case ("crashloopBackOff") would be dropped by the kubelet's lenient
# decoding with a log line nobody reads, so it is refused here.
_WATCHED_FIELDS: Final = ("apiVersion", "kind", "featureGates", "crashLoopBackOff")

# Names end up as file names, label values and kind node labels: keep them to a
# DNS label (lower case alphanumerics and "-", at most 63 characters).
_NAME: Final = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_NAME_RULE: Final = 'lower-case letters, digits and "-", at most 63 characters, e.g. "fast"'

# Bump when the hashed content or its layout changes, so old clusters stop matching.
_HASH_FORMAT: Final = "crashloop-harness/config-hash/v1"


class ProfileError(ValueError):
    """A cluster spec or profile patch is wrong; the message says where and how to fix it."""

    def __init__(
        self, path: Path, field: str, problem: str, fix: str, worker: str | None = None
    ) -> None:
        self.path = path
        self.field = field
        self.worker = worker
        self.problem = problem
        self.fix = fix
        where = f"{path}: worker {worker!r}" if worker is not None else str(path)
        # A place in the file ("line 2, column 6") rather than a field, for a parse error.
        at = field if field.startswith("line ") else f"field {field}"
        super().__init__(f"{where}: {at}: {problem}. Fix: {fix}")


@dataclass(frozen=True)
class Profile:
    """One validated kubelet config patch and the curve it should produce."""

    name: str
    path: Path
    # Canonical JSON of the patch: immutable, hashable, and what the hash covers.
    canonical_patch: str
    config: KubeletBackoffConfig
    # The kubelet release the patch was validated for; it shapes the curve.
    release: KubeletRelease = DEFAULT_RELEASE

    def patch(self) -> dict[str, Any]:
        """A fresh copy of the KubeletConfiguration patch."""
        patch: dict[str, Any] = json.loads(self.canonical_patch)
        return patch

    @property
    def curve(self) -> BackoffCurve:
        """The curve a kubelet of its release with only this patch applied should follow."""
        return curve_for(self.config, self.release)

    @property
    def content_hash(self) -> str:
        """sha256 of the canonical patch alone."""
        return hashlib.sha256(self.canonical_patch.encode()).hexdigest()


@dataclass(frozen=True)
class Worker:
    """One kind worker node and the profile it runs."""

    name: str
    profile: Profile

    @property
    def curve(self) -> BackoffCurve:
        return self.profile.curve


@dataclass(frozen=True)
class ClusterSpec:
    """The validated cluster description: a name and workers in creation order."""

    name: str
    path: Path
    workers: tuple[Worker, ...]
    kubernetes: KubernetesPin = DEFAULT_KUBERNETES

    @property
    def profiles(self) -> tuple[Profile, ...]:
        """Each profile in use, once, in the order workers first use it."""
        seen: dict[str, Profile] = {}
        for worker in self.workers:
            seen.setdefault(worker.profile.name, worker.profile)
        return tuple(seen.values())

    @property
    def feature_gates(self) -> dict[str, bool]:
        """Gates set on every component of the cluster, apiserver and kubelets alike.

        The restart-all scenario needs KEP-5532's RestartAllContainers action,
        alpha in 1.35 (with NodeDeclaredFeatures): turned on where it is off
        by default, nowhere else. No gate here changes a back-off curve.
        """
        return gates_to_enable(release_of(self.kubernetes.version), RESTART_ALL_CONTAINERS)

    def worker(self, name: str) -> Worker:
        for worker in self.workers:
            if worker.name == name:
                return worker
        raise KeyError(f"no worker {name!r} in {self.path}")

    @property
    def config_hash(self) -> str:
        """sha256 over the spec and every patch it uses, in canonical form.

        Formatting, comments and key order do not change it; any change to the
        cluster name, the workers, their order or a patch does.
        """
        content = {
            "format": _HASH_FORMAT,
            "cluster": self.name,
            "workers": [{"name": w.name, "profile": w.profile.name} for w in self.workers],
            "profiles": {p.name: p.patch() for p in self.profiles},
        }
        if self.feature_gates:
            content["featureGates"] = self.feature_gates
        return hashlib.sha256(_canonical_json(content).encode()).hexdigest()


def load_cluster_spec(
    path: Path | str, kubernetes: KubernetesPin = DEFAULT_KUBERNETES
) -> ClusterSpec:
    """Read and validate a cluster spec and every profile it names, for a Kubernetes release.

    Profiles are validated against that release's kubelet (a gate it lacks, a
    field its defaults refuse). A release other than the default gets a
    cluster of its own, named after it (``crashloop-1-34``), so two can be kept.
    """
    path = Path(path)
    release = release_of(kubernetes.version)
    doc = _read_mapping(path, worker=None, what="cluster spec")
    _refuse_unknown_fields(doc, _SPEC_FIELDS, path, prefix="", worker=None)
    name = _read_name(doc.get("name"), path, "name", worker=None)
    if kubernetes != DEFAULT_KUBERNETES:
        name = f"{name}-{kubernetes.minor.replace('.', '-')}"
    profiles_dir = path.parent / _read_profiles_dir(doc.get("profilesDir"), path)

    raw_workers = doc.get("workers")
    if not isinstance(raw_workers, list) or not raw_workers:
        raise ProfileError(
            path,
            "workers",
            f"expected a non-empty list, got {raw_workers!r}",
            "list the workers in order, e.g. workers: [{name: fast, profile: fast}]",
        )
    loaded: dict[str, Profile] = {}
    workers: list[Worker] = []
    for index, entry in enumerate(raw_workers):
        worker = _read_worker(entry, index, path, profiles_dir, loaded, release=release)
        if any(w.name == worker.name for w in workers):
            raise ProfileError(
                path,
                f"workers[{index}].name",
                f"duplicate worker name {worker.name!r}",
                "give every worker its own name",
                worker=worker.name,
            )
        workers.append(worker)
    return ClusterSpec(name=name, path=path, workers=tuple(workers), kubernetes=kubernetes)


def _read_worker(
    entry: object,
    index: int,
    spec_path: Path,
    profiles_dir: Path,
    loaded: dict[str, Profile],
    *,
    release: KubeletRelease,
) -> Worker:
    prefix = f"workers[{index}]"
    if not isinstance(entry, Mapping):
        raise ProfileError(
            spec_path,
            prefix,
            f"expected a map, got {entry!r}",
            "write each worker as {name: <worker>, profile: <profile>}",
        )
    raw_name = entry.get("name")
    # Until the name is known to be valid, point at the entry by position.
    label = raw_name if isinstance(raw_name, str) and raw_name else prefix
    name = _read_name(raw_name, spec_path, f"{prefix}.name", worker=label)
    _refuse_unknown_fields(entry, _WORKER_FIELDS, spec_path, prefix=f"{prefix}.", worker=name)
    raw_profile = entry.get("profile")
    if raw_profile is None:
        raise ProfileError(
            spec_path,
            f"{prefix}.profile",
            "the worker has no profile",
            f"add profile: <name>, one of: {_available(profiles_dir)}",
            worker=name,
        )
    profile_name = _read_name(raw_profile, spec_path, f"{prefix}.profile", worker=name)
    if profile_name not in loaded:
        profile_path = profiles_dir / f"{profile_name}{PROFILE_SUFFIX}"
        if not profile_path.is_file():
            raise ProfileError(
                spec_path,
                f"{prefix}.profile",
                f"unknown profile {profile_name!r}: {profile_path} does not exist",
                f"use one of: {_available(profiles_dir)}, or create {profile_path}",
                worker=name,
            )
        loaded[profile_name] = load_profile(profile_path, worker=name, release=release)
    return Worker(name=name, profile=loaded[profile_name])


def load_profile(
    path: Path | str, worker: str | None = None, release: KubeletRelease = DEFAULT_RELEASE
) -> Profile:
    """Read and validate one KubeletConfiguration patch for ``release``; its name is the file stem.

    ``worker`` only labels error messages with the worker that uses the profile.
    """
    path = Path(path)
    doc = _read_mapping(path, worker=worker, what="KubeletConfiguration patch")
    for field, expected in (
        ("apiVersion", KUBELET_CONFIG_API_VERSION),
        ("kind", KUBELET_CONFIG_KIND),
    ):
        if doc.get(field) != expected:
            raise ProfileError(
                path,
                field,
                f"expected {expected!r}, got {doc.get(field)!r}",
                f"start the patch with apiVersion: {KUBELET_CONFIG_API_VERSION} "
                f"and kind: {KUBELET_CONFIG_KIND}",
                worker=worker,
            )
    _refuse_miscased_fields(doc, path, worker)
    crashloop = doc.get("crashLoopBackOff")
    if isinstance(crashloop, Mapping):
        _refuse_unknown_fields(
            crashloop, _CRASHLOOP_FIELDS, path, prefix="crashLoopBackOff.", worker=worker
        )
    try:
        config = KubeletBackoffConfig.from_kubelet_configuration(doc)
    except KubeletConfigError as error:
        raise ProfileError(
            path,
            error.field,
            error.detail,
            'write gates as "Name: true" and durations as quoted Go durations such as "2s"',
            worker=worker,
        ) from error
    problems = validate_config(config, release)
    if problems:
        first = problems[0]
        raise ProfileError(path, first.field, first.message, first.fix, worker=worker)
    try:
        canonical = _canonical_json(doc)
    except (TypeError, ValueError) as error:
        raise ProfileError(
            path,
            "(document)",
            f"holds a value that is not plain JSON data ({error})",
            "quote dates and other special YAML values as strings",
            worker=worker,
        ) from error
    return Profile(
        name=path.stem, path=path, canonical_patch=canonical, config=config, release=release
    )


def _read_mapping(path: Path, worker: str | None, what: str) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ProfileError(
            path, "(file)", f"cannot read the {what}: {error}", "check the path", worker=worker
        ) from error
    try:
        # A SafeLoader subclass: as safe as yaml.safe_load, plus duplicate-key checks.
        doc = yaml.load(text, Loader=_StrictLoader)
    except yaml.YAMLError as error:
        where, problem = _yaml_problem(error)
        raise ProfileError(
            path,
            where,
            f"not valid YAML: {problem}",
            f"write the {what} as a single YAML mapping",
            worker=worker,
        ) from error
    if not isinstance(doc, dict):
        raise ProfileError(
            path,
            "(document)",
            f"the {what} is not a mapping (got {type(doc).__name__})",
            f"write the {what} as a YAML mapping of field: value",
            worker=worker,
        )
    return doc


def _yaml_problem(error: yaml.YAMLError) -> tuple[str, str]:
    """Where in the file the parser stopped (1-based, as editors count) and what it expected."""
    if not isinstance(error, yaml.MarkedYAMLError) or error.problem_mark is None:
        return "(document)", " ".join(str(error).split())
    mark = error.problem_mark
    said = ", ".join(part for part in (error.context, error.problem) if part)
    return f"line {mark.line + 1}, column {mark.column + 1}", said or "unreadable"


def _refuse_unknown_fields(
    doc: Mapping[Any, Any], known: frozenset[str], path: Path, prefix: str, worker: str | None
) -> None:
    for key in doc:
        if key not in known:
            raise ProfileError(
                path,
                f"{prefix}{key}",
                "unknown field",
                f"use only: {', '.join(sorted(known))}",
                worker=worker,
            )


def _refuse_miscased_fields(doc: Mapping[Any, Any], path: Path, worker: str | None) -> None:
    for key in doc:
        for field in _WATCHED_FIELDS:
            if isinstance(key, str) and key != field and key.lower() == field.lower():
                raise ProfileError(
                    path,
                    key,
                    f"misspelt field (the kubelet would ignore it), expected {field!r}",
                    f"rename it to {field}",
                    worker=worker,
                )


def name_problem(name: str) -> str | None:
    """What is wrong with a cluster or worker name, and the rule; None when it is valid."""
    return None if _NAME.fullmatch(name) else f"invalid name {name!r}: use {_NAME_RULE}"


def _read_name(raw: object, path: Path, field: str, worker: str | None) -> str:
    if not isinstance(raw, str) or not _NAME.fullmatch(raw):
        raise ProfileError(path, field, f"invalid name {raw!r}", f"use {_NAME_RULE}", worker=worker)
    return raw


def _read_profiles_dir(raw: object, path: Path) -> str:
    if raw is None:
        return DEFAULT_PROFILES_DIR
    if not isinstance(raw, str) or not raw:
        raise ProfileError(
            path,
            "profilesDir",
            f"expected a directory path, got {raw!r}",
            f"give a path relative to {path.parent}, or drop the field to use "
            f"{DEFAULT_PROFILES_DIR!r}",
        )
    return raw


def _available(profiles_dir: Path) -> str:
    names = sorted(p.stem for p in profiles_dir.glob(f"*{PROFILE_SUFFIX}") if p.is_file())
    return ", ".join(names) if names else f"(no profiles in {profiles_dir})"


def _canonical_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class _StrictLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses duplicate keys, which PyYAML silently merges."""


def _construct_strict_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: list[object] = []
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue  # "<<" merges are deliberate overrides
        key = loader.construct_object(key_node, deep=True)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.append(key)
    return loader.construct_mapping(node, deep=True)


_StrictLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_strict_mapping
)
