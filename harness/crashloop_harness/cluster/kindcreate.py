"""``kind create cluster``, run by the harness itself.

kind is one binary with a small command-line contract (a name, where to write the
kubeconfig, a node image, a config file), so nothing stands between the harness and it:
its output (emoji progress that would tear the harness's own display) goes to a log,
and a failure or a hang becomes one error naming the log.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from crashloop_harness.core import timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.proc import tail


def create_argv(
    kind_bin: Path, name: str, *, kubeconfig: Path, image: str, config_file: Path
) -> list[str]:
    return [
        str(kind_bin),
        "create",
        "cluster",
        f"--name={name}",
        f"--kubeconfig={kubeconfig}",
        f"--image={image}",
        f"--config={config_file}",
    ]


def create_cluster(
    kind_bin: Path, name: str, *, kubeconfig: Path, image: str, config_file: Path, log: Path
) -> None:
    """Create the cluster, kind's output appended to ``log``; a HarnessError if it fails."""
    argv = create_argv(kind_bin, name, kubeconfig=kubeconfig, image=image, config_file=config_file)
    fix = f"read {log}; `crashloop up --recreate` retries"
    with log.open("ab") as output:
        try:
            subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                check=True,
                timeout=timeouts.CLUSTER_CREATE,
            )
        except subprocess.CalledProcessError as error:
            failed = f"`kind create cluster` failed ({error.returncode})"
        except subprocess.TimeoutExpired:
            failed = f"`kind create cluster` did not finish in {timeouts.CLUSTER_CREATE:g} s"
        else:
            return
    raise HarnessError(
        f"{failed}; its output ends with:\n" + tail(log.read_text(errors="replace")), fix
    )
