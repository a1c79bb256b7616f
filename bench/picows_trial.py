"""A trial: the race WebSocket served by picows beside uvicorn, in one process.

    .venv/bin/python bench/picows_trial.py --port 8000 --ws-port 8001 --broker memory://

runs ``boulanger serve``'s app on uvicorn (``--port``: HTTP, and the race
WebSocket as usual) and, in the same event loop, a picows server
(``--ws-port``) that accepts only ``/ws/races/{race_id}``. Behind picows the
very same :func:`boulanger.web.socket.race_socket` runs, on a Starlette
``WebSocket`` whose ASGI ``receive`` and ``send`` are picows' (so
:class:`~boulanger.web.session.Session`, :class:`~boulanger.web.connection.Connection`
and the hub are untouched): picows parses and unmasks the client's frames
(Cython), and the server's frames, framed once by ``frames.text_frame``, are
written to picows' transport by a ``DirectSocket`` as under uvicorn. What
the trial takes away is uvicorn's receive path (the websockets library's
parser, uvicorn's queue of messages and its framing); the app's own cost
per message stays. ``bench/load.py``'s target ``memory_picows`` starts this
script; docs/performance/2026-12-04-picows-trial.md holds what it measured.

picows is not a dependency of the server: it comes with the ``bench`` extra
(part of ``dev``, which ``make`` installs).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import gc
import logging
import os
import re
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import use_tree

use_tree()

from picows import (  # noqa: E402
    WSCloseCode,
    WSFrame,
    WSListener,
    WSMsgType,
    WSTransport,
    WSUpgradeRequest,
    ws_create_server,
)
from starlette.types import ASGIApp, Message  # noqa: E402
from starlette.websockets import WebSocket  # noqa: E402
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware  # noqa: E402
from websockets.protocol import Protocol, State  # noqa: E402

from boulanger.web.connection import CLOSE_INVALID_TEXT, CLOSE_TOO_BIG  # noqa: E402
from boulanger.web.frames import RAW_SEND  # noqa: E402
from boulanger.web.socket import race_socket  # noqa: E402

log = logging.getLogger("boulanger.picows")

RACE_PATH = re.compile(r"/ws/races/([^/]+)")
# A client that has sent no close frame of its own this long after ours is cut off.
CLOSE_WAIT_S = 5.0
# The close code an ASGI app is told when the peer went without a close frame.
ABNORMAL = 1006


class _WireState(Protocol):
    """What a ``DirectSocket`` reads of a websockets protocol, told by picows' transport:
    open until a close frame is sent or the peer is gone, no extensions."""

    def __init__(self, transport: WSTransport) -> None:  # the parent's state is not used
        self._ws = transport
        self.extensions = []

    @property  # type: ignore[misc]
    def state(self) -> State:
        ws = self._ws
        return State.CLOSED if ws.is_close_frame_sent or ws.is_disconnected else State.OPEN


class RaceListener(WSListener):
    """One picows connection presented to the app as an ASGI WebSocket.

    Frames read are handed to ``receive`` (a text message reassembled from
    its fragments, checked as UTF-8: else 1007); ``send`` takes the app's
    accept (already done by picows' handshake), its few text sends (a
    ``Connection`` without a direct socket) and its close. ``conn``,
    ``transport`` and ``close_sent`` are what ``DirectSocket.find`` looks for
    behind the scope's raw ``send``.
    """

    def __init__(
        self, app: ASGIApp, request: WSUpgradeRequest, race_id: str, max_size: int
    ) -> None:
        self.app = app
        self.request = request
        self.race_id = race_id
        self.max_size = max_size
        self.loop = asyncio.get_running_loop()
        self.ws: WSTransport | None = None
        self.conn: _WireState | None = None
        self.transport: Any = None
        self._inbox: collections.deque[Message] = collections.deque([{"type": "websocket.connect"}])
        self._waiter: asyncio.Future[None] | None = None
        self._parts: list[bytes] | None = None  # a fragmented text message's frames so far
        self._parts_size = 0
        self._gone = False  # the disconnect is in the inbox
        self._task: asyncio.Task[None] | None = None

    @property
    def close_sent(self) -> bool:
        return self.ws is None or self.ws.is_close_frame_sent

    # -- picows' callbacks ------------------------------------------------------

    def on_ws_connected(self, transport: WSTransport) -> None:
        self.ws = transport
        self.conn = _WireState(transport)
        self.transport = transport.underlying_transport
        self._task = self.loop.create_task(self._serve())

    def on_ws_frame(self, transport: WSTransport, frame: WSFrame) -> None:
        kind = frame.msg_type
        if kind is WSMsgType.TEXT and frame.fin and self._parts is None:
            try:
                self._put({"type": "websocket.receive", "text": frame.get_payload_as_utf8_text()})
            except UnicodeDecodeError:
                self._fail(CLOSE_INVALID_TEXT, "invalid UTF-8")
        elif kind is WSMsgType.TEXT or kind is WSMsgType.CONTINUATION:
            self._fragment(frame)
        elif kind is WSMsgType.BINARY:
            self._put({"type": "websocket.receive", "bytes": frame.get_payload_as_bytes()})
        elif kind is WSMsgType.CLOSE:
            code = int(frame.get_close_code().value) if frame.payload_size >= 2 else 1005
            if not transport.is_close_frame_sent:  # the close handshake's answer
                transport.send_close(WSCloseCode(1000 if code == 1005 else code))
            transport.disconnect()
            self._disconnected(code)

    def on_ws_disconnected(self, transport: WSTransport) -> None:
        handshake = transport.close_handshake
        received = handshake.recv if handshake is not None else None
        self._disconnected(int(received.code.value) if received is not None else ABNORMAL)

    # -- ASGI -------------------------------------------------------------------

    async def receive(self) -> Message:
        while not self._inbox:
            self._waiter = self.loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._inbox.popleft()

    async def send(self, message: Message) -> None:
        ws = self.ws
        assert ws is not None
        kind = message["type"]
        if kind == "websocket.accept":
            return  # picows answered the handshake with 101 already
        if kind == "websocket.send":
            if ws.is_disconnected or ws.is_close_frame_sent:
                raise ConnectionResetError("the WebSocket is closed")
            text = message.get("text")
            if text is not None:
                ws.send(WSMsgType.TEXT, text.encode())
            else:
                ws.send(WSMsgType.BINARY, message["bytes"])
        elif kind == "websocket.close":
            self._close(int(message.get("code") or 1000), message.get("reason") or "")
        else:
            raise RuntimeError(f"unexpected ASGI message {kind!r}")

    # -- the rest -------------------------------------------------------------

    async def _serve(self) -> None:
        ws = self.ws
        assert ws is not None
        headers = [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in self.request.headers.items()
        ]
        raw_path, _, query = self.request.path.partition(b"?")
        peer = self.transport.get_extra_info("peername")
        here = self.transport.get_extra_info("sockname")
        scope: dict[str, Any] = {
            "type": "websocket",
            "asgi": {"version": "3.0", "spec_version": "2.4"},
            "http_version": "1.1",
            "scheme": "ws",
            "server": (here[0], here[1]) if here else None,
            "client": (peer[0], peer[1]) if peer else None,
            "root_path": "",
            "path": unquote(raw_path.decode("latin-1")),
            "raw_path": raw_path,
            "query_string": query,
            "headers": headers,
            "subprotocols": [],
            "state": {},
            "extensions": {},
            "path_params": {"race_id": self.race_id},
            RAW_SEND: self.send,
        }
        try:
            await self.app(scope, self.receive, self.send)
        except Exception:
            log.exception("race %s: the WebSocket failed", self.race_id)
            self._close(1011, "")
        finally:
            if not ws.is_close_frame_sent:
                self._close(1000, "")

    def _put(self, message: Message) -> None:
        self._inbox.append(message)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _fragment(self, frame: WSFrame) -> None:
        if frame.msg_type is WSMsgType.TEXT:
            self._parts, self._parts_size = [], 0
        elif self._parts is None:  # a continuation of nothing
            self._fail(1002, "unexpected continuation frame")
            return
        payload = frame.get_payload_as_bytes()
        self._parts.append(payload)
        self._parts_size += len(payload)
        if self._parts_size > self.max_size:
            self._fail(CLOSE_TOO_BIG, "message too big")
            return
        if frame.fin:
            data, self._parts = b"".join(self._parts), None
            try:
                self._put({"type": "websocket.receive", "text": data.decode()})
            except UnicodeDecodeError:
                self._fail(CLOSE_INVALID_TEXT, "invalid UTF-8")

    def _fail(self, code: int, reason: str) -> None:
        """A protocol error of the client's: closed with ``code``, as the websockets library
        closes it under uvicorn (the app is told the connection went)."""
        self._close(code, reason)
        self._disconnected(code)

    def _close(self, code: int, reason: str) -> None:
        ws = self.ws
        if ws is None or ws.is_disconnected or ws.is_close_frame_sent:
            return
        ws.send_close(WSCloseCode(code), reason.encode())
        handshake = ws.close_handshake
        if handshake is not None and handshake.recv is not None:
            ws.disconnect()  # the client's close came first: ours answered it
        else:  # wait for the client's close frame, a while
            self.loop.call_later(CLOSE_WAIT_S, ws.disconnect)

    def _disconnected(self, code: int) -> None:
        if not self._gone:
            self._gone = True
            self._put({"type": "websocket.disconnect", "code": code})


def race_sockets(
    app: ASGIApp, max_size: int, forwarded_allow_ips: str
) -> Any:  # the factory picows calls with each upgrade request
    """picows' listener factory: ``/ws/races/{race_id}`` runs ``race_socket``, anything
    else is answered 404. X-Forwarded-For is trusted as uvicorn trusts it."""

    async def endpoint(scope: Any, receive: Any, send: Any) -> None:
        scope["app"] = app
        await race_socket(WebSocket(scope, receive, send))

    asgi: Any = ProxyHeadersMiddleware(endpoint, trusted_hosts=forwarded_allow_ips)

    def factory(request: WSUpgradeRequest) -> RaceListener | None:
        path = request.path.partition(b"?")[0].decode("latin-1")
        found = RACE_PATH.fullmatch(path)
        if found is None:
            return None
        return RaceListener(asgi, request, unquote(found.group(1)), max_size)

    return factory


async def listen(
    app: ASGIApp,
    host: str,
    port: int,
    max_size: int,
    forwarded_allow_ips: str,
    aiofastnet: bool | None = None,
) -> asyncio.Server:
    """The picows server of ``/ws/races/`` on ``host:port``, in the running loop.

    ``aiofastnet``: picows' own socket transports (its default when installed,
    as with ``pip install picows``) or, False, the event loop's (uvloop's)."""
    return await ws_create_server(
        race_sockets(app, max_size, forwarded_allow_ips),
        host,
        port,
        # As uvicorn's ws_max_size: picows closes a longer frame with 1009.
        max_frame_size=max_size,
        websocket_handshake_timeout=10,
        logger_name="server",
        use_aiofastnet=aiofastnet,
    )


def main(argv: list[str] | None = None) -> int:
    import uvicorn

    from boulanger import cli
    from boulanger.web import logs
    from boulanger.web.app import create_app
    from boulanger.web.settings import Settings

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="uvicorn: HTTP and WebSockets")
    parser.add_argument("--ws-port", type=int, default=8001, help="picows: /ws/races/ only")
    parser.add_argument("--broker", default="memory://")
    parser.add_argument("--log-level", default="info")
    parser.add_argument("--forwarded-allow-ips", default=cli.forwarded_allow_ips())
    parser.add_argument(
        "--transport",
        choices=["picows", "loop"],
        default=os.environ.get("BOULANGER_PICOWS_TRANSPORT", "picows"),
        help="picows' own socket transports (aiofastnet) or the event loop's; also"
        " BOULANGER_PICOWS_TRANSPORT",
    )
    args = parser.parse_args(argv)

    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # picows logs every connection at INFO: as quiet as uvicorn at --log-level.
    logging.getLogger("picows").setLevel(args.log_level.upper())
    settings = Settings.from_env(broker_url=args.broker)
    app = create_app(settings)
    # As `boulanger serve`: the oldest generation collected by the server's sweeper.
    gc.collect()
    gc.freeze()
    gc.set_threshold(700, 10, 1_000_000)
    print(
        f"boulanger: serving on http://{args.host}:{args.port}/, /ws/races/ also on"
        f" ws://{args.host}:{args.ws_port}/ (picows; broker: {settings.broker_url})",
        flush=True,
    )
    config = uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        **cli.uvicorn_options(settings, args.log_level, args.forwarded_allow_ips),
    )
    logs.install()
    server = uvicorn.Server(config)

    async def serve() -> None:
        serving = asyncio.create_task(server.serve())
        while not server.started:  # the app's startup done: its services run
            if serving.done():
                return serving.result()
            await asyncio.sleep(0.01)
        sockets = await listen(
            app,
            args.host,
            args.ws_port,
            settings.max_frame_bytes,
            args.forwarded_allow_ips,
            aiofastnet=args.transport == "picows",
        )
        try:
            await serving
        finally:
            sockets.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(sockets.wait_closed(), 5)

    loop_factory = config.get_loop_factory()
    if loop_factory is None:
        asyncio.run(serve())
    else:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            runner.run(serve())
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
