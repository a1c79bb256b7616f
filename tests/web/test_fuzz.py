"""A seeded fuzz of everything a client can send, while two players race.

Thousands of crafted WebSocket frames (malformed, wrongly typed, lone
surrogates, deep nesting, long numbers, invalid UTF-8, binary, oversized,
resync floods) and over a hundred crafted HTTP requests (wrong content
types, oversized and chunked bodies, forged addresses, long numbers, deep
nesting, bad dates). The test fails on any 5xx, any ``internal`` error, any
unknown answer or close code, and any traceback or ERROR line in the
server's log; the players of the race under attack must keep getting their
acks throughout.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from boulanger.race import daily as d
from boulanger.race import protocol as p
from boulanger.race.errors import ERROR_CODES
from support.apps import AppServer
from support.racer import Racer, create_race

SEED = 20261201
CODE = "BK1-C4-AAAAAAB"
FRAMES = 6000
HTTP_REQUESTS = 160
# Close codes a crafted frame may earn: binary, invalid UTF-8, budget, too big.
CLIENT_CLOSES = {1003, 1007, 1008, 1009}
ACK_WITHIN_S = 2.0

GOOD = [
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
    {"type": "join", "role": "player", "token": "t"},
    {"type": "join", "role": "player", "name": "Y", "host_key": "k"},
    {"type": "ping", "t": 1},
]
JUNK = [
    None,
    True,
    -1,
    2**70,
    -(2**63),
    1.5,
    1e308,
    "",
    "x" * 300,
    [],
    {},
    [1, [2]],
    {"a": {"b": 1}},
    "\u0000",
    "\ud800",
    "a\udfffb",
    "\u202eevil",
    "\u0410nn",
    "col99",
    "ZZ",
]


def crafted_frames(rng: random.Random, count: int) -> list[str | bytes]:
    """Text frames (str), and frames to send as text with invalid UTF-8 or as binary (bytes)."""
    frames: list[str | bytes] = []
    for _ in range(count):
        base = dict(rng.choice(GOOD))
        mode = rng.randrange(12)
        if mode == 0:  # truncated
            text = json.dumps(base)
            frames.append(text[: rng.randrange(1, len(text))])
            continue
        if mode == 1:  # a field with a junk value
            key = rng.choice([k for k in base if k != "type"] or ["type"])
            base[key] = rng.choice(JUNK)
        elif mode == 2:  # an unknown field
            base[rng.choice(["x", "seq", "__proto__", "typ", "\ud800"])] = rng.choice(JUNK)
        elif mode == 3:  # a missing field
            base.pop(rng.choice(list(base)))
        elif mode == 4:  # random text
            frames.append(
                "".join(chr(rng.randrange(1, 0x2FF)) for _ in range(rng.randrange(1, 60)))
            )
            continue
        elif mode == 5:  # a junk type
            base["type"] = rng.choice([*JUNK, "MOVE", "join ", "ack", "welcome", "snapshot"])
        elif mode == 6:  # deep nesting
            depth = rng.choice([33, 200, 3000, 5000])
            frames.append(rng.choice(["[", '{"a":']) * depth)
            continue
        elif mode == 7:  # long numbers
            digits = "9" * rng.choice([20, 400, 4301, 6000])
            frames.append(json.dumps(base)[:-1] + f', "last_seq": {digits}}}')
            continue
        elif mode == 8:  # lone surrogates written as JSON escapes
            key = rng.choice([k for k in base if k != "type"] or ["name"])
            frames.append(
                json.dumps({**base, key: "PLACEHOLDER"}).replace("PLACEHOLDER", "\\ud800")
            )
            continue
        elif mode == 9 and rng.random() < 0.1:  # invalid UTF-8, or binary (closes the socket)
            frames.append(rng.choice([b'{"type":"ping"}\xff', b"\xc3\x28", b"\x00\x01binary"]))
            continue
        elif mode == 10 and rng.random() < 0.02:  # oversized (closes the socket)
            frames.append('{"type":"ping","t":1,"x":"' + "x" * 20000 + '"}')
            continue
        elif mode == 11:  # resync from anywhere
            base = {"type": "resync", "last_seq": rng.choice([0, -5, 1, 10**6, 2**40])}
        if "action_id" in base and isinstance(base["action_id"], str):
            base["action_id"] = f"f{rng.randrange(10**9)}"
        frames.append(json.dumps(base))
    return frames


def crafted_requests(rng: random.Random, count: int, race_id: str) -> list[dict[str, Any]]:
    """httpx request arguments: method, url, headers, content."""
    today = d.today(int(time.time() * 1000)).isoformat()
    json_type = {"Content-Type": "application/json"}
    kinds = [
        lambda: {"method": "POST", "url": "/api/races", "content": b'{"cells": 4}',
                 "headers": {"Content-Type": rng.choice(["text/plain", "multipart/form-data", ""])}},
        lambda: {"method": "POST", "url": "/api/races", "content": b"[" * rng.choice([40, 3000]),
                 "headers": json_type},
        lambda: {"method": "POST", "url": "/api/races",
                 "content": b'{"code": "\\ud800", "cells": ' + b"9" * 5000 + b"}", "headers": json_type},
        lambda: {"method": "POST", "url": "/api/races", "content": b"x" * rng.choice([4097, 70000]),
                 "headers": json_type},
        lambda: {"method": "POST", "url": "/api/races", "content": b'{"code": "' + CODE.encode() + b'"}',
                 "headers": {**json_type, "X-Forwarded-For": f"10.9.0.{rng.randrange(256)}, 192.0.2.1",
                             "X-Real-IP": "10.0.0.1"}},
        lambda: {"method": "GET", "url": f"/api/daily/{today}/leaderboard?limit="
                 + "9" * rng.choice([3, 12, 5000])},
        lambda: {"method": "GET", "url": f"/api/daily/{today}/leaderboard?offset=-1&limit=\ufe0f"},
        lambda: {"method": "GET", "url": rng.choice(["/api/daily/2026-13-45", "/api/daily/9999-01-01",
                                                      "/api/daily/" + "1" * 5000, "/api/daily/%ff"])},
        lambda: {"method": "POST", "url": f"/api/daily/{today}/attempts", "headers": json_type,
                 "content": json.dumps({"player_key": "k" * rng.choice([3, 20, 200]),
                                        "name": rng.choice(["Ann", "A\u200bnn", "", "x" * 99])}).encode()},
        lambda: {"method": "POST", "url": f"/api/daily/{today}/attempts", "headers": json_type,
                 "content": b'{"player_key": "kkkkkkkkkkkkkkkkkkkkkk", "name": "\\udfff"}'},
        lambda: {"method": "GET", "url": f"/api/daily/{today}/me",
                 "headers": {"X-Player-Key": rng.choice(["", "x" * 5000, "\u00e9".encode("latin-1") * 20])}},
        lambda: {"method": "GET", "url": f"/api/daily/{today}/records/" + "9" * rng.choice([1, 30, 5000])},
        lambda: {"method": "GET", "url": f"/api/races/{race_id}/records/" + rng.choice(["p1", "%00", "x" * 900])},
        lambda: {"method": "GET", "url": rng.choice(["/api/races/%ff%fe", "/static/../pyproject.toml",
                                                      "/static/%2e%2e/pyproject.toml", "/race/" + "r" * 3000])},
        lambda: {"method": rng.choice(["PUT", "DELETE", "PATCH"]), "url": "/api/races",
                 "content": b"{}", "headers": json_type},
    ]  # fmt: skip
    return [rng.choice(kinds)() for _ in range(count)]


@pytest.fixture
async def fuzz_server() -> AsyncIterator[AppServer]:
    env = {
        "BOULANGER_COUNTDOWN_MS": "100",
        # Each fuzzing connection may send all it has at once: what is
        # tested is what the server answers, not the budget's close.
        "BOULANGER_MESSAGES_PER_SECOND": "100000",
        "BOULANGER_MESSAGE_BURST": "100000",
        "BOULANGER_RESYNC_BURST": "1000000",
    }
    async with AppServer("memory://", env=env) as server:
        yield server


async def test_seeded_fuzz_of_frames_and_requests(fuzz_server: AppServer) -> None:
    server = fuzz_server
    rng = random.Random(SEED)
    created = await create_race(server.base, code=CODE)
    race_id = created["race_id"]
    ann = await Racer(server.ws_base, race_id).connect()
    await ann.join("Ann", host_key=created["host_key"])
    bo = await Racer(server.ws_base, race_id).connect()
    await bo.join("Bo")
    await ann.start()
    frames = crafted_frames(rng, FRAMES)
    requests = crafted_requests(rng, HTTP_REQUESTS, race_id)
    assert len(frames) >= 5000 and len(requests) >= 100
    replies: list[dict[str, Any]] = []
    closes: list[int | None] = []
    statuses: list[int] = []
    playing = asyncio.Event()
    playing.set()

    def closes_socket(frame: str | bytes) -> bool:
        return isinstance(frame, bytes) or len(frame.encode(errors="replace")) > 16 * 1024

    async def fuzz(batch: list[str | bytes], joined: bool) -> None:
        """Send the batch 50 frames at a time, each followed by a ping; a frame that
        closes the socket ends its chunk, and the next chunk goes on a new connection."""
        pending = list(batch)
        while pending:
            async with connect(f"{server.ws_base}/ws/races/{race_id}", max_size=2**22) as ws:
                if joined:
                    await ws.send(json.dumps({"type": "join", "role": "spectator"}))
                try:
                    while pending:
                        size = next(
                            (i + 1 for i, f in enumerate(pending[:50]) if closes_socket(f)), 50
                        )
                        chunk, pending = pending[:size], pending[size:]
                        for frame in chunk:
                            if isinstance(frame, bytes):
                                binary = frame.startswith(b"\x00")
                                await ws.send(frame, text=not binary)
                            else:
                                await ws.send(frame)
                        if closes_socket(chunk[-1]):
                            async with asyncio.timeout(20):
                                while True:  # answers to the chunk, then the close
                                    replies.append(json.loads(await ws.recv()))
                        marker = rng.randrange(10**9)
                        await ws.send(json.dumps({"type": "ping", "t": marker}))
                        async with asyncio.timeout(20):
                            while True:
                                reply = json.loads(await ws.recv())
                                replies.append(reply)
                                if reply["type"] == "pong" and reply["t"] == marker:
                                    break
                except ConnectionClosed as closed:
                    closes.append(closed.rcvd.code if closed.rcvd else None)

    async def play(racer: Racer) -> float:
        """Moves and undos while the fuzz runs; the slowest ack's seconds."""
        slowest = 0.0
        for i in range(150):
            started = time.monotonic()
            answer = await (racer.move("col1", "cell1") if i % 2 == 0 else racer.act("undo"))
            slowest = max(slowest, time.monotonic() - started)
            assert answer["type"] == "ack", answer
        return slowest

    async def http_fuzz() -> None:
        async with httpx.AsyncClient(base_url=server.base, timeout=10) as http:
            for request in requests:
                answer = await http.request(**request)
                statuses.append(answer.status_code)
                assert answer.status_code < 500, (request["url"][:80], answer.text[:200])
                if answer.headers.get("content-type", "").startswith("application/json"):
                    body = answer.json()
                    if answer.status_code >= 400 and isinstance(body, dict) and "error" in body:
                        assert body["error"]["code"] != "internal"

    third = len(frames) // 3
    results = await asyncio.gather(
        fuzz(frames[:third], joined=False),
        fuzz(frames[third : 2 * third], joined=True),
        fuzz(frames[2 * third :], joined=True),
        play(ann),
        play(bo),
        http_fuzz(),
    )
    slowest = max(results[3], results[4])
    assert slowest < ACK_WITHIN_S, f"an ack took {slowest:.2f} s"

    known = set(p.SERVER_MESSAGES)
    for reply in replies:
        assert reply["type"] in known, reply
        if reply["type"] in ("error", "reject"):
            assert reply["code"] in ERROR_CODES and reply["code"] != "internal", reply
    assert len([r for r in replies if r["type"] in ("error", "reject")]) > 2000
    assert set(closes) <= CLIENT_CLOSES, closes
    assert len(statuses) == HTTP_REQUESTS and max(statuses) < 500
    # The race goes on, and nothing in the log says we failed.
    assert (await ann.move("col2", "cell2"))["type"] == "ack"
    for racer in (ann, bo):
        await racer.close()
    output = server.output()
    assert "Traceback" not in output, output[-3000:]
    assert not [line for line in output.splitlines() if " ERROR " in line or "ERROR:" in line]
