"""Example conftest for a suite of your own that uses crashloop-harness's fixtures.

Nothing has to be registered: installing crashloop-harness makes pytest load
its plugin (and pytest-kind's too, with the ``kind`` extra). Settings go on the command line
(``--crashloop-kubernetes 1.34``) or in your pytest configuration
(``crashloop_kubernetes = 1.34``). Override ``crashloop_cluster_options`` to
give the session a cluster spec of your own, as below.
"""

from __future__ import annotations

import pytest

from crashloop_harness.plugin import ClusterOptions, read_cluster_options


@pytest.fixture(scope="session")
def crashloop_cluster_options(pytestconfig: pytest.Config) -> ClusterOptions:
    """The built-in three-worker spec; a path to your own YAML works the same way."""
    return read_cluster_options(pytestconfig, "crashloop")
