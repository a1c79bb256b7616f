"""Tests of today's daily challenge must not see "today" change under them."""

from __future__ import annotations

import signal
import time

DAY_S = 24 * 60 * 60


def clear_of_midnight(margin_s: float) -> None:
    """Return once the UTC day will not end within ``margin_s`` seconds.

    Close to midnight it waits for the new day to begin (at most
    ``margin_s`` seconds): a test that reads today's deal and then plays it
    would otherwise meet tomorrow's on the server. The wait is not the
    test's own time: a running per-test alarm (pytest-timeout's, which
    arms ``ITIMER_REAL``) is put back by as long as the wait.
    """
    left = DAY_S - time.time() % DAY_S
    if left < margin_s:
        wait = left + 1
        armed, _ = signal.getitimer(signal.ITIMER_REAL)
        if armed:
            signal.setitimer(signal.ITIMER_REAL, armed + wait)
        time.sleep(wait)
