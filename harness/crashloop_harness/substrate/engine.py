"""Find a working Docker engine, or install and start one.

Rules: an engine that already answers is used as it is (never stopped or
reconfigured); an engine is installed only where none exists and apt and root
are available; one we start is recorded in a pidfile so a second run finds it.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from crashloop_harness.core import pins, timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.paths import cache_dir, go_env
from crashloop_harness.core.polling import poll_true
from crashloop_harness.core.proc import run, succeeds
from crashloop_harness.core.resources import IMAGES_DIR
from crashloop_harness.substrate import hostpkgs

# Linux capability numbers the kind node container asks for when --privileged.
_CAP_LAST = 40
_CAP_SYS_RESOURCE = 24
_WRAPPER_RUNTIME = "crashloop-capwrap"
_WRAPPER_SOURCE = IMAGES_DIR / "runc-capwrap"
_DOCKER_PACKAGE = "docker.io"

INSTALL_FIX = (
    "install Docker Engine >= 20.10 and start it (Debian/Ubuntu: `apt-get install docker.io`, "
    "then `dockerd &`), or run as root on a Debian-based machine so the harness can do it"
)


@dataclass(frozen=True)
class Engine:
    """A Docker engine that answers, and whether this project started it."""

    version: str
    started_here: bool
    capability_wrapper: bool


def engine_dir() -> Path:
    path = cache_dir() / "engine"
    path.mkdir(parents=True, exist_ok=True)
    return path


def host_is_linux() -> bool:
    return sys.platform.startswith("linux")


def missing_capabilities() -> list[int]:
    """Capabilities (by number) absent from this host's bounding set.

    Only a Linux host runs the engine itself; elsewhere (Docker Desktop, colima)
    the engine lives in a VM of its own and this host's capabilities do not matter.
    """
    if not host_is_linux():
        return []
    status = Path("/proc/self/status").read_text()
    for line in status.splitlines():
        if line.startswith("CapBnd:"):
            mask = int(line.split(":", 1)[1].strip(), 16)
            return [bit for bit in range(_CAP_LAST + 1) if not mask & (1 << bit)]
    return []


def engine_answers() -> bool:
    return succeeds(["docker", "info", "--format", "{{.ServerVersion}}"], timeouts.ENGINE_PROBE)


def _server_info(template: str) -> str:
    return run(["docker", "info", "--format", template], timeout=timeouts.ENGINE_PROBE).strip()


@functools.cache
def engine_go_arch() -> str:
    """The engine's architecture as Go names it (amd64, arm64): what node programs are built for."""
    return run(
        ["docker", "version", "--format", "{{.Server.Arch}}"], timeout=timeouts.ENGINE_PROBE
    ).strip()


def engine_cgroup_v1() -> bool:
    """Whether the engine's containers get cgroup v1 (the engine's host or VM decides).

    Falls back to this host's own cgroup mount when no engine answers.
    """
    if engine_answers():
        return _server_info("{{.CgroupVersion}}") == "1"
    return host_is_linux() and not Path("/sys/fs/cgroup/cgroup.controllers").exists()


def ensure_engine() -> Engine:
    """Return a working engine, installing and starting one if needed."""
    if shutil.which("docker") is None:
        raise HarnessError("the docker CLI is not installed", INSTALL_FIX)
    needs_wrapper = bool(missing_capabilities())
    if engine_answers():
        runtime = _server_info("{{.DefaultRuntime}}")
        started_here = _our_engine_pid() is not None
        if needs_wrapper and runtime != _WRAPPER_RUNTIME:
            raise HarnessError(
                "a Docker engine is running, but this host lacks capabilities "
                f"{missing_capabilities()} in its bounding set, so every privileged kind node "
                "will fail with 'unable to apply caps: operation not permitted'",
                "stop that engine and run `crashloop engine` so the harness starts one with "
                "its capability wrapper, or add the wrapper runtime to its daemon.json yourself",
            )
        return Engine(_server_info("{{.ServerVersion}}"), started_here, runtime == _WRAPPER_RUNTIME)

    if not host_is_linux():
        raise HarnessError(
            f"no Docker engine answers, and on this {sys.platform} host the harness cannot "
            "install or start one itself",
            "start Docker Desktop (or colima, or another engine) and check that `docker info` "
            "answers, then run again",
        )
    if shutil.which("dockerd") is None:
        install_engine()
    wrapper = _build_wrapper() if needs_wrapper else None
    _start_dockerd(wrapper)
    return Engine(_server_info("{{.ServerVersion}}"), True, wrapper is not None)


def install_engine() -> None:
    if not hostpkgs.can_install():
        raise HarnessError(
            "no Docker engine is running and none is installed; the harness can install one "
            "only as root on a machine with apt-get",
            INSTALL_FIX,
        )
    fix = "check that Debian's package mirror is reachable (`apt-get update`), or " + INSTALL_FIX
    hostpkgs.install([_DOCKER_PACKAGE], fix)


def _build_wrapper() -> Path:
    """Build the runc capability wrapper (a no-op where all capabilities exist)."""
    if shutil.which("go") is None:
        raise HarnessError(
            "this host needs a runc capability wrapper, and building it needs Go",
            pins.GO_INSTALL,
        )
    target = cache_dir() / "bin" / "runc-capwrap"
    target.parent.mkdir(parents=True, exist_ok=True)
    source_mtime = max(p.stat().st_mtime for p in _WRAPPER_SOURCE.iterdir())
    if not target.exists() or target.stat().st_mtime < source_mtime:
        run(
            ["go", "build", "-trimpath", "-o", str(target), "."],
            cwd=str(_WRAPPER_SOURCE),
            env={**go_env(), "CGO_ENABLED": "0", "GOFLAGS": ""},
            fix="check the Go toolchain (`go version`)",
            timeout=timeouts.GO_BUILD,
        )
    return target


def _our_engine_pid() -> int | None:
    """The pid of the dockerd the harness started, if that process still runs."""
    pidfile = engine_dir() / "dockerd.pid"
    try:
        pid = int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return None
    return pid if is_live_dockerd(pid) else None


def is_live_dockerd(pid: int) -> bool:
    """Whether ``pid`` is a running dockerd: a stale pidfile's pid may be reused by anything."""
    if not host_is_linux():
        return False  # the harness starts engines only on Linux
    try:
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    # The state follows the parenthesised command name; Z is a zombie, already dead.
    state = stat.rsplit(")", 1)[-1].split()[0]
    return comm == "dockerd" and state != "Z"


def stop_engine() -> int:
    """Stop the engine this project started (its containers stop with it); returns its pid.

    An engine started any other way is not ours to stop: that is refused.
    """
    pid = _our_engine_pid()
    if pid is None:
        raise HarnessError(
            "no running Docker engine was started by the harness "
            f"(no live pid in {engine_dir() / 'dockerd.pid'})",
            "stop an engine the way it was started (e.g. `systemctl stop docker`)",
        )
    os.kill(pid, signal.SIGTERM)
    if not poll_true(lambda: not is_live_dockerd(pid), within=timeouts.ENGINE_STOP, every=0.5):
        raise HarnessError(
            f"dockerd (pid {pid}) still runs {timeouts.ENGINE_STOP:.0f}s after SIGTERM",
            f"read {engine_dir() / 'dockerd.log'}; `kill -9 {pid}` ends it",
        )
    return pid


def _start_dockerd(wrapper: Path | None) -> None:
    if _our_engine_pid() is None:
        log_path = engine_dir() / "dockerd.log"
        argv = ["dockerd", "--pidfile", str(engine_dir() / "dockerd.pid")]
        if wrapper is not None:
            argv += [
                "--add-runtime",
                f"{_WRAPPER_RUNTIME}={wrapper}",
                "--default-runtime",
                _WRAPPER_RUNTIME,
            ]
        with log_path.open("ab") as log:
            # A new session: the engine outlives this command, as a service would.
            subprocess.Popen(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
    if not poll_true(engine_answers, within=timeouts.ENGINE_START):
        log_tail = run(["tail", "-n", "20", str(engine_dir() / "dockerd.log")])
        raise HarnessError(
            f"dockerd did not answer within {timeouts.ENGINE_START:.0f}s; its log ends with:\n"
            f"{log_tail}",
            f"read {engine_dir() / 'dockerd.log'}",
        )
