"""A solver's line played at a human pace is held for its line; a human-like line is not.

Through the real protocol, on an app served in this test's event loop. The
pace is real to the server but costs no waiting: the races' clock
(``boulanger.web.clock.source``) is the test's, moved forward by each pause
before an action is sent (seeded), so every action's ``t`` is exactly the
sum of the pauses before it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import secrets
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from boulanger.race import daily as d
from boulanger.race.review import LINE_REASON
from boulanger.solver import solve
from boulanger.web import clock as races_clock
from boulanger.web.solving import SolverPool
from support.apps import AppServer
from support.days import clear_of_midnight
from support.players import HumanPace, Planner, play_offline
from support.racer import Racer, create_race

SHORT = "BK1-C4-AAAAE4D"  # deal 4995: par 68, 16 decisions; never a daily deal
HELD = {"status": "held", "reason": LINE_REASON}


class Clock:
    """The races' clock for a test: stands still unless moved forward."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms / 1000


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    clear_of_midnight(10 * 60)  # the daily test's day must not change under it
    fake = Clock()
    monkeypatch.setattr(races_clock, "source", fake)
    yield fake


@pytest.fixture
async def served(clock: Clock) -> AsyncIterator[tuple[str, str]]:
    """An app with the default review limits, served here: (http base, ws base)."""
    env = {
        "BOULANGER_COUNTDOWN_MS": "0",
        # The message budget runs on the loop's time, which does not move with
        # the races' clock: a burst large enough for whole games sent at once.
        "BOULANGER_MESSAGE_BURST": "2000",
        "BOULANGER_DAILY_GUESTS_RANKED": "1",
    }
    async with AppServer("memory://", env=env) as server:
        yield server.base, server.ws_base


async def _play(racer: Racer, clock: Clock, actions: list[dict[str, Any]], gaps: list[int]) -> dict:
    answer: dict[str, Any] = {}
    for action, gap in zip(actions, gaps, strict=True):
        clock.advance(gap)
        if "undo" in action:
            answer = await racer.act("undo")
        else:
            answer = await racer.move(action["src"], action["dst"], action["count"])
        assert answer["type"] == "ack", answer
    return answer


def _gaps(record: dict[str, Any]) -> list[int]:
    times = [a["t"] for a in record["actions"]]
    return [b - a for a, b in zip([0, *times[:-1]], times, strict=True)]


async def test_a_paced_solver_line_is_held_for_its_line_and_a_human_like_line_is_not(
    served: tuple[str, str], clock: Clock
) -> None:
    base, ws_base = served
    line = solve(SHORT, budget=30).actions
    rng = random.Random(31)
    paced = [rng.randint(600, 900) for _ in line]  # a fast human's pace, jittered
    human = play_offline(Planner(HumanPace(7), 7), SHORT)  # never sees a solver's line
    created = await create_race(base, code=SHORT)
    ann = await Racer(ws_base, created["race_id"]).connect()
    bo = await Racer(ws_base, created["race_id"]).connect()
    assert (await ann.join("Ann", host_key=created["host_key"]))["type"] == "welcome"
    assert (await bo.join("Bo"))["type"] == "welcome"
    await ann.start()

    assert (await _play(ann, clock, line, paced))["status"] == "won"
    # Measured by the solver once the win was final, then logged: a progress event.
    held = await ann.wait_event("progress", timeout=60, player_id=ann.player_id, review=HELD)
    assert held["player"]["status"] == "won"
    assert (await _play(bo, clock, human["actions"], _gaps(human)))["status"] == "won"
    over = await bo.wait_event("race_over", timeout=60)

    async with httpx.AsyncClient(base_url=base) as http:

        async def measured() -> dict[str, Any]:
            # Bo's line is measured after his win (and holds nothing): wait for its event.
            async with asyncio.timeout(60):
                while True:
                    race = (await http.get(f"/api/races/{created['race_id']}")).json()
                    if race["seq"] > over["seq"]:
                        return race
                    await asyncio.sleep(0.05)

        race = await measured()
        ann_record = await http.get(f"/api/races/{created['race_id']}/records/{ann.player_id}")
    reviews = {p["name"]: p["review"] for p in race["players"]}
    assert reviews == {"Ann": HELD, "Bo": None}
    # The pace passed: the server saw the test's pauses, to the millisecond.
    assert [a["t"] for a in ann_record.json()["actions"]] == list(itertools.accumulate(paced))
    # The figures and the limits are for moderators: on no wire.
    for text in (json.dumps(race), json.dumps(over), json.dumps(held)):
        assert "decisions" not in text and "on_line" not in text and "75%" not in text
    await ann.close()
    await bo.close()


async def _daily_copier(base: str, ws_base: str, clock: Clock) -> tuple[dict, dict]:
    """A paced solver line on today's ranked attempt: the player's /me once their
    entry is recorded, and the day's leaderboard."""
    key = secrets.token_urlsafe(24)
    today = d.today(int(clock() * 1000))
    async with httpx.AsyncClient(base_url=base) as http:
        attempt = (
            await http.post(f"/api/daily/{today}/attempts", json={"player_key": key, "name": "Ann"})
        ).json()
        assert attempt["ranked"] is True, attempt
        racer = await Racer(ws_base, attempt["race_id"]).connect()
        await racer.join("Ann", host_key=attempt["host_key"])
        await racer.send(type="start")
        starting = await racer.wait_event("race_starting")
        line = solve(starting["code"], budget=60).actions
        await racer.until_started()
        rng = random.Random(32)
        await _play(racer, clock, line, [rng.randint(600, 900) for _ in line])
        over = await racer.wait_event("race_over", timeout=30)
        assert over["standings"][0]["review"] is None  # the pace passed

        async def entry() -> dict[str, Any]:
            async with asyncio.timeout(60):
                while True:
                    me = (
                        await http.get(f"/api/daily/{today}/me", headers={"X-Player-Key": key})
                    ).json()
                    if me["entry"] is not None:
                        return me
                    await asyncio.sleep(0.05)

        me = await entry()
        board = (await http.get(f"/api/daily/{today}/leaderboard")).json()
    await racer.close()
    return me, board


async def test_a_paced_solver_line_on_todays_daily_stays_off_the_leaderboard(
    served: tuple[str, str], clock: Clock
) -> None:
    """The attempt's race is over at the win; its entry is recorded once its line is judged."""
    me, board = await _daily_copier(*served, clock)
    assert me["entry"]["review"] == HELD and me["rank"] is None and me["streak"] == 0
    assert "line" not in me["entry"] and "line_held" not in me["entry"]
    assert board["total"] == 0 and "Ann" not in json.dumps(board)


async def test_a_line_the_solver_cannot_measure_holds_nothing_and_the_result_counts(
    served: tuple[str, str], clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A measure that fails is logged as such: the results are recorded, not held."""

    async def broken(self: SolverPool, record: dict[str, Any], par: int | None) -> dict:
        raise RuntimeError("the solver's process is gone")

    monkeypatch.setattr(SolverPool, "line", broken)
    me, board = await _daily_copier(*served, clock)
    assert me["entry"]["review"] is None and me["rank"] == 1 and board["total"] == 1
