"""kind's own logs of a cluster (every node's journal and container logs) beside a failure's
evidence, exported once per directory (crashloop_harness.cluster.evidence keeps the rest)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from crashloop_harness.cluster.evidence import CollectorErrors
from crashloop_harness.core.proc import run

KIND_LOGS_MARKER: Final = ".crashloop-kind-logs"

# `kind export logs` copies every node's journal and container logs; on a
# 4-node cluster that is tens of MB and well under a minute, but a wedged
# node can make `docker exec` hang, and evidence must not hang the session.
KIND_EXPORT_LOGS_TIMEOUT: Final = 300.0


def export_kind_logs(kind_bin: Path, cluster_name: str, target_dir: Path) -> Path:
    """``kind export logs`` into ``target_dir`` once: later calls find the marker and return.

    Meant for one directory per session: the node journals cover every test,
    so one copy is enough, and a second export after a failure (cluster gone)
    would only cost another timeout. The marker is claimed before exporting
    (exclusive create), so concurrent callers do not export twice, and then
    says how the export ended. Never raises; failures go to
    ``target_dir/errors.txt``.
    """
    target_dir = Path(target_dir)
    errors = CollectorErrors(target_dir)
    marker = target_dir / KIND_LOGS_MARKER
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
        with marker.open("x", encoding="utf-8") as claim:
            claim.write(f"started {datetime.now(UTC).isoformat(timespec='seconds')}\n")
    except FileExistsError:
        return target_dir
    except OSError as error:
        errors.record(f"kind export logs {cluster_name}: marker", error)
        return target_dir
    outcome = "failed (see errors.txt)"
    with errors.guard(f"kind export logs {cluster_name}"):
        run(
            [str(kind_bin), "export", "logs", str(target_dir), "--name", cluster_name],
            timeout=KIND_EXPORT_LOGS_TIMEOUT,
        )
        outcome = "exported"
    with (
        errors.guard(f"kind export logs {cluster_name}: marker"),
        marker.open("a", encoding="utf-8") as out,
    ):
        out.write(f"{outcome} {datetime.now(UTC).isoformat(timespec='seconds')}\n")
    return target_dir
