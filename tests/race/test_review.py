"""The review of a result's pace: a solver's line at machine speed is held, human play is not."""

from __future__ import annotations

import itertools
import random

import pytest

from boulanger.race.review import ReviewLimits, review, review_wire
from boulanger.solver import solve

CODE = "BK1-C4-AAAAAAB"  # deal 1
LIMITS = ReviewLimits()


@pytest.fixture(scope="module")
def line() -> list[dict]:
    solution = solve(CODE, budget=30)
    assert solution.result == "won" and solution.par is not None
    return solution.actions


def _times(gaps: list[int]) -> list[int]:
    return list(itertools.accumulate(gaps))


def test_a_bot_sending_as_fast_as_the_message_budget_allows_is_held(line: list[dict]) -> None:
    # The default budget (a burst of 40, then 5 a second): 40 actions a
    # loopback round trip apart (about 2 ms), the rest 200 ms apart.
    gaps = [2] * 40 + [200] * (len(line) - 40)
    times = _times(gaps)
    reason = review(times, LIMITS, won_ms=times[-1], par=len(line))
    assert reason is not None
    assert f"40 of {len(line)} actions under 100 ms" in reason
    assert f"par {len(line)} takes a human at least" in reason


def test_a_bot_pacing_itself_at_the_budget_is_held(line: list[dict]) -> None:
    times = _times([200] * len(line))
    reason = review(times, LIMITS, won_ms=times[-1], par=len(line))
    assert reason is not None and "median time between actions 200 ms" in reason


def test_the_same_line_at_600_to_900_ms_with_jitter_is_not_held(line: list[dict]) -> None:
    for seed in range(20):
        rng = random.Random(seed)
        times = _times([rng.randint(600, 900) for _ in line])
        assert review(times, LIMITS, won_ms=times[-1], par=len(line)) is None, seed


def test_a_fast_human_with_bursts_and_a_bad_network_is_not_held(line: list[dict]) -> None:
    """Think, then play a planned run fast; finish with a run of taps to the foundations.

    Every fourth action waits 1.5 to 5 s (reading the board), the others
    follow at 250 to 450 ms; the last 30 are foundation taps 180 to 300 ms
    apart; and a jittery network delivers one in eight bunched (0-20 ms
    after the one before).
    """
    for seed in range(20):
        rng = random.Random(seed)
        gaps = []
        for i in range(len(line)):
            if i >= len(line) - 30:
                gap = rng.randint(180, 300)
            elif i % 4 == 0:
                gap = rng.randint(1500, 5000)
            else:
                gap = rng.randint(250, 450)
            gaps.append(rng.randint(0, 20) if rng.random() < 0.125 else gap)
        times = _times(gaps)
        assert review(times, LIMITS, won_ms=times[-1], par=len(line)) is None, seed


def test_short_results_are_not_judged_and_zero_turns_a_limit_off() -> None:
    assert review([0] * 9, LIMITS, won_ms=None, par=None) is None
    assert review([0] * 10, LIMITS, won_ms=None, par=None) is not None
    off = ReviewLimits(median_ms=0, fast_ms=0, par_ms=0)
    assert review([0] * 100, off, won_ms=0, par=100) is None


def test_each_limit_names_itself() -> None:
    only_median = review(_times([240] * 20), LIMITS, won_ms=None, par=None)
    assert only_median == "median time between actions 240 ms (a human needs 250 ms)"
    gaps = [50] * 7 + [400] * 13  # 7 of 20 fast: over 30%
    assert review(_times(gaps), LIMITS, won_ms=None, par=None) == (
        "7 of 20 actions under 100 ms after the previous one (at most 30%)"
    )
    gaps = [50] * 6 + [400] * 14  # 6 of 20: 30% is allowed
    assert review(_times(gaps), LIMITS, won_ms=None, par=None) is None
    slow_enough = _times([300] * 60)
    assert review(slow_enough, LIMITS, won_ms=slow_enough[-1], par=80) == (
        "won in 0:18.0: par 80 takes a human at least 0:20.0"
    )


def test_limits_round_trip_and_the_wire_form() -> None:
    limits = ReviewLimits(min_actions=5, median_ms=300, fast_ms=80, fast_share=0.1, par_ms=200)
    assert ReviewLimits.from_dict({**limits.to_dict(), "later": 1}) == limits
    assert review_wire(None) is None
    assert review_wire("too fast") == {"status": "held", "reason": "too fast"}
