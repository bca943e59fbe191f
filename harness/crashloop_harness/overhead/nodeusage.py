"""What a kind node's kubelet and runtime use: their processes, the kubelet's API requests.

The processes are read in one ``cat`` of every ``/proc/<pid>/stat`` inside
the node's container (``docker exec``); the kubelet's request counters from
its ``/metrics`` through the API server's node proxy. Parsing is in
:mod:`crashloop_harness.overhead.analysis`.
"""

from __future__ import annotations

import time
from typing import Final

import urllib3
from kubernetes import client

from crashloop_harness.cluster.kubeletapi import kubelet_get
from crashloop_harness.cluster.nodecommand import run_in_node
from crashloop_harness.core import timeouts
from crashloop_harness.overhead.analysis import (
    ProcessTimes,
    RequestSample,
    parse_proc_stats,
    parse_request_counts,
)

# /proc is read through one `cat`: Linux's clock ticks and page size (kind nodes).
_TICKS_PER_S: Final = 100
_PAGE_BYTES: Final = 4096
_PROC_STATS: Final = "cat /proc/[0-9]*/stat 2>/dev/null; true"


def read_processes(node: str) -> list[ProcessTimes]:
    text = run_in_node(node, ["sh", "-c", _PROC_STATS], timeout=timeouts.API_REQUEST)
    return parse_proc_stats(text, ticks_per_s=_TICKS_PER_S, page_bytes=_PAGE_BYTES)


def kubelet_requests(core: client.CoreV1Api, node: str) -> RequestSample | None:
    """The kubelet's request counters now; None when its /metrics did not answer."""
    try:
        metrics = kubelet_get(core.api_client, node, "metrics")
    except (client.ApiException, urllib3.exceptions.HTTPError):
        return None
    return RequestSample(time.monotonic(), parse_request_counts(metrics.decode("utf-8", "replace")))
