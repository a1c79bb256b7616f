"""The shell every WebSocket conversation shares: limits, heartbeats, clean ends.

A session reads frames and enforces the transport rules (binary frames,
frame size, the message budget, the heartbeat), then hands each text frame
to :meth:`Session.handle`. Subclasses say what a frame means; none of them
re-implements the rules.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from starlette.websockets import WebSocket, WebSocketDisconnect

from .. import codec
from ..race import protocol as p
from ..race.errors import Refused
from .clock import now_ms
from .connection import (
    CLOSE_GOING_AWAY,
    CLOSE_IDLE,
    CLOSE_INTERNAL,
    CLOSE_NORMAL,
    CLOSE_POLICY,
    CLOSE_TOO_BIG,
    CLOSE_UNSUPPORTED,
    Connection,
    TokenBucket,
)
from .logs import client_fault
from .settings import Settings

log = logging.getLogger(__name__)


async def refuse(websocket: WebSocket, code: int, reason: str) -> None:
    """Turn a connection away with a close code.

    It accepts first and then closes: a browser sees the close code, while a
    refused handshake would only show it an anonymous 1006.
    """
    await websocket.accept()
    await websocket.close(code, reason)


class Session:
    """One accepted WebSocket, from its first frame to its close."""

    def __init__(
        self, settings: Settings, websocket: WebSocket, stopping: Callable[[], bool]
    ) -> None:
        """``stopping`` says whether the server is shutting down (a close then says 1001)."""
        self.settings = settings
        self.stopping = stopping
        self.websocket = websocket
        self.conn = Connection(
            websocket, self.settings.outbound_buffer_bytes, self.settings.event_tick_ms / 1000
        )
        self.budget = TokenBucket(self.settings.message_burst, self.settings.messages_per_second)

    # -- what subclasses fill in ---------------------------------------------

    async def opened(self) -> None:
        """After the socket is accepted, before frames are read."""

    async def closing(self) -> None:
        """After the last frame, before the socket closes."""

    async def handle(self, text: str) -> None:
        """One text frame within the limits."""
        raise NotImplementedError

    def describe(self) -> str:
        """Who this is, for the server's logs."""
        return "connection"

    # -- the shell -------------------------------------------------------------

    def error(
        self, code: str, reason: str, *, ref: str | None = None, action_id: str | None = None
    ) -> None:
        """Answer with ``error``, echoing the refused message's ``ref`` and ``action_id``."""
        self.conn.send(codec.encode(p.Error(code, reason, action_id, ref=ref)))

    def refuse(
        self, refused: Refused, *, ref: str | None = None, action_id: str | None = None
    ) -> None:
        """Answer a refused request: ``reject`` for an action (``action_id``), else ``error``."""
        if action_id is not None:
            self.conn.send(codec.encode(p.Reject(action_id, refused.code, refused.reason, ref=ref)))
        else:
            self.error(refused.code, refused.reason, ref=ref)

    def fault(
        self,
        code: str,
        reason: str,
        close: int | None = None,
        *,
        ref: str | None = None,
        action_id: str | None = None,
    ) -> None:
        """A client's protocol error: answered (echoing ``ref`` and ``action_id``), logged as
        one line, maybe closed."""
        client_fault(self.describe(), code, reason)
        self.error(code, reason, ref=ref, action_id=action_id)
        if close is not None:
            self.conn.close(close)

    async def run(self) -> None:
        """Serve the socket until it closes: read loop, heartbeat, then :meth:`closing`."""
        conn = self.conn
        reader = asyncio.create_task(self._read_loop())
        heart = asyncio.create_task(self._heartbeat())
        closed = asyncio.create_task(conn.closed.wait())
        try:
            await self.opened()
            await asyncio.wait({reader, closed}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (reader, heart, closed):
                task.cancel()
            for task in (reader, heart, closed):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            await self.closing()
            if conn.close_code is None:
                conn.close(CLOSE_GOING_AWAY if self.stopping() else CLOSE_NORMAL)
            await conn.shutdown()

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(self.settings.ping_interval_s)
            if time.monotonic() - self.conn.last_heard > self.settings.idle_timeout_s:
                self.conn.close(CLOSE_IDLE)
                return
            self.conn.send(codec.encode(p.ServerPing(now_ms())))

    async def _read_loop(self) -> None:
        conn = self.conn
        try:
            while True:
                frame = await self.websocket.receive()
                if frame["type"] == "websocket.disconnect":
                    conn.close(frame.get("code") or CLOSE_NORMAL)
                    return
                conn.last_heard = time.monotonic()
                text = frame.get("text")
                if text is None:
                    self.fault("bad_json", "binary frames are not accepted", CLOSE_UNSUPPORTED)
                    return
                if len(text) > self.settings.max_frame_bytes:
                    client_fault(self.describe(), "too_big", f"a frame of {len(text)} characters")
                    conn.close(CLOSE_TOO_BIG)
                    return
                if not self.budget.take():
                    self.fault("bad_message", "too many messages: slow down", CLOSE_POLICY)
                    return
                await self.handle(text)
                if conn.direct is None:
                    # Let the writers run between frames, even when frames queue up.
                    await asyncio.sleep(0)
        except WebSocketDisconnect as gone:
            conn.close(gone.code or CLOSE_NORMAL)
        except Exception:
            log.exception("%s failed", self.describe())
            self.error("internal", "unexpected server error")
            conn.close(CLOSE_INTERNAL)
