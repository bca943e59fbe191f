"""What every frozen clock in the tests leaves alone.

The kubernetes client loads its models lazily; freezegun, scanning modules as it
starts, would load them and hand pydantic its fake datetime class. These
packages keep the real clock.
"""

from __future__ import annotations

from typing import Final

REAL_TIME_FOR: Final = ["kubernetes", "pydantic", "urllib3"]
