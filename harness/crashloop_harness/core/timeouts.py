"""Every wait of the harness, named, in one table, with one scale factor.

Waits poll a condition (tenacity) and give up after the named time; nothing
sleeps for a fixed period to synchronise. The values are generous upper
bounds measured on a 2-core machine, not targets. On a slower machine set
CRASHLOOP_TIMEOUT_SCALE (for example 2) and every wait grows by that factor;
a value that is not a positive number is reported by the CLI and the pytest
plugin before anything runs (:data:`SCALE_PROBLEM`), and 1 is used meanwhile.
Polling periods and the check's tolerances are not waits and do not scale.
"""

from __future__ import annotations

import math
import os
from typing import Final

SCALE_VARIABLE: Final = "CRASHLOOP_TIMEOUT_SCALE"


def _read_scale() -> tuple[float, str | None]:
    raw = os.environ.get(SCALE_VARIABLE, "").strip()
    if not raw:
        return 1.0, None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        return 1.0, (
            f"{SCALE_VARIABLE}={raw!r} is not a positive number: set it to a factor such as 2 "
            "for a slow machine, or unset it"
        )
    return value, None


SCALE, SCALE_PROBLEM = _read_scale()


def _s(seconds: float) -> float:
    return seconds * SCALE


# Docker engine
ENGINE_START: Final = _s(90.0)
ENGINE_PROBE: Final = _s(10.0)
# dockerd stops every container first (kind nodes take up to ~10s each).
ENGINE_STOP: Final = _s(120.0)
IMAGE_PULL: Final = _s(120.0)

# Node image assembly: containerd inside the build container answering.
BUILD_CONTAINERD_READY: Final = _s(60.0)

# kind cluster
CLUSTER_CREATE: Final = _s(900.0)
NODES_READY: Final = _s(300.0)
SYSTEM_PODS_READY: Final = _s(300.0)
CLUSTER_DELETE: Final = _s(180.0)
# An existing cluster must be healthy this soon to be reused; else it is recreated.
REUSE_HEALTH: Final = _s(90.0)
# One API request; twice this (one retry) is how long a hung API server is waited for:
# under a minute, as kubectl gives up within one.
API_REQUEST: Final = _s(25.0)

# Conformance check profiles: the whole observation, all workers at once.
CHECK_QUICK: Final = _s(420.0)
CHECK_FULL: Final = _s(1080.0)
# A quick check run by the nightly's Job in the cluster: its pod scheduled and started
# (the image is present), then the check.
NIGHTLY_JOB: Final = _s(420.0 + 90.0)
# A check that set restarts aside (late while the host was saturated or a node
# not observed) observes on for restarts in their place, up to this many times
# its profile's window; a host busy past that is an error, no answer.
SET_ASIDE_EXTENSION: Final = 2.0
# The mutation drill: quick, with the default worker watched up to its 160s
# level (about 6 minutes when on the curve).
CHECK_MUTATION: Final = _s(600.0)

# A node whose reader has not heard from it this long (its container stopped or
# paused, the Docker engine gone) ends a run as an error rather than a late
# timeout. Twice API_REQUEST, the limit of one `docker exec`: a reader that
# hangs once while starting again is tolerated.
NODE_SILENT: Final = _s(60.0)
# A node heard from whose listings stay incomplete (a container it lists that
# cannot be inspected) this long gives no "now" to judge an overdue restart by:
# the run ends as an error naming it. As long as a node may be silent.
LISTING_STALE: Final = NODE_SILENT
# A node whose kubelet is about to be blamed (a worker of it decided early):
# one Lease renewal period (lease_renew_gap, 12 s) and a request tell a live
# kubelet from a frozen or stopped one before the run's ending is read.
LEASE_CONFIRM: Final = _s(15.0)
# A node's reader, asked to end (its stdin closed), cleans up within this long
# or is killed.
READER_EXIT: Final = _s(5.0)

# Scenarios. The whole observation: the longest window (150s), or the
# StatefulSet's ordinal 1 failing five times on the default curve (0+10+20+
# 40+80s back-offs, up to ~190s at the tolerance) and its later ordinals
# started; twice that for a K of up to six or seven, and start-up.
SCENARIOS: Final = _s(600.0)
# A kubelet the kubelet-restart scenario restarted, from `systemctl restart` until the new
# process answers /healthz through the API server (measured on 2 cores: a few seconds).
KUBELET_BACK: Final = _s(60.0)
# After that restart, an app whose last exit has gone this long without a restart is taken
# as stuck and no longer waited for (the verdict fails it either way: a restart not seen is
# a failure). Four times the longest restart it awaits on any worker (the default curve's
# restart 2 after the kubelet's return: 10s, at most about 15s with the requeue's jitter).
KUBELET_RESTART_STUCK: Final = _s(60.0)
# One fresh pod of the task-isolation baseline, from create to its container
# started and its 3s session done.
FRESH_POD: Final = _s(90.0)
# An existing cluster's scenario pods, deleted with their 1s grace period at
# the end of the run, until the pod watch has delivered every one's deletion
# (and so the exit each running container reported).
POD_DRAIN: Final = _s(60.0)

# The overhead sweep: every pod of a cell (up to a full node, 100+ pods on one
# worker of a 2-core machine) seen started once (107 of 108 in 300s on a slow day).
OVERHEAD_PODS_STARTED: Final = _s(600.0)
# Before a cell, every worker's runtime rid of the sandboxes of the cells before
# it: the API forgets a force-deleted pod at once, but the kubelet took 5-7
# minutes to stop and remove 108 sandboxes, loading the machine the next cell
# measures.
OVERHEAD_NODE_CLEARED: Final = _s(600.0)
# Before a window, the kubelet's event writes fallen to a trickle (108 new
# crashing pods: drained 234s after they started). One that never drains is
# measured anyway, and its cell says so.
OVERHEAD_EVENTS_DRAINED: Final = _s(300.0)
# Beyond twice its curve's nominal climb, what a crashing cell's slowest pod
# gets to reach the cap (a full node of 2s-curve pods falls far behind).
OVERHEAD_CAP_MARGIN: Final = _s(180.0)

# Workloads
POD_RUNNING: Final = _s(180.0)
NAMESPACE_GONE: Final = _s(120.0)

# A progress ticker's thread gone after its stop is set (it looks once a second).
TICKER_STOP: Final = _s(5.0)
# A page opened in headless Chromium (a run's report, a page of the docs site): the page and
# every image loaded.
BROWSER_PAGE: Final = _s(60.0)
# The docs site built by `mkdocs build --strict` (`make docs`): about 1.5 s on a 2-core machine.
DOCS_BUILD: Final = _s(120.0)
# Every crashing pod of a check restarted once (about 10 s; the runs-5s pods' first run is
# 5 s): what the e2e tier waits for before it starts the talk's scenarios beside its checks.
FIRST_RESTARTS: Final = _s(90.0)
# A replay on a terminal ended by a key (s skips to the takeaways, q quits): a few seconds;
# the shipped recording at its own speed would take five minutes.
REPLAY_KEY: Final = _s(60.0)

# Host set-up: Debian packages, Go builds, kind.
APT_QUERY: Final = _s(30.0)
APT_SHOW: Final = _s(60.0)
APT_UPDATE: Final = _s(600.0)
APT_INSTALL: Final = _s(900.0)
GO_DOWNLOAD: Final = _s(1200.0)
GO_GET: Final = _s(1800.0)
GO_BUILD: Final = _s(600.0)
GO_INSTALL_KIND: Final = _s(900.0)
# A tool's `version`, `kind get clusters`, `kind export kubeconfig`.
TOOL_QUERY: Final = _s(60.0)
# One `docker exec` into a node for a short command (systemctl, cat, date).
NODE_EXEC: Final = _s(30.0)

# Images: the workload image, the node image's build steps.
IMAGE_BUILD: Final = _s(600.0)
IMAGE_LOAD: Final = _s(300.0)
DEBOOTSTRAP: Final = _s(1800.0)
DOCKER_IMPORT: Final = _s(600.0)
DOCKER_COPY: Final = _s(600.0)
DOCKER_SAVE: Final = _s(600.0)
DOCKER_COMMIT: Final = _s(1200.0)
DOCKER_RUN: Final = _s(120.0)
DOCKER_REMOVE: Final = _s(120.0)
BUILD_CONTAINER_EXEC: Final = _s(300.0)
BUILD_IMAGE_IMPORT: Final = _s(900.0)
BUILD_PROBE: Final = _s(10.0)

# A whole quick check run by a test as a child process: its observation
# window (at most 420 s) plus set-up, judgement and clean-up.
CHECK_SUBPROCESS: Final = _s(900.0)
# A whole fleet run by a test as a child process: its groups at once, then a doubted
# group's re-run on other nodes, each a quick check's subprocess time.
FLEET_SUBPROCESS: Final = _s(2 * 900.0)
