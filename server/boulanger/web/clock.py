"""The races' clock, read here in the shell and passed to the race logic, which never reads one."""

from __future__ import annotations

import time


def now_ms() -> int:
    """Wall-clock time in milliseconds, the races' clock."""
    return int(time.time() * 1000)
