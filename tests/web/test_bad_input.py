"""Malformed frames, floods, oversized frames and impostors get typed answers or close codes."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from support.apps import AppServer
from support.racer import Racer, create_race

CODE = "BK1-C4-AAAAAAB"


async def _racer(server: AppServer, race_id: str) -> Racer:
    return await Racer(server.ws_base, race_id).connect()


async def test_unknown_race_is_closed_with_4404(server: AppServer) -> None:
    async with connect(f"{server.ws_base}/ws/races/no-such-race") as ws:
        with pytest.raises(ConnectionClosed) as closed:
            await ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4404


async def test_malformed_messages_get_typed_errors_and_the_connection_survives(
    server: AppServer,
) -> None:
    created = await create_race(server.base, code=CODE)
    racer = await _racer(server, created["race_id"])
    await racer.send(type="start")
    assert (await racer.expect("error"))["code"] == "not_joined"
    for frame, code in [
        ("{nope", "bad_json"),
        ("[]", "bad_json"),
        ('{"type": "teleport"}', "unknown_type"),
        ('{"type": "join", "role": "player", "name": 5}', "bad_message"),
    ]:
        await racer.send_raw(frame)
        assert (await racer.expect("error"))["code"] == code
    assert (await racer.join("Ann", host_key=created["host_key"]))["type"] == "welcome"
    assert (await racer.join("Ann again"))["code"] == "already_joined"
    reject = await racer.act("move", src="col9", dst="cell1")
    assert reject["code"] == "not_started"
    await racer.send(type="ping", t=7)
    assert (await racer.expect("pong"))["t"] == 7
    await racer.close()


async def test_spectators_cannot_act(server: AppServer) -> None:
    created = await create_race(server.base, code=CODE)
    watcher = await _racer(server, created["race_id"])
    await watcher.spectate()
    assert (await watcher.move("col1", "cell1"))["code"] == "spectator"
    await watcher.send(type="start")
    assert (await watcher.expect("error"))["code"] == "spectator"
    await watcher.close()


async def test_binary_frame_closes_with_1003(server: AppServer) -> None:
    created = await create_race(server.base, code=CODE)
    racer = await _racer(server, created["race_id"])
    await racer.send_raw(b"\x00\x01binary")
    with pytest.raises(ConnectionError):
        await racer.expect("never")
    assert racer.close_code == 1003


async def test_oversized_frame_closes_with_1009(server: AppServer) -> None:
    created = await create_race(server.base, code=CODE)
    racer = await _racer(server, created["race_id"])
    await racer.send_raw(json.dumps({"type": "join", "name": "x" * 20000}))
    with pytest.raises(ConnectionError):
        await racer.expect("never")
    assert racer.close_code == 1009


async def test_flood_closes_with_1008() -> None:
    async with AppServer("memory://") as server:  # the production message budget
        created = await create_race(server.base, code=CODE)
        flooder = await _racer(server, created["race_id"])
        bystander = await _racer(server, created["race_id"])
        assert (await bystander.join("Bo"))["type"] == "welcome"
        for i in range(200):
            try:
                await flooder.send(type="ping", t=i)
            except ConnectionClosed:
                break
        with pytest.raises(ConnectionError):
            await flooder.expect("never", timeout=5)
        assert flooder.close_code == 1008
        # Nobody else noticed.
        await bystander.send(type="ping", t=1)
        assert (await bystander.expect("pong"))["t"] == 1
        await bystander.close()


async def test_bad_race_creation_requests(server: AppServer) -> None:
    async with httpx.AsyncClient(base_url=server.base) as http:
        for body, code in [
            ({"cells": 3}, "bad_message"),
            ({"code": "BK1-C4-AAAAAAA"}, "bad_code"),
            ({"code": "XX1-C4-AAAAAAB"}, "bad_code"),
            ({"cells": 4, "colour": "red"}, "bad_message"),
            ({"practice": "yes"}, "bad_message"),
        ]:
            answer = await http.post("/api/races", json=body)
            assert answer.status_code == 400, body
            assert answer.json()["error"]["code"] == code
        json_type = {"Content-Type": "application/json"}
        answer = await http.post("/api/races", content=b"{not json", headers=json_type)
        assert answer.status_code == 400
        answer = await http.post("/api/races", content=b"x" * 10000, headers=json_type)
        assert answer.status_code == 413


async def test_unwinnable_code_is_reported() -> None:
    # Deal 1 with one cell: fc-solve proves it has no win.
    async with (
        AppServer("memory://") as server,
        httpx.AsyncClient(base_url=server.base, timeout=30) as http,
    ):
        answer = await http.post("/api/races", json={"code": "BK1-C1-AAAAAAB"})
        assert answer.status_code == 201
        assert answer.json()["winnable"] in (False, None)
        answer = await http.post("/api/races", json={"cells": 4})
        assert answer.json()["winnable"] is True and answer.json()["par"] > 0


async def test_race_creation_is_rate_limited() -> None:
    async with AppServer("memory://") as server:
        async with httpx.AsyncClient(base_url=server.base) as http:
            codes = [
                (await http.post("/api/races", json={"code": CODE})).status_code for _ in range(25)
            ]
        assert codes.count(201) == 20 and codes[-1] == 429


async def test_heartbeat_drops_silent_clients() -> None:
    async with AppServer(
        "memory://",
        env={"BOULANGER_PING_INTERVAL_S": "0.2", "BOULANGER_IDLE_TIMEOUT_S": "0.6"},
    ) as server:
        created = await create_race(server.base, code=CODE)
        # A raw client that never answers pings.
        async with connect(f"{server.ws_base}/ws/races/{created['race_id']}") as ws:
            await ws.send(json.dumps({"type": "join", "role": "spectator"}))
            async with asyncio.timeout(5):
                with pytest.raises(ConnectionClosed) as closed:
                    while True:
                        await ws.recv()
            assert closed.value.rcvd.code == 4408


async def test_connections_per_address_are_limited() -> None:
    async with AppServer("memory://", env={"BOULANGER_MAX_CONNECTIONS_PER_ADDRESS": "3"}) as server:
        created = await create_race(server.base, code=CODE)
        url = f"{server.ws_base}/ws/races/{created['race_id']}"
        held = [await connect(url) for _ in range(3)]
        with pytest.raises(ConnectionClosed) as refused:
            async with connect(url) as extra:
                await extra.recv()
        assert refused.value.rcvd is not None and refused.value.rcvd.code == 1008
        await held.pop().close()
        # A slot is free again, once the server has seen the close.
        async with asyncio.timeout(20):
            while True:
                try:
                    async with connect(url) as again:
                        await again.send(json.dumps({"type": "ping", "t": 1}))
                        assert json.loads(await again.recv())["type"] == "pong"
                    break
                except ConnectionClosed:
                    await asyncio.sleep(0.05)
        for ws in held:
            await ws.close()
