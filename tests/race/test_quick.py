"""The quick-race queue as plain Python: who goes where, and when a race starts."""

from __future__ import annotations

import pytest

from boulanger.race.events import Started
from boulanger.race.quick import QuickQueue, start_event
from boulanger.race.race import Race, RaceMeta


def test_newcomers_share_the_open_race_of_their_cell_count() -> None:
    queue = QuickQueue(players=3, wait_ms=20_000)
    assert queue.waiting(4, 0) is None
    race = queue.add("r1", 4, 0)
    queue.hand_out(race, "a", 0)
    assert queue.waiting(4, 10) is race
    assert queue.waiting(2, 10) is None  # another cell count, another race
    queue.hand_out(race, "b", 10)
    queue.hand_out(race, "c", 20)
    assert queue.waiting(4, 20) is None  # three places on their way: full
    assert "r1" in queue.watched  # still to be started


def test_a_race_starts_when_full_or_a_while_after_its_second_player() -> None:
    queue = QuickQueue(players=3, wait_ms=20_000)
    race = queue.add("r1", 4, 0)
    assert not queue.should_start(race, 1, 5_000)  # alone: waits, however long
    assert not queue.should_start(race, 1, 60_000)
    assert not queue.should_start(race, 2, 61_000)  # the second arrived: 20 s from now
    assert race.start_by(queue.wait_ms) == 81_000
    assert not queue.should_start(race, 2, 80_999)
    assert queue.should_start(race, 2, 81_000)
    other = queue.add("r2", 4, 0)
    assert queue.should_start(other, 3, 1_000)  # full: at once
    queue.started(other)
    assert not queue.should_start(other, 3, 2_000)
    assert "r2" not in queue.watched and queue.waiting(4, 2_000) is None


def test_a_race_nobody_else_joined_stops_taking_newcomers() -> None:
    queue = QuickQueue(players=8, wait_ms=20_000, expire_ms=60_000)
    race = queue.add("r1", 4, 0)
    queue.hand_out(race)
    assert queue.waiting(4, 59_000) is race
    assert queue.waiting(4, 61_000) is None
    assert "r1" not in queue.watched


def test_settings_out_of_range_are_refused() -> None:
    with pytest.raises(ValueError, match="2 to 8"):
        QuickQueue(players=1)
    with pytest.raises(ValueError, match="2 to 8"):
        QuickQueue(players=9)


def test_the_start_event_needs_no_host() -> None:
    race = Race(RaceMeta("r1", "BK1-C4-AAAAAAC", 0, "nobody", countdown_ms=3000))
    event = start_event(race, 1_000)
    assert event == Started(1_000, 4_000)
    race.apply(1, event)
    assert race.state(4_000) == "running"
    assert start_event(race, 5_000) is None  # started already


def test_places_never_used_expire_and_one_address_holds_two() -> None:
    queue = QuickQueue(players=3, wait_ms=20_000, place_ms=15_000, places_per_address=2)
    race = queue.add("r1", 4, 0)
    # One address asks seven times: two places are held for it, the rest go nowhere.
    held = [queue.hand_out(race, "10.0.0.9", n) for n in range(7)]
    assert held == [True, True, False, False, False, False, False]
    assert queue.filled(race, 10) == 2 and queue.waiting(4, 10) is race
    # A player who comes and connects takes the oldest place held.
    assert queue.hand_out(race, "10.0.0.1", 100)
    assert queue.filled(race, 100) == 3 and queue.waiting(4, 100) is None
    queue.seen(race, 1)
    assert queue.filled(race, 200) == 3 and race.places[0][1] == "10.0.0.9"
    # Fifteen seconds on, the places nobody used are free again.
    assert queue.filled(race, 15_100) == 1


def test_players_connected_fill_a_race_and_start_it() -> None:
    queue = QuickQueue(players=3, wait_ms=20_000)
    race = queue.add("r1", 4, 0)
    for n, address in enumerate("abc"):
        queue.hand_out(race, address, n)
    assert not queue.should_start(race, 2, 1_000)  # two connected, one on its way
    assert queue.filled(race, 1_000) == 3
    assert queue.should_start(race, 3, 2_000)  # the third connected: at once
