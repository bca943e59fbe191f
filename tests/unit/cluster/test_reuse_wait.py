"""How long a cluster found running may take to turn healthy before it is recreated."""

from __future__ import annotations

from crashloop_harness.cluster.reusehealth import reuse_health_wait
from crashloop_harness.core import timeouts

REFUSED = "MaxRetryError: ... Connection refused"


def test_an_answering_api_server_gets_the_whole_wait() -> None:
    assert reuse_health_wait("", uptime_s=None) == timeouts.REUSE_HEALTH
    assert reuse_health_wait("", uptime_s=3600.0) == timeouts.REUSE_HEALTH


def test_a_control_plane_just_restarted_gets_what_is_left_of_the_wait() -> None:
    assert reuse_health_wait(REFUSED, uptime_s=20.0) == timeouts.REUSE_HEALTH - 20.0


def test_a_control_plane_that_refuses_long_after_its_start_is_recreated_at_once() -> None:
    assert reuse_health_wait(REFUSED, uptime_s=timeouts.REUSE_HEALTH + 1) == 0.0
    assert reuse_health_wait(REFUSED, uptime_s=7200.0) == 0.0


def test_a_refusing_control_plane_whose_start_is_unknown_is_recreated_at_once() -> None:
    assert reuse_health_wait(REFUSED, uptime_s=None) == 0.0
