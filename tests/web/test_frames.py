"""Frames written straight to the socket, and the ASGI path they fall back to."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import AsyncIterator, Callable

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import WebSocketRoute
from starlette.types import ASGIApp
from starlette.websockets import WebSocket
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode
from websockets.protocol import State
from websockets.streams import StreamReader

from boulanger.web.app import create_app
from boulanger.web.connection import CLOSE_TRY_AGAIN, Connection
from boulanger.web.frames import DirectSocket, RawSend, Ticker, text_frame
from boulanger.web.settings import Settings
from support.servers import listening_socket


def _parse(data: bytes) -> Frame:
    reader = StreamReader()
    reader.feed_data(data)
    parser = Frame.parse(reader.read_exact, mask=False)
    try:
        next(parser)
    except StopIteration as done:
        frame: Frame = done.value
        assert not reader.buffer  # nothing left over
        return frame
    raise AssertionError("incomplete frame")


@pytest.mark.parametrize("size", [0, 1, 125, 126, 127, 65535, 65536, 70000])
def test_a_text_frame_is_what_the_websockets_library_parses(size: int) -> None:
    text = ("é" * size)[: size // 2] + "x" * (size - size // 2)
    frame = _parse(text_frame(text))
    assert frame.opcode is Opcode.TEXT and frame.fin
    assert frame.data.decode() == text


def test_no_raw_send_means_no_direct_socket() -> None:
    assert DirectSocket.find({"type": "websocket"}) is None
    assert DirectSocket.find({"type": "websocket", "boulanger.raw_send": print}) is None


@contextlib.asynccontextmanager
async def _uvicorn(app: ASGIApp, deflate: bool, lifespan: str = "off") -> AsyncIterator[str]:
    """``app`` on a uvicorn server in this loop, as ``boulanger serve`` runs it; yields host:port."""
    sock = listening_socket()  # held from now on: no other process can take the port
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        ws="auto",
        ws_per_message_deflate=deflate,
        lifespan=lifespan,
        log_level="warning",
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            task.result()  # raises what stopped the server
            raise RuntimeError("the server stopped before it started")
        await asyncio.sleep(0.01)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        sock.close()


@contextlib.asynccontextmanager
async def _serve(deflate: bool, sends: int, limit: int, pad: int = 0) -> AsyncIterator[dict]:
    """A server whose one endpoint sends through a Connection."""
    seen: dict = {}

    async def endpoint(websocket: WebSocket) -> None:
        await websocket.accept()
        conn = Connection(websocket, limit)
        seen["direct"] = conn.direct is not None
        for i in range(sends):
            conn.send(f"message {i}" + secrets.token_hex(pad // 2))
            if conn.closed.is_set():
                break
            if i % 64 == 0:
                await asyncio.sleep(0)
        if not conn.closed.is_set():
            conn.close(1000)
        seen["code"] = conn.close_code
        await conn.shutdown()

    app = Starlette(routes=[WebSocketRoute("/ws", endpoint)], middleware=[Middleware(RawSend)])
    async with _uvicorn(app, deflate) as address:
        seen["url"] = f"ws://{address}/ws"
        yield seen


async def test_the_race_server_writes_its_frames_itself() -> None:
    """The application as ``boulanger serve`` runs it: race sockets take the direct path."""
    app = create_app(Settings())
    async with _uvicorn(app, deflate=False, lifespan="on") as address:
        async with httpx.AsyncClient() as http:
            body = {"code": "BK1-C4-AAAAAAB"}
            created = (await http.post(f"http://{address}/api/races", json=body)).json()
        race_id = created["race_id"]
        async with connect(f"ws://{address}/ws/races/{race_id}") as ws:
            join = {"type": "join", "name": "Ann", "host_key": created["host_key"]}
            await ws.send(json.dumps(join))
            assert json.loads(await ws.recv())["type"] == "welcome"
            hub = await app.state.server.hubs.get(race_id)
            assert [conn.direct is not None for conn in hub.connections] == [True]


# permessage-deflate negotiated: the frames need compressing, so they go
# through ASGI's send (as under any other server or WebSocket implementation).
PATHS = pytest.mark.parametrize(("deflate", "direct"), [(False, True), (True, False)])


@PATHS
async def test_every_message_arrives_in_order_on_either_path(deflate: bool, direct: bool) -> None:
    async with (
        _serve(deflate, sends=2000, limit=1 << 30) as seen,
        connect(seen["url"]) as client,
    ):
        got = [await client.recv() for _ in range(2000)]
        with pytest.raises(ConnectionClosed) as closed:
            await client.recv()
    assert got == [f"message {i}" for i in range(2000)]
    assert seen["direct"] is direct
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1000


@PATHS
async def test_a_client_that_does_not_read_is_closed_with_1013(deflate: bool, direct: bool) -> None:
    # 40 MB (random, so deflate cannot shrink it much) against a 64 KiB
    # limit: the kernel's buffers fill, then the server's, and it is given up.
    async with (
        _serve(deflate, sends=40_000, limit=64 * 1024, pad=1000) as seen,
        connect(seen["url"], max_queue=1) as client,
    ):
        # Not reading until the server has given up on this client.
        async with asyncio.timeout(60):
            while "code" not in seen:
                await asyncio.sleep(0.01)
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                await client.recv()
    assert seen["direct"] is direct
    assert seen["code"] == CLOSE_TRY_AGAIN
    assert closed.value.rcvd is not None and closed.value.rcvd.code == CLOSE_TRY_AGAIN


class _Transport:
    """What a DirectSocket uses of a transport: each write kept."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0


def _direct(tick_s: float) -> tuple[DirectSocket, _Transport]:
    class Open:
        state = State.OPEN
        close_sent = False

    transport = _Transport()
    ticker = Ticker.of(asyncio.get_running_loop(), tick_s) if tick_s else None
    return DirectSocket(Open(), Open(), transport, ticker), transport  # type: ignore[arg-type]


async def _until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(5):
        while not condition():
            await asyncio.sleep(0.001)


async def test_frames_that_may_wait_leave_together_at_the_tick() -> None:
    tick = 0.5
    socket, transport = _direct(tick)
    loop = asyncio.get_running_loop()
    start = loop.time()
    for i in range(3):
        socket.write(f"e{i}".encode(), soon=False)
        await asyncio.sleep(0)  # turns of the loop go by: nothing is written yet
    within_the_tick = loop.time() - start < tick  # (a stalled machine may take longer)
    if within_the_tick:
        assert transport.writes == [] and socket.buffered == 6
    await _until(lambda: b"".join(transport.writes) == b"e0e1e2")
    if within_the_tick:
        assert transport.writes == [b"e0e1e2"]  # one write for the three


async def test_a_frame_that_may_not_wait_takes_the_waiting_ones_along_in_order() -> None:
    socket, transport = _direct(60.0)  # a tick that never comes within the test
    socket.write(b"progress", soon=False)
    socket.write(b"ack")
    await asyncio.sleep(0)
    assert transport.writes == [b"progressack"]
    socket.write(b"later", soon=False)
    socket.flush()  # as when the connection closes: nothing is left behind
    assert transport.writes == [b"progressack", b"later"]


async def test_without_a_tick_every_frame_leaves_at_the_end_of_its_turn() -> None:
    socket, transport = _direct(0.0)
    socket.write(b"a", soon=False)
    socket.write(b"b", soon=False)
    await asyncio.sleep(0)
    assert transport.writes == [b"ab"]
