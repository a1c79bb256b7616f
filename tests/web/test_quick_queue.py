"""A quick race's queue as its players see it: one start time for all, the
number waiting, a way out of the queue, and the figures of GET /api/quick."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from boulanger.broker import open_store
from boulanger.web.quick import merged
from support.apps import AppServer
from support.racer import Racer

QUEUE_ENV = {
    "BOULANGER_COUNTDOWN_MS": "300",
    "BOULANGER_QUICK_RACE_WAIT_S": "30",
    "BOULANGER_QUICK_RACE_PLAYERS": "4",
}


def from_address(n: int) -> dict[str, str]:
    """A request from 10.0.0.n (X-Forwarded-For, as uvicorn trusts it from 127.0.0.1)."""
    return {"X-Forwarded-For": f"10.0.0.{n}"}


async def queue_state(racer: Racer, timeout: float = 5.0, **match: Any) -> dict[str, Any]:
    """The next ``queue`` message with the fields of ``match``."""
    async with asyncio.timeout(timeout):
        while True:
            message = await racer.expect("queue")
            if all(message.get(k) == v for k, v in match.items()):
                return message


async def place(base: str, n: int) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=base) as http:
        answer = await http.post("/api/quick", json={"cells": 4}, headers=from_address(n))
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = answer.json()
    return result


async def counts(base: str) -> dict[str, int]:
    async with httpx.AsyncClient(base_url=base) as http:
        answer = await http.get("/api/quick")
    assert answer.status_code == 200, answer.text
    result: dict[str, int] = answer.json()
    return result


async def test_everyone_waiting_is_told_the_same_start_and_count() -> None:
    async with AppServer("memory://", env=QUEUE_ENV) as server:
        first = await place(server.base, 1)
        ann = await Racer(server.ws_base, first["race_id"]).connect()
        await ann.join("Ann")
        alone = await queue_state(ann, waiting=1)
        assert alone["start_by"] is None and alone["players"] == 4
        second = await place(server.base, 2)
        assert second["race_id"] == first["race_id"]
        bo = await Racer(server.ws_base, first["race_id"]).connect()
        await bo.join("Bo")
        # The one who came second is told the start the first one is told.
        ann_told = await queue_state(ann, waiting=2)
        bo_told = await queue_state(bo, waiting=2)
        assert ann_told["start_by"] is not None
        assert ann_told["start_by"] == bo_told["start_by"]
        assert ann_told["start_by"] - ann_told["now"] > 25_000  # 30 s after the second
        # A spectator is told too, on joining.
        watcher = await Racer(server.ws_base, first["race_id"]).connect()
        await watcher.spectate()
        watched = await queue_state(watcher, waiting=2)
        assert watched["start_by"] == ann_told["start_by"]
        for racer in (ann, bo, watcher):
            await racer.close()


async def test_a_player_who_leaves_frees_the_place_and_the_count_drops() -> None:
    async with AppServer("memory://", env=QUEUE_ENV) as server:
        race_id = (await place(server.base, 1))["race_id"]
        racers = []
        for n, name in enumerate(("Ann", "Bo", "Cy")):
            if n:
                assert (await place(server.base, n + 1))["race_id"] == race_id
            racer = await Racer(server.ws_base, race_id).connect()
            await racer.join(name)
            racers.append(racer)
        ann, bo, cy = racers
        start_by = (await queue_state(ann, waiting=3))["start_by"]
        assert (await counts(server.base))["waiting"] >= 2  # figures up to 2 s old
        # Cy leaves: out of the race, and the others' count drops at once.
        await cy.send(type="leave")
        left = await ann.wait_event("player_left")
        assert left["player_id"] == cy.player_id
        assert left["leaderboard"] == [ann.player_id, bo.player_id]
        told = await queue_state(ann, waiting=2)
        assert told["start_by"] == start_by  # two still wait: the start stays
        snapshot = await asyncio.to_thread(httpx.get, f"{server.base}/api/races/{race_id}")
        assert [pl["name"] for pl in snapshot.json()["players"]] == ["Ann", "Bo"]
        # The place is free: a newcomer goes to the same race.
        assert (await place(server.base, 9))["race_id"] == race_id
        # Cy's connection now watches; the token is void.
        await cy.send(type="leave")
        assert (await cy.expect("error"))["code"] == "spectator"
        back = await Racer(server.ws_base, race_id).connect()
        await back.send(type="join", role="player", token=cy.token)
        assert (await back.expect("error", "welcome"))["code"] == "bad_token"
        # Bo leaves too: Ann waits alone, and the start waits for a second player again.
        await bo.send(type="leave")
        alone = await queue_state(ann, waiting=1)
        assert alone["start_by"] is None
        for racer in (ann, bo, cy, back):
            await racer.close()


async def test_nobody_leaves_a_started_race_and_the_host_never_leaves() -> None:
    env = {**QUEUE_ENV, "BOULANGER_QUICK_RACE_PLAYERS": "2"}
    async with AppServer("memory://", env=env) as server:
        race_id = (await place(server.base, 1))["race_id"]
        await place(server.base, 2)
        ann = await Racer(server.ws_base, race_id).connect()
        bo = await Racer(server.ws_base, race_id).connect()
        await ann.join("Ann")
        await bo.join("Bo")
        await ann.until_started()  # two make it full: it starts at once
        assert (await ann.answer("error", type="leave"))[-1]["code"] == "already_started"
        # Racing now: both players, counted once each.
        await asyncio.sleep(2.1)  # the figures are cached for 2 s
        assert await counts(server.base) == {"waiting": 0, "racing": 2}
        await ann.close()
        await bo.close()
        async with httpx.AsyncClient(base_url=server.base) as http:
            hosted = (await http.post("/api/races", json={"cells": 4})).json()
        host = await Racer(server.ws_base, hosted["race_id"]).connect()
        await host.join("Hal", host_key=hosted["host_key"])
        assert (await host.answer("error", type="leave"))[-1]["code"] == "not_host"
        await host.close()


def test_the_figures_of_every_process_are_summed_and_the_silent_dropped() -> None:
    now = 100_000
    text = merged(None, "a", (2, 5), now)
    text = merged(text, "b", (1, 3), now + 500)
    assert json.loads(text) == {"a": [2, 5, now], "b": [1, 3, now + 500]}
    text = merged(text, "b", (0, 4), now + 10_000)  # "a" silent for 10 s
    assert json.loads(text) == {"b": [0, 4, now + 10_000]}
    assert json.loads(merged("not json", "c", (1, 1), now)) == {"c": [1, 1, now]}


async def test_two_processes_sharing_a_store_answer_the_same_figures() -> None:
    store = open_store("memory://")
    await store.start()
    try:
        async with (
            AppServer("memory://", env=QUEUE_ENV, store=store) as a,
            AppServer("memory://", env=QUEUE_ENV, store=store) as b,
        ):
            race_id = (await place(a.base, 1))["race_id"]
            ann = await Racer(a.ws_base, race_id).connect()
            await ann.join("Ann")
            await queue_state(ann, waiting=1)
            assert await counts(a.base) == {"waiting": 1, "racing": 0}
            # The other process has no queue of its own waiting: it tells the sum.
            assert await counts(b.base) == {"waiting": 1, "racing": 0}
            await ann.close()
    finally:
        await store.close()
