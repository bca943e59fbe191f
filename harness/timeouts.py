"""Every wait of the harness, named, in one table.

Waits poll a condition (tenacity) and give up after the named time; nothing
sleeps for a fixed period to synchronise. The values are generous upper
bounds measured on a 2-core machine, not targets.
"""

from __future__ import annotations

from typing import Final

# Docker engine
ENGINE_START: Final = 90.0
ENGINE_PROBE: Final = 10.0
# dockerd stops every container first (kind nodes take up to ~10s each).
ENGINE_STOP: Final = 120.0
IMAGE_PULL: Final = 120.0

# Node image assembly: containerd inside the build container answering.
BUILD_CONTAINERD_READY: Final = 60.0

# kind cluster
CLUSTER_CREATE: Final = 900.0
NODES_READY: Final = 300.0
SYSTEM_PODS_READY: Final = 300.0
CLUSTER_DELETE: Final = 180.0
# An existing cluster must be healthy this soon to be reused; else it is recreated.
REUSE_HEALTH: Final = 90.0
API_REQUEST: Final = 30.0

# Conformance check profiles: the whole observation, all workers at once.
CHECK_QUICK: Final = 420.0
CHECK_FULL: Final = 1080.0
# The mutation drill: quick, with the default worker watched up to its 160s
# level (about 6 minutes when on the curve).
CHECK_MUTATION: Final = 600.0

# A node whose reader has not heard from it this long (its container stopped or
# paused, the Docker engine gone) ends a run as an error rather than a late
# timeout. Twice API_REQUEST, the limit of one `docker exec`: a reader that
# hangs once while starting again is tolerated.
NODE_SILENT: Final = 60.0
# A node's reader, asked to end (its stdin closed), cleans up within this long
# or is killed.
READER_EXIT: Final = 5.0

# Scenarios. The whole observation: the longest window (150s) plus start-up
# and the default curve's slowest fast restart (0+10+20s back-offs, tolerance
# up to ~50s).
SCENARIOS: Final = 300.0
# One fresh pod of the task-isolation baseline, from create to its container
# started and its 3s session done.
FRESH_POD: Final = 90.0

# Workloads
POD_RUNNING: Final = 180.0
NAMESPACE_GONE: Final = 120.0
