"""A rejoin's welcome holds every action acknowledged to the player, wherever it was.

Two servers on one Redis, A and B, both the application served by uvicorn
inside the test (each with its own connections, as a process has), so that
the test can make B's copy of the race lag the log (its hub stops hearing
pub/sub, as over a slow link) without touching the code under test.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from support.apps import AppServer
from support.games import game_after, random_record
from support.racer import Racer, create_race
from support.servers import RedisProcess

CODE = "BK1-C4-AAAAAAB"
MOVES = [("col1", "cell1"), ("col2", "cell2"), ("col3", "cell3")]


@pytest.fixture
async def in_process(own_redis: RedisProcess) -> AsyncIterator[tuple[AppServer, str]]:
    """Server B: the application on the same Redis, served in this test's event loop."""
    async with AppServer(own_redis.url, env={"BOULANGER_COUNTDOWN_MS": "300"}) as server:
        yield server, server.ws_base


async def test_a_rejoin_on_a_lagging_process_reflects_every_acknowledged_action(
    own_redis: RedisProcess, in_process: tuple[AppServer, str]
) -> None:
    server_b, ws_b = in_process
    server_a = AppServer(own_redis.url, env={"BOULANGER_COUNTDOWN_MS": "300"})
    await server_a.start()
    try:
        created = await create_race(server_a.base, code=CODE)
        race_id = created["race_id"]
        ann = await Racer(server_a.ws_base, race_id).connect()
        await ann.join("Ann", host_key=created["host_key"])
        watcher = await Racer(ws_b, race_id).connect()  # B holds the race's hub
        await watcher.spectate()
        await ann.start()
        state = server_b.services
        hub = state.hubs._hubs[race_id]
        async with asyncio.timeout(5):
            while hub.race.start_at is None:
                await asyncio.sleep(0.02)
        # From here B hears nothing of the race: its copy lags the log.
        await state.broker.unsubscribe(hub.channel, hub)
        acks = []
        for src, dst in MOVES:
            acks.append(last := await ann.move(src, dst))
            assert last["type"] == "ack"
        assert hub.race.players[ann.player_id].game.record().actions == ()

        back = await Racer(ws_b, race_id).connect()
        welcome = await back.join(token=ann.token)
        assert welcome["type"] == "welcome"
        assert welcome["game"] == game_after(CODE, acks)  # every acknowledged move
        assert welcome["race"]["seq"] == last["seq"]
        # And it plays on from there, on B.
        assert (await back.act("undo"))["type"] == "ack"
        for racer in (ann, watcher, back):
            await racer.close()
    finally:
        await server_a.stop()


async def test_a_position_left_unjudged_is_judged_where_its_player_rejoins(
    own_redis: RedisProcess,
) -> None:
    """Ann reaches a dead end on A, which would judge it only after a long pause
    (as if it had gone meanwhile); she comes back on B, which judges it."""
    fast = {"BOULANGER_COUNTDOWN_MS": "300"}
    server_a = AppServer(own_redis.url, env={**fast, "BOULANGER_JUDGE_AFTER_S": "600"})
    server_b = AppServer(own_redis.url, env={**fast, "BOULANGER_JUDGE_AFTER_S": "0.2"})
    await server_a.start()
    await server_b.start()
    try:
        created = await create_race(server_a.base, code=CODE)
        race_id = created["race_id"]
        ann = await Racer(server_a.ws_base, race_id).connect()
        await ann.join("Ann", host_key=created["host_key"])
        bo = await Racer(server_b.ws_base, race_id).connect()
        await bo.join("Bo")
        await ann.start()
        await bo.until_started()
        for action in random_record(CODE, 1)["actions"]:  # to a dead end (tests/race)
            if "undo" in action:
                answer = await ann.act("undo")
            else:
                answer = await ann.move(action["src"], action["dst"], action["count"])
            assert answer["type"] == "ack" and answer["status"] == "playing", answer
        await ann.close()
        back = await Racer(server_b.ws_base, race_id).connect()
        welcome = await back.join(token=ann.token)
        assert welcome["game"]["status"] == "playing"  # not judged yet, anywhere
        judged = await bo.wait_event("progress", player_id=ann.player_id, status="dead_end")
        assert judged["seq"] == answer["seq"] + 1
        await back.wait_event("progress", status="dead_end")
        for racer in (bo, back):
            await racer.close()
    finally:
        await server_a.stop()
        await server_b.stop()
