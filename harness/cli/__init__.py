"""The `crashloop` command: its parser (args), help texts (help), handlers (dispatch),
output (out), the information verbs (info) and the overhead verbs (overhead).

``main`` is the console script's entry point (``crashloop = harness.cli:main``).
"""

from harness.cli.dispatch import main

__all__ = ["main"]
