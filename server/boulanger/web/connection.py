"""One WebSocket connection: a bounded outbound queue, a message budget, heartbeats."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time

from starlette.websockets import WebSocket, WebSocketState

log = logging.getLogger(__name__)

# Close codes (docs/protocol.md).
CLOSE_NORMAL = 1000
CLOSE_GOING_AWAY = 1001
CLOSE_UNSUPPORTED = 1003
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

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


class Connection:
    """Sends through a bounded queue so that a slow client never delays anyone else."""

    def __init__(self, websocket: WebSocket, queue_size: int) -> None:
        self.websocket = websocket
        self.queue: asyncio.Queue[str] = asyncio.Queue(queue_size)
        self.closed = asyncio.Event()
        self.close_code: int | None = None
        self.last_heard = time.monotonic()
        self.player_id: str | None = None
        self.role: str | None = None
        self.watching: str | None = None
        # Names this connection across processes (for "replaced" kicks).
        self.nonce = secrets.token_hex(8)
        self._writer = asyncio.create_task(self._write_loop())

    def send(self, text: str) -> None:
        """Queue a message; a client too far behind is closed (it can resync)."""
        if self.closed.is_set():
            return
        try:
            self.queue.put_nowait(text)
        except asyncio.QueueFull:
            log.info("closing a slow client (player %s): queue full", self.player_id)
            self.close(CLOSE_TRY_AGAIN)

    def close(self, code: int) -> None:
        if self.closed.is_set():
            return
        self.close_code = code
        self.closed.set()

    async def _write_loop(self) -> None:
        ws = self.websocket
        try:
            while True:
                text = await self.queue.get()
                await ws.send_text(text)
        except asyncio.CancelledError:
            raise
        except Exception:  # the socket went away: the reader notices too
            self.close(CLOSE_GOING_AWAY)

    async def shutdown(self) -> None:
        """Flush what is queued (briefly), close the socket, stop the writer."""
        if self.close_code in (None, CLOSE_NORMAL, CLOSE_POLICY, CLOSE_TOO_BIG):
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._drain(), 1.0)
        self._writer.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._writer
        if self.websocket.application_state != WebSocketState.DISCONNECTED:
            with contextlib.suppress(Exception):
                await self.websocket.close(self.close_code or CLOSE_NORMAL)

    async def _drain(self) -> None:
        while not self.queue.empty() and not self._writer.done():
            await asyncio.sleep(0.01)
