"""One WebSocket connection: bounded outbound traffic, a message budget, close codes."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Iterable

from starlette.websockets import WebSocket, WebSocketState

from ..race.states import Role
from .frames import DirectSocket, text_frame

log = logging.getLogger(__name__)

# Close codes (docs/protocol.md).
CLOSE_NORMAL = 1000
CLOSE_GOING_AWAY = 1001
CLOSE_UNSUPPORTED = 1003
# Sent by the WebSocket layer itself (a text frame that is not UTF-8), never by
# our code: named so that every close code a client can meet is listed here.
CLOSE_INVALID_TEXT = 1007
CLOSE_POLICY = 1008
CLOSE_TOO_BIG = 1009
CLOSE_INTERNAL = 1011
CLOSE_TRY_AGAIN = 1013
CLOSE_NO_RACE = 4404
CLOSE_IDLE = 4408
CLOSE_REPLACED = 4409


class TokenBucket:
    """A message budget: ``burst`` at once, refilled at ``rate`` per second."""

    __slots__ = ("burst", "rate", "stamp", "tokens")

    def __init__(self, burst: int, rate: float) -> None:
        self.burst = burst
        self.rate = rate
        self.tokens = float(burst)
        self.stamp = time.monotonic()

    def take(self, cost: int = 1) -> bool:
        """Spend ``cost`` tokens if the bucket holds them (``rate`` a second, ``burst`` at most)."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens < cost:
            return False
        self.tokens -= cost
        return True


class Connection:
    """Sends so that a slow client never delays anyone else.

    Frames go straight to the socket when the server allows it (see
    :mod:`.frames`), otherwise through a queue and a writer task. Either way
    a client that falls more than ``buffer_limit`` bytes behind is closed
    with 1013 (it can reconnect and resync).
    """

    def __init__(self, websocket: WebSocket, buffer_limit: int, tick_s: float = 0.0) -> None:
        self.websocket = websocket
        self.buffer_limit = buffer_limit
        self.closed = asyncio.Event()
        self.close_code: int | None = None
        self.last_heard = time.monotonic()
        self.player_id: str | None = None
        self.role: Role | None = None
        self.watching: str | None = None
        # Names this connection across processes (for "replaced" kicks).
        self.nonce = secrets.token_hex(8)
        # Events that may wait (see frames.Ticker) wait at most tick_s.
        self.direct = DirectSocket.find(websocket.scope, tick_s)
        # Without a direct socket: a queue and a writer task.
        self.queue: asyncio.Queue[str] | None = None
        self._queued_bytes = 0
        self._writer: asyncio.Task[None] | None = None
        if self.direct is None:
            self.queue = asyncio.Queue()
            self._writer = asyncio.create_task(self._write_loop(self.queue))

    def send(self, text: str, frame: bytes | None = None, soon: bool = True) -> None:
        """Send a message (``frame``: the same text, framed once for many recipients;
        ``soon`` False: it may wait for the next tick, see frames.Ticker)."""
        if self.closed.is_set():
            return
        direct = self.direct
        if direct is not None:
            direct.write(frame or text_frame(text), soon)
            if direct.buffered > self.buffer_limit:
                self._too_slow()
            return
        assert self.queue is not None
        self._queued_bytes += len(text)
        if self._queued_bytes > self.buffer_limit:
            self._too_slow()
            return
        self.queue.put_nowait(text)

    def _too_slow(self) -> None:
        log.info("closing a slow client (player %s): too far behind", self.player_id)
        self.close(CLOSE_TRY_AGAIN)

    def close(self, code: int) -> None:
        """Ask the session to close the socket with ``code``; the first code asked for wins."""
        if self.closed.is_set():
            return
        self.close_code = code
        self.closed.set()

    async def _write_loop(self, queue: asyncio.Queue[str]) -> None:
        ws = self.websocket
        try:
            while True:
                text = await queue.get()
                self._queued_bytes -= len(text)
                await ws.send_text(text)
        except asyncio.CancelledError:
            raise
        except Exception:  # the socket went away: the reader notices too
            self.close(CLOSE_GOING_AWAY)

    async def shutdown(self) -> None:
        """Flush what is queued (briefly), close the socket, stop the writer."""
        if self.direct is not None:
            self.direct.flush()  # what this turn of the loop sent goes before the close
        writer, queue = self._writer, self.queue
        if writer is not None and queue is not None:
            if self.close_code in (None, CLOSE_NORMAL, CLOSE_POLICY, CLOSE_TOO_BIG):
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._drain(writer, queue), 1.0)
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await writer
        if self.websocket.application_state != WebSocketState.DISCONNECTED:
            with contextlib.suppress(Exception):
                await self.websocket.close(self.close_code or CLOSE_NORMAL)

    @staticmethod
    async def _drain(writer: asyncio.Task[None], queue: asyncio.Queue[str]) -> None:
        while not queue.empty() and not writer.done():
            await asyncio.sleep(0.01)


def send_to_all(connections: Iterable[Connection], text: str, soon: bool = True) -> None:
    """One message to many connections, framed once for all of them (``soon``: as
    :meth:`Connection.send`)."""
    frame = text_frame(text)
    for conn in connections:
        conn.send(text, frame, soon)
