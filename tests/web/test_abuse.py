"""Slow clients and a fuzz of malformed input: nobody else is disturbed."""

from __future__ import annotations

import asyncio
import json
import random
import socket
from collections.abc import AsyncIterator

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from boulanger.race import protocol as p
from boulanger.race.errors import ERROR_CODES
from support.apps import AppServer
from support.racer import Racer, create_race
from support.screens import in_order

CODE = "BK1-C4-AAAAAAB"


async def _running_race(
    server: AppServer, *names: str, open_boards: bool = False
) -> tuple[dict, list[Racer]]:
    created = await create_race(server.base, code=CODE, open_boards=open_boards)
    racers = []
    for i, name in enumerate(names):
        racer = await Racer(server.ws_base, created["race_id"]).connect()
        await racer.join(name, **({"host_key": created["host_key"]} if i == 0 else {}))
        racers.append(racer)
    await racers[0].start()
    return created, racers


@pytest.fixture
async def fast_server() -> AsyncIterator[AppServer]:
    env = {
        "BOULANGER_COUNTDOWN_MS": "100",
        "BOULANGER_MESSAGES_PER_SECOND": "100000",
        "BOULANGER_MESSAGE_BURST": "100000",
    }
    async with AppServer("memory://", env=env) as server:
        yield server


async def test_a_slow_client_is_dropped_and_delays_nobody(fast_server: AppServer) -> None:
    server = fast_server
    # Open boards: the spectator gets Ann's board after each of her actions.
    created, (ann, bo) = await _running_race(server, "Ann", "Bo", open_boards=True)
    # A spectator that stops reading: a tiny receive buffer, and it never reads.
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)  # before connecting: no autotuning
    sock.connect(("127.0.0.1", server.port))
    slow = await connect(f"{server.ws_base}/ws/races/{created['race_id']}", sock=sock, max_queue=1)
    await slow.send(json.dumps({"type": "join", "role": "spectator"}))
    await slow.send(json.dumps({"type": "watch", "player_id": ann.player_id}))
    # Its join and watch are through (their answers read), then it never reads again.
    assert json.loads(await slow.recv())["type"] == "welcome"
    assert json.loads(await slow.recv())["type"] == "board"

    # Ann plays 6,000 actions, pipelined: about 6 MB of events for the
    # watcher, more than the kernel's socket buffers hold.
    total = 6000
    # Each batch is answered within its bound: Ann is never stalled for good.
    for batch in range(0, total, 100):
        for i in range(batch, batch + 100):
            if i % 2 == 0:
                await ann.send(type="move", action_id=f"m{i}", src="col1", dst="cell1", count=1)
            else:
                await ann.send(type="undo", action_id=f"m{i}")
        async with asyncio.timeout(30):
            while True:
                answer = await ann.expect("ack", "reject")
                assert answer["type"] == "ack", answer
                if answer["action_id"] == f"m{batch + 99}":
                    break
    # Bo, who reads, is told of Ann's moves at once, in order: her resign, say.
    resigned = await ann.act("resign")
    assert resigned["type"] == "ack"
    await bo.wait_event("progress", timeout=10, player_id=ann.player_id, status="resigned")
    assert bo.events[-1]["seq"] == resigned["seq"] and in_order(bo.events)
    # The slow spectator was closed with 1013 ("try again later": reconnect and resync).
    async with asyncio.timeout(10):
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                await slow.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013
    await slow.close()
    for racer in (ann, bo):
        await racer.close()


def _fuzz_frames(rng: random.Random, count: int) -> list[str]:
    """Malformed, truncated, wrongly typed and out-of-order text frames."""
    good = [
        {"type": "move", "action_id": "x", "src": "col1", "dst": "cell1", "count": 1},
        {"type": "tap", "action_id": "x", "card": "AS"},
        {"type": "double_tap", "action_id": "x", "card": "6S"},
        {"type": "undo", "action_id": "x"},
        {"type": "resign", "action_id": "x"},
        {"type": "resync", "last_seq": 3},
        {"type": "watch", "player_id": "p1"},
        {"type": "start"},
        {"type": "rematch"},
        {"type": "hint"},
        {"type": "join", "role": "player", "name": "Z"},
    ]
    junk_values = [
        None,
        True,
        -1,
        2**70,
        1.5,
        "",
        "x" * 300,
        [],
        {},
        [1, [2]],
        {"a": {"b": 1}},
        "\u0000",
        "col99",
        "ZZ",
    ]
    frames = []
    for _ in range(count):
        base = dict(rng.choice(good))
        mode = rng.randrange(7)
        if mode == 0:  # truncated
            text = json.dumps(base)
            frames.append(text[: rng.randrange(1, len(text))])
            continue
        if mode == 1 and len(base) > 1:  # a field with a junk value
            key = rng.choice([k for k in base if k != "type"] or ["type"])
            base[key] = rng.choice(junk_values)
        elif mode == 2:  # an unknown field
            base[rng.choice(["x", "seq", "__proto__", "typ"])] = rng.choice(junk_values)
        elif mode == 3:  # a missing field
            base.pop(rng.choice(list(base)))
        elif mode == 4:  # random garbage text
            frames.append(
                "".join(chr(rng.randrange(1, 0x2FF)) for _ in range(rng.randrange(1, 60)))
            )
            continue
        elif mode == 5:  # a junk type
            base["type"] = rng.choice([*junk_values, "MOVE", "join ", "ack", "welcome"])
        if "action_id" in base and isinstance(base["action_id"], str):
            base["action_id"] = f"f{rng.randrange(10**9)}"
        frames.append(json.dumps(base))
    return frames


async def test_fuzz_gets_typed_answers_and_a_normal_race_goes_on(
    memory_server: AppServer,
) -> None:
    server = memory_server
    created, (ann, bo) = await _running_race(server, "Ann", "Bo")
    rng = random.Random(20261130)
    frames = _fuzz_frames(rng, 3000)

    async def fuzz(connection_frames: list[str], joined: bool) -> list[dict]:
        replies = []
        async with connect(f"{server.ws_base}/ws/races/{created['race_id']}") as ws:
            if joined:
                await ws.send(json.dumps({"type": "join", "role": "spectator"}))
            for frame in connection_frames:
                await ws.send(frame)
            await ws.send(json.dumps({"type": "ping", "t": 42}))
            async with asyncio.timeout(20):
                while True:
                    reply = json.loads(await ws.recv())
                    replies.append(reply)
                    if reply["type"] == "pong" and reply["t"] == 42:
                        return replies

    async def play() -> int:
        done = 0
        for i in range(200):
            answer = await bo.move("col1", "cell1") if i % 2 == 0 else await bo.act("undo")
            assert answer["type"] == "ack"
            done += 1
        return done

    async def health() -> None:
        async with httpx.AsyncClient(base_url=server.base) as http:
            for _ in range(20):
                assert (await http.get("/healthz")).status_code == 200
                await asyncio.sleep(0.02)

    results = await asyncio.gather(
        fuzz(frames[:1000], joined=False),
        fuzz(frames[1000:2000], joined=True),
        fuzz(frames[2000:], joined=True),
        play(),
        health(),
    )
    replies = results[0] + results[1] + results[2]
    assert results[3] == 200
    known = set(p.SERVER_MESSAGES)
    for reply in replies:
        assert reply["type"] in known, reply
        if reply["type"] in ("error", "reject"):
            assert reply["code"] in ERROR_CODES, reply
        text = json.dumps(reply)
        assert "Traceback" not in text and "/boulanger/" not in text and ".py" not in text
    errors = [r for r in replies if r["type"] in ("error", "reject")]
    assert len(errors) > 2000
    assert not any(r["code"] == "internal" for r in errors)
    # Raw binary frames and oversized frames: proper close codes, server still fine.
    for payload, code in [
        (bytes(rng.randrange(256) for _ in range(64)), 1003),
        ("x" * 70000, 1009),
    ]:
        async with connect(f"{server.ws_base}/ws/races/{created['race_id']}", max_size=2**20) as ws:
            await ws.send(payload)
            with pytest.raises(ConnectionClosed) as closed:
                while True:  # an error message may come before the close
                    assert json.loads(await ws.recv())["type"] == "error"
            assert closed.value.rcvd is not None and closed.value.rcvd.code == code
    assert (await ann.move("col2", "cell2"))["type"] == "ack"
    for racer in (ann, bo):
        await racer.close()
