"""The wait for a new day does not eat a test's time limit."""

from __future__ import annotations

import signal

import pytest

from support import days


def test_a_wait_for_midnight_moves_the_alarm_on_by_the_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    slept: list[float] = []
    monkeypatch.setattr(days.time, "time", lambda: 10 * days.DAY_S - 30.0)  # 30 s before midnight
    monkeypatch.setattr(days.time, "sleep", slept.append)
    before = signal.getitimer(signal.ITIMER_REAL)
    signal.setitimer(signal.ITIMER_REAL, 100.0)
    try:
        days.clear_of_midnight(60)
        armed, _ = signal.getitimer(signal.ITIMER_REAL)
    finally:
        signal.setitimer(signal.ITIMER_REAL, *before)
    assert slept == [31.0]
    assert 130.0 < armed <= 131.0


def test_far_from_midnight_nothing_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(days.time, "time", lambda: 10 * days.DAY_S + 3600.0)
    monkeypatch.setattr(days.time, "sleep", slept.append)
    days.clear_of_midnight(600)
    assert slept == []
