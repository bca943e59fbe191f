"""The `crashloop` command: one module per verb family (setup, cluster, measure,
flakiness, matrix, overhead, demo), each with its commands' flags, help and
handlers; what they share (common), exit codes (codes), text or JSON (out), and
the command put together (app).

``main`` is the console script's entry point (``crashloop = crashloop_harness.cli:main``).
"""

from crashloop_harness.cli.app import main

__all__ = ["main"]
