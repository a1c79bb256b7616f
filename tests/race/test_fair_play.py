"""Fair play in the race logic: secret deals, private boards, timed records, reviews."""

from __future__ import annotations

from datetime import date

import pytest

from boulanger.engine import Game
from boulanger.race import daily as d
from boulanger.race import protocol as p
from boulanger.race.race import game_view
from boulanger.race.review import ReviewLimits
from boulanger.solver import solve

from .test_race import CODE, Log

DAY = date(2026, 11, 30)
NOON = d.day_start_ms(DAY) + 12 * 3_600_000


def _race(**meta: object) -> Log:
    log = Log(**{"countdown_ms": 0, **meta})
    log.join("Ann", "p1", host=True)
    log.join("Bo", "p2")
    return log


def test_a_dealt_race_keeps_its_code_and_layout_until_the_start() -> None:
    log = _race(hidden_deal=True)
    race = log.race
    assert race.snapshot(0)["code"] is None and race.snapshot(0)["cells"] == 4
    assert race.game_of("p1") is None
    starting = log.append(race.decide_start("p1", 0))
    assert isinstance(starting, p.RaceStarting)
    assert starting.code == CODE and starting.game == game_view(Game(CODE))
    assert race.snapshot(1)["code"] == CODE
    assert race.game_of("p1") == starting.game


def test_a_race_on_a_chosen_code_shows_it_throughout() -> None:
    log = _race()
    assert log.race.snapshot(0)["code"] == CODE and log.race.game_of("p1") is not None


def test_todays_daily_code_stays_hidden_until_the_day_ends() -> None:
    log = Log(countdown_ms=0, daily=DAY.isoformat(), hidden_deal=True)
    log.join("Ann", "p1", host=True)
    starting = log.append(log.race.decide_start("p1", NOON))
    assert isinstance(starting, p.RaceStarting) and starting.code == CODE  # the player's own
    assert log.race.snapshot(NOON + 1)["code"] is None
    assert log.race.game_of("p1") is not None  # their own game, to play on
    assert log.race.snapshot(d.next_at(DAY))["code"] == CODE


def _refusal(log: Log, viewer: str | None, player: str, now: int = 50) -> str | None:
    refused = log.race.watch_refusal(viewer, player, now)
    return None if refused is None else refused.code


@pytest.mark.parametrize("open_boards", [False, True])
def test_who_may_watch_whom(open_boards: bool) -> None:
    log = _race(hidden_deal=True, open_boards=open_boards)
    log.join("Cy", "p3")
    assert _refusal(log, None, "p1") == "boards_hidden"  # the deal is not dealt yet
    assert _refusal(log, "p1", "p1") == "boards_hidden"
    log.start()
    assert _refusal(log, "p1", "p1") is None
    assert _refusal(log, "p1", "p2") == "watch_refused"  # still playing: no one else's board
    log.act("p2", p.Resign("r2"), 10)
    assert _refusal(log, None, "p2") is None  # finished: anyone may
    assert _refusal(log, "p2", "p3") == (None if open_boards else "boards_hidden")
    assert _refusal(log, None, "p1") == (None if open_boards else "boards_hidden")
    log.act("p1", p.Resign("r1"), 20)
    log.act("p3", p.Resign("r3"), 30)
    log.append(log.race.decide_over(40))
    assert _refusal(log, "p1", "p3") is None and _refusal(log, None, "p1") is None


def test_records_carry_each_actions_time_never_going_back() -> None:
    log = _race(countdown_ms=1000)
    start_at = log.start(now=5000)
    log.act("p1", p.MoveAction("a", "col1", "cell1"), start_at + 700)
    # Another process, its clock 300 ms behind, accepts the next one.
    log.act("p1", p.Undo("b"), start_at + 400)
    log.act("p1", p.MoveAction("c", "col1", "cell2"), start_at + 2000)
    record = log.race.record("p1").to_dict()
    assert [a["t"] for a in record["actions"]] == [700, 700, 2000]
    assert Game.from_record(record).history == log.race.players["p1"].game.history


def test_a_result_beyond_human_pace_is_held_in_the_standings() -> None:
    line = solve(CODE, budget=30).actions
    log = _race(review=ReviewLimits().to_dict(), par=len(line))
    log.start()
    for i, move in enumerate(line, start=1):  # a move every 5 ms
        won = log.act("p1", p.MoveAction(f"a{i}", move["src"], move["dst"], move["count"]), i * 5)
    assert isinstance(won, p.Progress) and won.player["status"] == "won"
    held = won.player["review"]
    assert held["status"] == "held" and "median time between actions 5 ms" in held["reason"]
    for i, move in enumerate(line[:12], start=1):  # Bo: a move every 700 ms, then resigns
        log.act("p2", p.MoveAction(f"b{i}", move["src"], move["dst"], move["count"]), i * 700)
    resigned = log.act("p2", p.Resign("rb"), 9000)
    assert isinstance(resigned, p.Progress) and resigned.player["review"] is None
    over = log.append(log.race.decide_over(9001))
    assert isinstance(over, p.RaceOver)
    assert [s["review"] is not None for s in over.standings] == [True, False]
    assert log.race.snapshot(9002)["players"][0]["review"] == held


def test_a_race_without_limits_holds_nothing() -> None:
    line = solve(CODE, budget=30).actions
    log = _race(par=len(line))
    log.start()
    for i, move in enumerate(line, start=1):
        won = log.act("p1", p.MoveAction(f"a{i}", move["src"], move["dst"], move["count"]), i)
    assert isinstance(won, p.Progress) and won.player["review"] is None


def test_a_rematch_on_a_dealt_deal_names_no_code() -> None:
    log = _race(hidden_deal=True)
    log.start()
    for pid in ("p1", "p2"):
        log.act(pid, p.Resign(f"r-{pid}"), 10)
    log.append(log.race.decide_over(20))
    opened = log.append(log.race.decide_rematch("p1", "r2", None))
    assert isinstance(opened, p.RematchOpened) and opened.code is None
    assert log.race.snapshot(30)["rematch"] == {"race_id": "r2", "code": None, "url": "/race/r2"}
