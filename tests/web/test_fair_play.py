"""Fair play through the real protocol: no deal and no board leaks; inhuman results are held.

Each test here closes one way a player who wants to win at any cost could
learn the deal, copy a rival's play or look up a solution (docs/fair-play.md).
"""

from __future__ import annotations

import asyncio
import json
import random
import secrets
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from boulanger.broker import open_broker
from boulanger.engine import Game, GameCode
from boulanger.race import daily as d
from boulanger.race.ids import new_race_id, secret_hash
from boulanger.race.race import RaceMeta, game_view
from boulanger.race.review import LINE_REASON
from boulanger.solver import solve
from boulanger.web.connection import TokenBucket
from boulanger.web.settings import Settings
from support.apps import AppServer
from support.racer import Racer, create_race
from support.screens import barrier

CODE = "BK1-C4-AAAAAAB"  # deal 1
SHORT = "BK1-C4-AAAAE4D"  # deal 4995: par 68, and never a daily deal (not in the pool)


def _today() -> d.date:
    return d.today(int(time.time() * 1000))


async def _get(base: str, path: str, **kwargs: Any) -> httpx.Response:
    async with httpx.AsyncClient(base_url=base) as http:
        return await http.get(path, **kwargs)


async def _racers(server: AppServer, created: dict, *names: str) -> list[Racer]:
    racers = []
    for i, name in enumerate(names):
        racer = await Racer(server.ws_base, created["race_id"]).connect()
        extra = {"host_key": created["host_key"]} if i == 0 else {}
        welcome = await racer.join(name, **extra)
        assert welcome["type"] == "welcome", welcome
        racers.append(racer)
    return racers


async def _spectator(server: AppServer, race_id: str) -> Racer:
    spectator = await Racer(server.ws_base, race_id).connect()
    await spectator.spectate()
    return spectator


async def _watch(racer: Racer, player_id: str | None) -> dict:
    """Ask to watch; answer the board or the refusal."""
    await racer.send(type="watch", player_id=player_id)
    return await racer.expect("board", "error")


def _drain(racer: Racer) -> list[dict]:
    """Every message received and not yet read."""
    found = []
    while not racer.inbox.empty():
        found.append(racer.inbox.get_nowait())
    return found


async def _close(*racers: Racer) -> None:
    for racer in racers:
        await racer.close()


# -- the deal of a race ----------------------------------------------------------


async def test_a_dealt_race_keeps_its_deal_secret_until_the_start(server: AppServer) -> None:
    created = await create_race(server.base, cells=4)
    assert created["code"] is None and created["open_boards"] is False and created["par"]
    lobby = (await _get(server.base, f"/api/races/{created['race_id']}")).json()
    assert lobby["code"] is None and lobby["cells"] == 4 and lobby["par"] == created["par"]
    ann, bo = await _racers(server, created, "Ann", "Bo")
    assert ann.welcome is not None and ann.welcome["race"]["code"] is None
    assert ann.welcome["game"] is None  # the layout is the deal
    spectator = await _spectator(server, created["race_id"])
    assert spectator.welcome is not None and spectator.welcome["race"]["code"] is None
    assert (await _watch(spectator, ann.player_id))["code"] == "boards_hidden"
    assert (await _watch(ann, ann.player_id))["code"] == "boards_hidden"

    await ann.start()
    # The deal reaches everyone at once, with the race_starting event.
    startings = [await r.wait_event("race_starting") for r in (ann, bo, spectator)]
    code = startings[0]["code"]
    assert code.startswith("BK1-C4-") and all(s["code"] == code for s in startings)
    assert all(s["game"] == game_view(Game(code)) for s in startings)
    running = (await _get(server.base, f"/api/races/{created['race_id']}")).json()
    assert running["code"] == code
    late = await _spectator(server, created["race_id"])
    assert late.welcome is not None and late.welcome["race"]["code"] == code
    await _close(ann, bo, spectator, late)


async def test_a_race_on_a_chosen_code_shows_it_and_the_rematch_keeps_its_deal_secret(
    server: AppServer,
) -> None:
    created = await create_race(server.base, code=CODE)
    assert created["code"] == CODE  # its players chose it
    ann, bo = await _racers(server, created, "Ann", "Bo")
    assert ann.welcome is not None and ann.welcome["race"]["code"] == CODE
    assert ann.welcome["game"] is not None
    await ann.start()
    for racer in (ann, bo):
        assert (await racer.act("resign"))["type"] == "ack"
    await ann.wait_event("race_over")
    await ann.send(type="rematch")
    opened = await bo.wait_event("rematch")
    assert opened["code"] is None  # the next deal comes from the catalog: secret
    snapshot = (await _get(server.base, f"/api/races/{opened['race_id']}")).json()
    assert snapshot["code"] is None and snapshot["rematch"] is None
    again = (await _get(server.base, f"/api/races/{created['race_id']}")).json()
    assert again["rematch"]["code"] is None
    await _close(ann, bo)


# -- boards -----------------------------------------------------------------------


async def test_boards_of_players_still_playing_reach_nobody_else(server: AppServer) -> None:
    created = await create_race(server.base, code=CODE)
    ann, bo, cy = await _racers(server, created, "Ann", "Bo", "Cy")
    spectator = await _spectator(server, created["race_id"])
    await ann.start()
    refused = await _watch(spectator, ann.player_id)
    assert refused["type"] == "error" and refused["code"] == "boards_hidden"
    assert (await _watch(bo, ann.player_id))["code"] == "watch_refused"
    for src, dst in (("col1", "cell1"), ("col2", "cell2"), ("col3", "cell3")):
        assert (await ann.move(src, dst))["type"] == "ack"
    await barrier(spectator)
    # Bo finishes: now he may watch the finished, not Ann, who still plays.
    assert (await bo.act("resign"))["type"] == "ack"
    assert (await _watch(bo, ann.player_id))["code"] == "boards_hidden"
    assert (await _watch(bo, cy.player_id))["code"] == "boards_hidden"
    watched = await _watch(spectator, bo.player_id)
    assert watched["type"] == "board" and watched["player_id"] == bo.player_id
    assert (await ann.move("col4", "cell4"))["type"] == "ack"
    for racer in (bo, cy, spectator):
        # What it was sent, up to a pong that leaves after it: a board of Ann's would be there.
        boards = [m for m in [*_drain(racer), *await barrier(racer)] if m["type"] == "board"]
        assert all(m["player_id"] != ann.player_id for m in boards), racer
    # The race over: every board may be watched.
    for racer in (ann, cy):
        assert (await racer.act("resign"))["type"] == "ack"
    await spectator.wait_event("race_over")
    seen = await _watch(spectator, ann.player_id)
    assert seen["type"] == "board" and seen["game"]["actions"] == 4
    assert (await _watch(cy, ann.player_id))["type"] == "board"
    await _close(ann, bo, cy, spectator)


async def test_a_spectator_fetches_a_finished_players_final_board_by_ref(
    server: AppServer,
) -> None:
    """What a fair race's spectator screen asks: one finished board per ref'd watch."""
    created = await create_race(server.base, code=CODE)
    ann, bo = await _racers(server, created, "Ann", "Bo")
    spectator = await _spectator(server, created["race_id"])
    await ann.start()
    assert (await bo.move("col1", "cell1"))["type"] == "ack"
    assert (await bo.act("resign"))["type"] == "ack"
    await spectator.send(type="watch", player_id=bo.player_id, ref=f"final:{bo.player_id}")
    final = await spectator.expect("board", "error")
    assert final["type"] == "board" and final["ref"] == f"final:{bo.player_id}"
    assert final["game"]["status"] == "resigned" and final["game"]["actions"] == 1
    await spectator.send(type="watch", player_id=ann.player_id, ref=f"final:{ann.player_id}")
    refused = await spectator.expect("board", "error")
    assert refused["type"] == "error" and refused["code"] == "boards_hidden"
    assert refused["ref"] == f"final:{ann.player_id}"
    await _close(ann, bo, spectator)


async def test_open_boards_let_spectators_watch_live(server: AppServer) -> None:
    created = await create_race(server.base, code=CODE, open_boards=True)
    assert created["open_boards"] is True
    ann, bo = await _racers(server, created, "Ann", "Bo")
    assert ann.welcome is not None and ann.welcome["race"]["open_boards"] is True
    spectator = await _spectator(server, created["race_id"])
    await ann.start()
    first = await _watch(spectator, ann.player_id)
    assert first["type"] == "board" and first["game"]["actions"] == 0
    assert (await ann.move("col1", "cell1"))["type"] == "ack"
    live = await spectator.expect("board")
    assert live["player_id"] == ann.player_id and live["game"]["board"]["cells"][0] == "6S"
    assert (await _watch(bo, ann.player_id))["code"] == "watch_refused"  # players: once finished
    await _close(ann, bo, spectator)


async def test_open_boards_must_be_a_boolean(server: AppServer) -> None:
    async with httpx.AsyncClient(base_url=server.base) as http:
        answer = await http.post("/api/races", json={"cells": 4, "open_boards": "yes"})
    assert (answer.status_code, answer.json()["error"]["code"]) == (400, "bad_message")


# -- the daily deal ------------------------------------------------------------------


async def test_todays_daily_deal_cannot_be_raced_at_any_cell_count(server: AppServer) -> None:
    deal = d.deal_number(_today())
    async with httpx.AsyncClient(base_url=server.base) as http:
        for cells in (4, 2, 1):
            for practice in (False, True):
                body = {"code": str(GameCode(deal, cells)), "practice": practice}
                answer = await http.post("/api/races", json=body)
                assert answer.status_code == 400, (cells, practice)
                assert answer.json()["error"]["code"] == "daily_deal"


async def test_no_hints_on_todays_daily_deal(redis_server: AppServer) -> None:
    """A practice race on today's deal, created before it was the daily (written to the log)."""
    race_id, host_key = new_race_id(), "host-key-of-yesterday"
    meta = RaceMeta(
        race_id=race_id,
        code=str(d.game_code(_today())),
        created_at=int(time.time() * 1000) - d.DAY_MS,
        host_key_hash=secret_hash(host_key),
        countdown_ms=0,
        practice=True,
    )
    broker = open_broker(redis_server.broker_url)
    await broker.start()
    try:
        await broker.create_race(meta)
    finally:
        await broker.close()
    solo = await Racer(redis_server.ws_base, race_id).connect()
    await solo.join("Solo", host_key=host_key)
    await solo.start()
    await solo.send(type="hint")
    refused = await solo.expect("error", "hint_result", timeout=30)
    assert refused["type"] == "error" and refused["code"] == "daily_deal"
    await solo.close()


async def test_a_daily_secret_makes_the_schedule_unknowable() -> None:
    """The public schedule is in docs/protocol.md: a secret one is what keeps tomorrow unknown."""
    secret = "a secret of this server's"
    async with AppServer("memory://", env={"BOULANGER_DAILY_SECRET": secret}) as proc:
        first = (await _get(proc.base, f"/api/daily/{d.FIRST_DAY}")).json()
        assert first["code"] == str(d.game_code(d.FIRST_DAY, secret))
        assert first["code"] != str(d.game_code(d.FIRST_DAY))
        today = d.game_code(_today(), secret)
        async with httpx.AsyncClient(base_url=proc.base) as http:
            refused = await http.post("/api/races", json={"code": str(GameCode(today.deal, 2))})
            assert refused.json()["error"]["code"] == "daily_deal"
            public = d.game_code(_today())
            if public.deal != today.deal:  # the public schedule's deal is just a deal here
                assert (
                    await http.post("/api/races", json={"code": str(public)})
                ).status_code == 201


async def _attempt(base: str, key: str, name: str) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=base) as http:
        answer = await http.post(
            f"/api/daily/{_today()}/attempts", json={"player_key": key, "name": name}
        )
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


async def test_a_bot_on_todays_daily_learns_the_deal_at_its_start_and_is_held(
    server: AppServer,
) -> None:
    """The bot of the issue: it solves the deal at race_starting and plays at full speed."""
    key, name = secrets.token_urlsafe(24), f"Bot{secrets.randbelow(10**6)}"
    attempt = await _attempt(server.base, key, name)
    assert attempt["code"] is None and attempt["ranked"] is True
    race_path = f"/api/races/{attempt['race_id']}"
    assert (await _get(server.base, race_path)).json()["code"] is None
    watcher = await Racer(server.ws_base, attempt["race_id"]).connect()
    refused = await watcher.spectate()
    assert refused["type"] == "error" and refused["code"] == "not_yet"
    await watcher.close()

    bot = await Racer(server.ws_base, attempt["race_id"]).connect()
    welcome = await bot.join(name, host_key=attempt["host_key"])
    assert welcome["race"]["code"] is None and welcome["game"] is None
    await bot.send(type="start")
    starting = await bot.wait_event("race_starting")
    assert starting["code"] == str(d.game_code(_today()))
    line = solve(starting["code"], budget=60).actions  # what any solver does in milliseconds
    await bot.until_started()
    for move in line:
        answer = await bot.move(move["src"], move["dst"], move["count"])
        assert answer["type"] == "ack", answer
    assert answer["status"] == "won"
    over = await bot.wait_event("race_over")
    held = over["standings"][0]["review"]
    assert held["status"] == "held" and "under 100 ms" in held["reason"]
    # The code stays out of the race's snapshots all day.
    assert (await _get(server.base, race_path)).json()["code"] is None
    await bot.close()

    today = _today()
    me = (await _get(server.base, f"/api/daily/{today}/me", headers={"X-Player-Key": key})).json()
    assert me["rank"] is None and me["entry"]["rank"] is None
    # Held for its pace at race_over, and then for its line too (a solver's line).
    assert me["entry"]["review"] == {
        "status": "held",
        "reason": f"{held['reason']}; {LINE_REASON}",
    }
    assert me["streak"] == 0
    assert "under review" in me["share"]
    assert "BK1-" not in me["share"] and "/race/" not in me["share"]
    board = (await _get(server.base, f"/api/daily/{today}/leaderboard?limit=100")).json()
    assert name not in json.dumps(board)
    for path in (
        f"/api/daily/{today}/records/{me['entry']['entry_id']}",
        f"{race_path}/records/{over['standings'][0]['player_id']}",
    ):
        refused_record = await _get(server.base, path)
        assert refused_record.status_code == 409, path
        assert refused_record.json()["error"]["code"] == "not_yet"


# -- review: a solver's line at machine speed is held, a human pace is not ------------


@pytest.fixture
async def budget_server() -> AsyncIterator[AppServer]:
    """The default message budget (a burst of 40, 5 a second) and the default review."""
    async with AppServer("memory://", env={"BOULANGER_COUNTDOWN_MS": "300"}) as server:
        yield server


class Budget:
    """The server's message budget as a client keeps it: as fast as it allows, never closed."""

    def __init__(self, sent: int) -> None:
        settings = Settings()
        # A little under the server's rate: its refill starts earlier than ours.
        self.bucket = TokenBucket(settings.message_burst, settings.messages_per_second * 0.98)
        for _ in range(sent):
            self.bucket.take()

    async def wait(self) -> None:
        while not self.bucket.take():
            await asyncio.sleep(0.005)


async def _play(
    racer: Racer, moves: list[dict], gaps_ms: list[int] | None = None, budget: Budget | None = None
) -> dict:
    answer: dict = {}
    for i, move in enumerate(moves):
        if gaps_ms is not None:
            await asyncio.sleep(gaps_ms[i] / 1000)
        if budget is not None:
            await budget.wait()
        answer = await racer.move(move["src"], move["dst"], move["count"])
        assert answer["type"] == "ack", answer
    return answer


async def test_a_solver_line_at_the_budget_is_held_and_the_same_line_at_human_pace_is_not(
    budget_server: AppServer,
) -> None:
    line = solve(SHORT, budget=30).actions
    created = await create_race(budget_server.base, code=SHORT)
    assert created["par"] == len(line)
    ann, bo, cy = await _racers(budget_server, created, "Ann", "Bo", "Cy")
    budget = Budget(sent=2)  # Ann's join and start
    await ann.start()
    for racer in (bo, cy):
        await racer.until_started()
    rng = random.Random(18)
    human = [rng.randint(600, 900) for _ in range(14)]  # one action every 600-900 ms

    async def bot_wins() -> None:  # the whole line, as fast as the budget lets it through
        assert (await _play(ann, line, budget=budget))["status"] == "won"

    async def human_resigns() -> None:
        await _play(bo, line[:14], human)
        assert (await bo.act("resign"))["type"] == "ack"

    async def bot_resigns() -> None:
        await _play(cy, line[:14])
        assert (await cy.act("resign"))["type"] == "ack"

    await asyncio.gather(bot_wins(), human_resigns(), bot_resigns())
    over = await ann.wait_event("race_over", timeout=30)
    review = {s["name"]: s["review"] for s in over["standings"]}
    assert review["Bo"] is None
    assert review["Ann"]["status"] == "held" and review["Cy"]["status"] == "held"
    assert (
        "under 100 ms" in review["Ann"]["reason"] and f"par {len(line)}" in review["Ann"]["reason"]
    )
    assert over["standings"][0]["name"] == "Ann"  # held, yet in its place

    # Every action of the record carries its time; replay checks their order.
    async with httpx.AsyncClient(base_url=budget_server.base) as http:
        record = (await http.get(f"/api/races/{created['race_id']}/records/{bo.player_id}")).json()
    times = [a["t"] for a in record["actions"]]
    assert len(times) == 14 and times == sorted(times)
    assert times[-1] >= sum(human) - 50  # the pauses, as the server's clock saw them
    replayed = subprocess.run(
        [sys.executable, "-m", "boulanger", "replay", "-"],
        input=json.dumps(record),
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(replayed.stdout)["actions"] == 14
    await _close(ann, bo, cy)
