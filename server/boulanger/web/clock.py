"""The races' clock, read here in the shell and passed to the race logic, which never reads one."""

from __future__ import annotations

import time
from collections.abc import Callable

# Where the clock reads the time, in seconds: the wall. Tests of paced play
# put a clock of theirs here and move it forward instead of sleeping.
source: Callable[[], float] = time.time


def now_ms() -> int:
    """Wall-clock time in milliseconds, the races' clock."""
    return int(source() * 1000)
