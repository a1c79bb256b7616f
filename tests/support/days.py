"""Tests of today's daily challenge must not see "today" change under them."""

from __future__ import annotations

import time

DAY_S = 24 * 60 * 60


def clear_of_midnight(margin_s: float) -> None:
    """Return once the UTC day will not end within ``margin_s`` seconds.

    Close to midnight it waits for the new day to begin (at most
    ``margin_s`` seconds): a test that reads today's deal and then plays it
    would otherwise meet tomorrow's on the server.
    """
    left = DAY_S - time.time() % DAY_S
    if left < margin_s:
        time.sleep(left + 1)
