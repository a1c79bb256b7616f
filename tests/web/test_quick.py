"""POST /api/quick against a real server: one public queue per cell count,
races that start by themselves, bad input, the creation limit."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from support.apps import AppServer
from support.racer import Racer
from support.servers import RedisProcess

QUICK_ENV = {
    "BOULANGER_COUNTDOWN_MS": "300",
    "BOULANGER_MESSAGES_PER_SECOND": "100000",
    "BOULANGER_MESSAGE_BURST": "100000",
    "BOULANGER_QUICK_RACE_WAIT_S": "0.5",
    "BOULANGER_QUICK_RACE_PLAYERS": "3",
}


def from_address(n: int) -> dict[str, str]:
    """A request from 10.0.0.n (X-Forwarded-For, as uvicorn trusts it from 127.0.0.1)."""
    return {"X-Forwarded-For": f"10.0.0.{n}"}


@pytest.fixture(params=["memory", "redis"])
async def quick_server(request: pytest.FixtureRequest) -> AsyncIterator[AppServer]:
    """Its own server: quick races start 0.5 s after the second player, or with 3."""
    url = "memory://"
    if request.param == "redis":
        redis_proc: RedisProcess = request.getfixturevalue("redis_proc")
        url = redis_proc.url
    async with AppServer(url, env=QUICK_ENV) as server:
        yield server


async def test_a_quick_race_gathers_players_and_starts_by_itself(
    quick_server: AppServer,
) -> None:
    async with httpx.AsyncClient(base_url=quick_server.base) as http:
        first = (await http.post("/api/quick", json={"cells": 2})).json()
        second = (await http.post("/api/quick", json={"cells": 2})).json()
        other = (await http.post("/api/quick", json={"cells": 1})).json()
    assert first["race_id"] == second["race_id"] != other["race_id"]
    assert first["url"] == f"/race/{first['race_id']}" and first["cells"] == 2
    assert first["players"] == 3 and first["wait_s"] == 0.5 and first["start_by"] is None
    ann = await Racer(quick_server.ws_base, first["race_id"]).connect()
    bo = await Racer(quick_server.ws_base, first["race_id"]).connect()
    welcome = await ann.join("Ann")
    assert welcome["race"]["host_id"] is None  # nobody is the host of a quick race
    assert welcome["race"]["winnable"] is True  # a catalog deal
    await ann.send(type="start")
    assert (await ann.expect("error"))["code"] == "not_host"
    await bo.join("Bo")
    # Half a second after the second player joined, the queue starts it.
    starting = await ann.wait_event("race_starting", timeout=5)
    assert starting["start_at"] >= starting["now"]
    await ann.until_started()
    assert (await ann.move("col1", "cell1"))["type"] == "ack"
    async with httpx.AsyncClient(base_url=quick_server.base) as http:
        later = (await http.post("/api/quick", json={"cells": 2})).json()
    assert later["race_id"] != first["race_id"]  # a started race takes nobody new
    await ann.close()
    await bo.close()


async def test_a_full_quick_race_starts_at_once_and_the_next_goes_elsewhere(
    quick_server: AppServer,
) -> None:
    async with httpx.AsyncClient(base_url=quick_server.base) as http:
        answers = [
            (await http.post("/api/quick", json={}, headers=from_address(n))).json()
            for n in range(4)
        ]
    ids = [a["race_id"] for a in answers]
    assert ids[0] == ids[1] == ids[2] != ids[3]  # three per race here
    racers = [await Racer(quick_server.ws_base, ids[0]).connect() for _ in range(3)]
    for number, racer in enumerate(racers):
        await racer.join(f"P{number}")
    await racers[0].wait_event("race_starting", timeout=5)
    for racer in racers:
        await racer.close()


async def test_quick_race_refuses_bad_input(quick_server: AppServer) -> None:
    async with httpx.AsyncClient(base_url=quick_server.base) as http:
        for body in ({"cells": 3}, {"cells": True}, {"cells": "4"}, {"code": "BK1-C4-AAAAAAC"}):
            answer = await http.post("/api/quick", json=body)
            assert answer.status_code == 400, body
            assert answer.json()["error"]["code"] == "bad_message"
        json_type = {"Content-Type": "application/json"}
        answer = await http.post("/api/quick", content=b"[1]", headers=json_type)
        assert answer.status_code == 400 and answer.json()["error"]["code"] == "bad_message"
        # A body not sent as JSON is refused before it is read, as for POST /api/races.
        answer = await http.post("/api/quick", content=b'{"cells": 4}')
        assert answer.status_code == 415 and answer.json()["error"]["code"] == "not_json"
        # GET answers the figures (test_quick_counts), not a place.
        answer = await http.get("/api/quick")
        assert answer.status_code == 200 and set(answer.json()) == {"waiting", "racing"}


async def test_quick_race_is_limited_like_race_creation() -> None:
    async with (
        AppServer(
            "memory://", env={**QUICK_ENV, "BOULANGER_RACES_PER_MINUTE_PER_ADDRESS": "3"}
        ) as server,
        httpx.AsyncClient(base_url=server.base) as http,
    ):
        codes = [(await http.post("/api/quick", json={"cells": 4})).status_code for _ in range(4)]
        assert codes == [200, 200, 200, 429]
        assert (await http.post("/api/races", json={"cells": 4})).status_code == 429


async def test_places_asked_for_and_never_used_do_not_split_real_players() -> None:
    """Seven places asked from one address that never connects: the next two real
    players still race each other, and their race starts."""
    env = {**QUICK_ENV, "BOULANGER_QUICK_RACE_PLAYERS": "8"}
    async with (
        AppServer("memory://", env=env) as server,
        httpx.AsyncClient(base_url=server.base) as http,
    ):
        for _ in range(7):
            answer = await http.post("/api/quick", json={"cells": 4}, headers=from_address(9))
            assert answer.status_code == 200
        first = (await http.post("/api/quick", json={"cells": 4}, headers=from_address(1))).json()
        ann = await Racer(server.ws_base, first["race_id"]).connect()
        await ann.join("Ann")
        second = (await http.post("/api/quick", json={"cells": 4}, headers=from_address(2))).json()
        assert second["race_id"] == first["race_id"]
        bo = await Racer(server.ws_base, second["race_id"]).connect()
        await bo.join("Bo")
        await ann.wait_event("race_starting", timeout=10)  # 0.5 s after Bo joined
        await ann.close()
        await bo.close()
