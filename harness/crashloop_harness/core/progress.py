"""What a long step is handed to say how it goes.

Set-up, runs and sweeps report one line at a time, so the CLI's step lines, the
demo's screen and the tests' log all take the same callable.
"""

from collections.abc import Callable
from typing import TypeAlias

Progress: TypeAlias = Callable[[str], None]
