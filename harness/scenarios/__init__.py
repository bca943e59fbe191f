"""The talk's three scenarios as measured workloads, on every worker side by side.

- task isolation: a container runs one session and exits 0, reset in place
  (``restartPolicy: Always``); compared with a fresh pod per session;
- fast restart on failure: a container fails a few times, then turns Ready;
- critical sidecar: a proxy sidecar is OOMKilled over and over while the main
  app, which never restarts, is cut off until the sidecar is back.

:mod:`.manifests` renders the pods, :mod:`.metrics` turns attempt records and
the workload's own logs into per-worker metrics (both pure), :mod:`.runner`
runs them on a cluster and writes the run directory.
"""

from __future__ import annotations

from typing import Final

TASK_ISOLATION: Final = "task-isolation"
FAST_RESTART: Final = "fast-restart"
CRITICAL_SIDECAR: Final = "critical-sidecar"
SCENARIOS: Final = (TASK_ISOLATION, FAST_RESTART, CRITICAL_SIDECAR)
