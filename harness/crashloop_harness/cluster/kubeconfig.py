"""A kubeconfig read as kubectl reads it: its files, contexts, endpoints and an API client.

kubectl's rule for which file: --kubeconfig, else $KUBECONFIG (a colon-separated
list, merged: each file's entries, the first to name one keeping it), else
~/.kube/config. Every verb and fixture that reaches a cluster it did not make
reads its kubeconfig here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self

import yaml
from kubernetes import client, config
from kubernetes.config.config_exception import ConfigException
from urllib3 import BaseHTTPResponse
from urllib3.connectionpool import ConnectionPool
from urllib3.util.retry import Retry

from crashloop_harness.cluster.incluster import in_a_pod, write_in_cluster_kubeconfig
from crashloop_harness.core.errors import HarnessError, first_line
from crashloop_harness.core.paths import state_dir

# How often a request to an existing cluster's API server is tried again.
API_RETRIES: Final = 1


class SaidRetry(Retry):
    """urllib3's retry, saying on stderr that it retries: an API server that hangs is not
    a minute of silence (kubectl says so as it retries, too)."""

    def increment(
        self,
        method: str | None = None,
        url: str | None = None,
        response: BaseHTTPResponse | None = None,
        error: Exception | None = None,
        _pool: ConnectionPool | None = None,
        _stacktrace: TracebackType | None = None,
    ) -> Self:
        # Raises when no retry is left: then the caller's error says what failed, once.
        again = super().increment(method, url, response, error, _pool, _stacktrace)
        server = f"{_pool.host}:{_pool.port}" if _pool is not None else "the API server"
        why = first_line(error) if error is not None else "no answer"
        print(f"{server} {url or ''}: {why}; asking once more", file=sys.stderr, flush=True)
        return again


def kubectl_default_kubeconfig() -> Path:
    """The kubeconfig kubectl reads with no --kubeconfig: $KUBECONFIG, else ~/.kube/config,
    else, in a pod, the cluster it runs in through its ServiceAccount (written as a
    kubeconfig, crashloop_harness.cluster.incluster).

    $KUBECONFIG may list several files (colon-separated, as kubectl takes it);
    the list is kept whole, and read merged (:func:`kubeconfig_files`).
    """
    listed = os.environ.get("KUBECONFIG", "")
    if listed.strip(os.pathsep):
        return Path(listed)
    home = Path.home() / ".kube" / "config"
    if not home.is_file() and in_a_pod():
        return write_in_cluster_kubeconfig(state_dir() / "in-cluster.kubeconfig")
    return home


def kubeconfig_files(kubeconfig: Path) -> list[Path]:
    """The files a kubeconfig names: one path, or a colon-separated list as in $KUBECONFIG."""
    return [Path(part).expanduser() for part in str(kubeconfig).split(os.pathsep) if part]


def require_kubeconfig(kubeconfig: Path) -> None:
    """A kubeconfig that names no file is named as such, before anything else is asked.

    In a list, as in kubectl, missing files are passed over; one must exist.
    """
    files = kubeconfig_files(kubeconfig)
    if any(path.is_file() for path in files):
        return
    found = "; ".join(
        f"{path}: {'a directory, not a file' if path.is_dir() else 'no such file'}"
        for path in files
    )
    raise HarnessError(
        f"kubeconfig {found or '(empty)'}",
        "name an existing kubeconfig file (its path, or a colon-separated list as in "
        "$KUBECONFIG), such as the one `kubectl config view --raw --minify` writes",
    )


def remote_api(kubeconfig: Path, context: str | None) -> client.ApiClient:
    """An API client for the kubeconfig's context; a missing file or context is named."""
    require_kubeconfig(kubeconfig)
    names, current = _contexts(kubeconfig)
    if context is not None and context not in names:
        raise HarnessError(
            f"kubeconfig {kubeconfig} has no context {context!r}",
            f"use one of: {', '.join(names) or '(none)'}",
        )
    if context is None and not current:
        raise HarnessError(
            f"kubeconfig {kubeconfig} sets no current context",
            f"name one with --context: {', '.join(names) or '(none)'}",
        )
    configuration = client.Configuration()
    try:
        config.load_kube_config(
            config_file=str(kubeconfig), context=context, client_configuration=configuration
        )
    except ConfigException as error:
        raise HarnessError(f"kubeconfig {kubeconfig}: {error}", "check the file") from error
    # One retry, not urllib3's three: an API server that hangs is given up on within two
    # request timeouts (kubectl gives up within one minute too), not four.
    configuration.retries = SaidRetry(total=API_RETRIES)
    return client.ApiClient(configuration=configuration)


def _documents(kubeconfig: Path) -> Iterator[dict[str, Any]]:
    """Each file of the kubeconfig that exists, parsed, in kubectl's order of merging."""
    for path in kubeconfig_files(kubeconfig):
        if not path.is_file():
            continue
        try:
            doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        except UnicodeDecodeError as error:
            raise HarnessError(
                f"kubeconfig {path} is not UTF-8 text (a bad byte at {error.start})",
                "point --kubeconfig (or $KUBECONFIG) at a kubeconfig file, as kubectl reads",
            ) from error
        except (OSError, yaml.YAMLError) as error:
            raise HarnessError(f"kubeconfig {path}: {error}", "check the file") from error
        if not isinstance(doc, dict):
            raise HarnessError(f"kubeconfig {path} is not a kubeconfig", "check the file")
        yield doc


def _contexts(kubeconfig: Path) -> tuple[list[str], str | None]:
    """The kubeconfig's context names and its current context (None when unset).

    Over a list of files, merged as kubectl merges them: every file's contexts,
    the first to name a context keeping it; the first current-context set wins.
    """
    names: list[str] = []
    current: str | None = None
    for doc in _documents(kubeconfig):
        names += [
            str(entry["name"])
            for entry in doc.get("contexts") or []
            if isinstance(entry, dict) and "name" in entry and str(entry["name"]) not in names
        ]
        if current is None and doc.get("current-context"):
            current = str(doc["current-context"])
    return names, current


def context_names(kubeconfig: Path) -> list[str]:
    """Every context of the kubeconfig (a colon list merged as kubectl merges it)."""
    require_kubeconfig(kubeconfig)
    return _contexts(kubeconfig)[0]


def context_endpoints(kubeconfig: Path) -> dict[str, tuple[str, str]]:
    """context -> (its cluster's server, its CA as given: data or file) over every file of
    the kubeconfig, the first to name a context or cluster keeping it (kubectl's merge)."""
    clusters: dict[str, tuple[str, str]] = {}
    contexts: dict[str, str] = {}
    for doc in _documents(kubeconfig):
        for entry in doc.get("clusters") or []:
            cluster = entry.get("cluster") if isinstance(entry, dict) else None
            if isinstance(cluster, dict) and "name" in entry:
                ca = cluster.get("certificate-authority-data") or cluster.get(
                    "certificate-authority", ""
                )
                clusters.setdefault(str(entry["name"]), (str(cluster.get("server")), str(ca)))
        for entry in doc.get("contexts") or []:
            context = entry.get("context") if isinstance(entry, dict) else None
            if isinstance(context, dict) and "name" in entry:
                contexts.setdefault(str(entry["name"]), str(context.get("cluster")))
    return {name: clusters[cluster] for name, cluster in contexts.items() if cluster in clusters}


def context_name(kubeconfig: Path, context: str | None) -> str:
    return context or _contexts(kubeconfig)[1] or "-"
