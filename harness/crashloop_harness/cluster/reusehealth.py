"""Whether a cluster found running is worth waiting for: how long its API server has had
to answer since its control-plane container started."""

from __future__ import annotations

from datetime import UTC, datetime

from kubernetes import client

from crashloop_harness.core import timeouts
from crashloop_harness.core.errors import HarnessError
from crashloop_harness.core.proc import run


def control_plane_uptime(name: str) -> float | None:
    """Seconds since the cluster's control-plane container last started; None if unknown."""
    try:
        started = run(
            [
                "docker",
                "inspect",
                "--format",
                "{{.State.StartedAt}}",
                f"{name}-control-plane",
            ],
            timeout=timeouts.ENGINE_PROBE,
        ).strip()
        return (datetime.now(UTC) - datetime.fromisoformat(started)).total_seconds()
    except (HarnessError, ValueError):
        return None


def api_refusal(api: client.ApiClient) -> str:
    """Why the API server does not answer a version request, or '' when it does."""
    try:
        client.VersionApi(api).get_code(_request_timeout=timeouts.ENGINE_PROBE)
    except Exception as error:  # refused, reset, TLS: any of them is "does not answer"
        return f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    return ""


def reuse_health_wait(refusal: str, uptime_s: float | None) -> float:
    """How long an existing cluster may take to turn healthy before it is recreated.

    An API server that answers gets the whole REUSE_HEALTH for its nodes. One
    that refuses is given what is left of REUSE_HEALTH counted from its
    container's start: a control plane that was just restarted (a restarted
    engine) is still starting, one that has run longer and still refuses
    will not come back, and waiting the full REUSE_HEALTH on it again is
    time lost.
    """
    if not refusal:
        return timeouts.REUSE_HEALTH
    if uptime_s is None:
        return 0.0
    return max(timeouts.REUSE_HEALTH - uptime_s, 0.0)
