"""The figure to beat: a bare WebSocket fan-out server on boulanger's own stack.

uvicorn + Starlette, ``ws="auto"`` (the same frame size limit), races of up
to 8 connections, no engine, no store, no broker. It speaks just enough of
docs/protocol.md for ``bench/load.py``'s bots to drive it:

- ``join`` -> ``welcome`` to the joiner, ``player_joined`` (with the race's
  ``seq``) to the others;
- ``start`` -> ``race_starting`` to everyone (``start_at`` = now + countdown);
- ``move``, ``tap``, ``double_tap``, ``undo``, ``resign`` -> ``ack`` (with
  the action's ``seq``) to the sender and a ``progress`` event carrying the
  client's message to the other 7;
- ``ping`` -> ``pong``.

Every action is accepted (nothing checks it). By default the reader sends
directly (``await websocket.send_text`` for each recipient), and
permessage-deflate is off, as in ``boulanger serve``. ``--queued`` sends
through a bounded queue and one writer task per connection instead, as
boulanger does (server/boulanger/web/connection.py); ``--deflate`` turns
uvicorn's permessage-deflate on (its default).

    python bench/fanout_baseline.py --port 8100 [--countdown-ms 1000] [--queued] [--deflate]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import itertools
import json
import time
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

ACTIONS = {"move", "tap", "double_tap", "undo", "resign"}
QUEUE = 256


def now_ms() -> int:
    return int(time.time() * 1000)


def dumps(message: dict[str, Any]) -> str:
    return json.dumps(message, separators=(",", ":"))


class Conn:
    __slots__ = ("closed", "direct", "player_id", "queue", "websocket", "writer")

    def __init__(self, websocket: WebSocket, direct: bool) -> None:
        self.websocket = websocket
        self.direct = direct
        self.player_id = ""
        self.closed = False
        self.queue: asyncio.Queue[str] = asyncio.Queue(QUEUE)
        self.writer = None if direct else asyncio.create_task(self._write_loop())

    async def send(self, text: str) -> None:
        if self.closed:
            return
        if self.direct:
            try:
                await self.websocket.send_text(text)
            except Exception:
                self.closed = True
            return
        try:
            self.queue.put_nowait(text)
        except asyncio.QueueFull:
            self.closed = True

    async def _write_loop(self) -> None:
        ws = self.websocket
        with contextlib.suppress(Exception):
            while True:
                await ws.send_text(await self.queue.get())
        self.closed = True


class Room:
    __slots__ = ("conns", "seq")

    def __init__(self) -> None:
        self.conns: list[Conn] = []
        self.seq = 0


class Baseline:
    def __init__(self, countdown_ms: int, direct: bool) -> None:
        self.countdown_ms = countdown_ms
        self.direct = direct
        self.rooms: dict[str, Room] = {}
        self.ids = itertools.count(1)

    async def socket(self, websocket: WebSocket) -> None:
        race_id = websocket.path_params["race_id"]
        await websocket.accept()
        room = self.rooms.setdefault(race_id, Room())
        conn = Conn(websocket, self.direct)
        try:
            while True:
                text = await websocket.receive_text()
                message = json.loads(text)
                kind = message.get("type")
                if kind in ACTIONS:
                    room.seq += 1
                    seq = room.seq
                    await conn.send(
                        dumps({"type": "ack", "action_id": message["action_id"], "seq": seq})
                    )
                    event = dumps(
                        {
                            "type": "progress",
                            "seq": seq,
                            "race_state": "running",
                            "player": {"player_id": conn.player_id},
                            "action": message,
                        }
                    )
                    for other in room.conns:
                        if other is not conn:
                            await other.send(event)
                elif kind == "join":
                    conn.player_id = f"p{next(self.ids)}"
                    room.seq += 1
                    event = dumps(
                        {
                            "type": "player_joined",
                            "seq": room.seq,
                            "race_state": "lobby",
                            "player": {"player_id": conn.player_id, "name": message.get("name")},
                        }
                    )
                    for other in room.conns:
                        await other.send(event)
                    room.conns.append(conn)
                    race = {"race_id": race_id, "state": "lobby", "seq": room.seq}
                    await conn.send(
                        dumps(
                            {
                                "type": "welcome",
                                "role": "player",
                                "player_id": conn.player_id,
                                "token": "-",
                                "race": race,
                                "game": None,
                            }
                        )
                    )
                elif kind == "start":
                    room.seq += 1
                    now = now_ms()
                    event = dumps(
                        {
                            "type": "race_starting",
                            "seq": room.seq,
                            "race_state": "countdown",
                            "start_at": now + self.countdown_ms,
                            "ends_at": now + self.countdown_ms + 1_800_000,
                            "now": now,
                        }
                    )
                    for other in room.conns:
                        await other.send(event)
                elif kind == "ping":
                    await conn.send(dumps({"type": "pong", "t": message.get("t")}))
        except WebSocketDisconnect:
            pass
        finally:
            if conn in room.conns:
                room.conns.remove(conn)
            if not room.conns:
                self.rooms.pop(race_id, None)
            if conn.writer is not None:
                conn.writer.cancel()


def create_app(countdown_ms: int, direct: bool) -> Starlette:
    baseline = Baseline(countdown_ms, direct)

    async def healthz(request: Any) -> JSONResponse:
        return JSONResponse({"ok": True, "broker": "none"})

    return Starlette(
        routes=[
            Route("/healthz", healthz),
            WebSocketRoute("/ws/races/{race_id}", baseline.socket),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8100)
    parser.add_argument("--countdown-ms", type=int, default=1000)
    parser.add_argument("--queued", action="store_true", help="a writer task per connection")
    parser.add_argument("--deflate", action="store_true", help="permessage-deflate on")
    parser.add_argument(
        "--gc-young",
        action="store_true",
        help="collect only the young generations, as boulanger serve does",
    )
    args = parser.parse_args()
    if args.gc_young:
        gc.collect()
        gc.freeze()
        gc.set_threshold(700, 10, 1_000_000)
    if not args.host.startswith("127."):
        parser.error("loopback addresses only")
    uvicorn.run(
        create_app(args.countdown_ms, direct=not args.queued),
        host=args.host,
        port=args.port,
        ws="auto",
        ws_max_size=16 * 1024,
        ws_per_message_deflate=args.deflate,
        log_level="warning",
    )


if __name__ == "__main__":
    main()
