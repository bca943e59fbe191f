#!/usr/bin/env python3
"""How long a fleet's plan takes to read a large fleet, and the memory it holds: measured on a
fake API whose every read takes a stated latency.

    scripts/fleet-scale.py [--contexts 20] [--nodes 5000] [--list-latency 0.2]
        [--configz-latency 0.05]

The plan's own code reads the fleet (crashloop_harness.fleet.read.read_fleet, then
crashloop_harness.fleet.plan.plan_fleet): only the API is fake. Each context lists its nodes
in one request of ``--list-latency`` seconds; each node's /configz answers after
``--configz-latency`` seconds (a real API server's node proxy, a few tens of ms on a near
cluster, more across a region). Prints the wall time, the reads in flight at most, what reads
in a row would take, and the peak of Python memory (tracemalloc) while planning.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
import tracemalloc
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "harness"))

from crashloop_harness.cluster.kube import NodeStatus  # noqa: E402
from crashloop_harness.cluster.liveconfig import NodeConfigRow  # noqa: E402
from crashloop_harness.fleet import read  # noqa: E402
from crashloop_harness.fleet.plan import plan_fleet  # noqa: E402
from crashloop_harness.model.backoff import curve_for  # noqa: E402
from crashloop_harness.model.kubeletconfig import KubeletBackoffConfig  # noqa: E402

# Pools of a fleet: a node's pool label and the max it runs (every pool a curve of its own).
POOLS = (("general", 300), ("batch", 60), ("edge", 10))


class FakeApi:
    """The API of every context: its nodes listed, each node's config, each after a latency.
    Counts the reads in flight (the fake's latency is a sleep, not a synchronisation)."""

    def __init__(self, nodes_per_context: int, list_s: float, configz_s: float) -> None:
        self.nodes_per_context = nodes_per_context
        self.list_s = list_s
        self.configz_s = configz_s
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0
        self.curves = {
            pool: curve_for(
                KubeletBackoffConfig(max_container_restart_period=timedelta(seconds=max_s))
            )
            for pool, max_s in POOLS
        }

    def statuses(self, api: Any) -> list[NodeStatus]:
        time.sleep(self.list_s)
        return [
            NodeStatus(
                name=f"{api}-node-{i:05d}",
                ready=True,
                kubelet_version="v1.35.8",
                labels={"pool": POOLS[i % len(POOLS)][0]},
            )
            for i in range(self.nodes_per_context)
        ]

    def rows(self, _api: Any, nodes: Sequence[NodeStatus]) -> list[NodeConfigRow]:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        try:
            time.sleep(self.configz_s)
            (status,) = nodes
            pool = status.labels["pool"]
            return [
                NodeConfigRow(
                    node=status.name,
                    worker=status.name,
                    profile=None,
                    max_container_restart_period=f"{dict(POOLS)[pool]}s",
                    feature_gates={},
                    curve=self.curves[pool],
                    mismatches=(),
                )
            ]
        finally:
            with self.lock:
                self.now -= 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contexts", type=int, default=20)
    parser.add_argument("--nodes", type=int, default=5000, help="over all contexts")
    parser.add_argument("--list-latency", type=float, default=0.2)
    parser.add_argument("--configz-latency", type=float, default=0.05)
    args = parser.parse_args()
    fake = FakeApi(args.nodes // args.contexts, args.list_latency, args.configz_latency)
    # Only the API is fake: each context's client is its name, and no two are one cluster.
    setattr(read, "remote_api", lambda _kubeconfig, context: context)  # noqa: B010
    setattr(read, "node_statuses", fake.statuses)  # noqa: B010
    setattr(read, "live_rows", fake.rows)  # noqa: B010
    setattr(read, "aliases_of", lambda _kubeconfig, _contexts: {})  # noqa: B010
    contexts = [f"cluster-{i:02d}" for i in range(args.contexts)]
    tracemalloc.start()
    started = time.monotonic()
    found = read.read_fleet(Path("synthetic-kubeconfig"), contexts)
    plan = plan_fleet(found.nodes)
    took = time.monotonic() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    in_a_row = args.contexts * args.list_latency + len(found.nodes) * args.configz_latency
    print(
        f"{len(found.nodes)} nodes over {args.contexts} contexts (list {args.list_latency}s, "
        f"/configz {args.configz_latency}s a read): planned in {took:.1f}s, "
        f"{fake.most} reads at most in flight (bounds: {read.CONTEXTS_AT_ONCE} contexts x "
        f"{read.NODES_AT_ONCE} nodes), {in_a_row:.0f}s in a row; {len(plan.groups)} groups; "
        f"peak Python memory {peak / 2**20:.1f} MiB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
