"""Outbound WebSocket frames written straight to the socket, when the server allows it.

Every race event goes to up to eight players and their spectators. Through
ASGI each copy costs a trip through Starlette, uvicorn and the websockets
library, which frames the same text again for every recipient: that path
was the largest single cost of a busy server (docs/performance.md). Under
uvicorn's sans-I/O WebSocket protocol (``ws="auto"`` with websockets
installed, as ``boulanger serve`` runs it) a :class:`DirectSocket` frames an
event once and writes the bytes to each recipient's transport. Anything
else (another ASGI server, another WebSocket implementation, a negotiated
extension such as permessage-deflate) falls back to the ASGI ``send``.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from collections.abc import MutableMapping
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send
from websockets.protocol import Protocol, State

# Where RawSend leaves the ASGI server's own ``send`` in a WebSocket scope.
RAW_SEND = "boulanger.raw_send"

_TEXT = 0x81  # FIN + text opcode


def text_frame(text: str) -> bytes:
    """One unmasked, unfragmented text frame (RFC 6455, 5.2): the server's side."""
    payload = text.encode()
    size = len(payload)
    if size < 126:
        return bytes((_TEXT, size)) + payload
    if size < 1 << 16:
        return bytes((_TEXT, 126)) + size.to_bytes(2, "big") + payload
    return bytes((_TEXT, 127)) + size.to_bytes(8, "big") + payload


class RawSend:
    """ASGI middleware: keep the server's ``send`` in WebSocket scopes.

    Starlette wraps ``send`` for its exception handling; the connection
    needs the server's own callable to find the socket behind it.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            scope[RAW_SEND] = send
        await self.app(scope, receive, send)


class Ticker:
    """Flushes each socket holding frames that may wait once its window is over: one
    timer a process.

    A player's ``progress`` reaches the other connections of the race (when it
    changes what they see, docs/protocol.md); at human pace a socket hears of
    a rival's change every 90 ms or so, and each frame written alone is a
    system call, the largest cost of an event. So the frames that may wait (a
    rival's progress, a watched board) wait up to ``tick_s`` from the first
    one held, and leave in one write with those that came meanwhile, or with
    the next frame that may not wait (the player's own ack), whichever comes
    first. The timer fires at most :data:`SLOTS` times a window: a frame
    waits between (1 - 1/SLOTS) and 1 window.
    """

    SLOTS = 4

    def __init__(self, tick_s: float) -> None:
        self.tick_s = tick_s
        self._slot = tick_s / self.SLOTS
        # (when, socket), in the order added: when is a constant away from the add.
        self._due: deque[tuple[float, DirectSocket]] = deque()
        self._timer: asyncio.TimerHandle | None = None

    @classmethod
    def of(cls, loop: asyncio.AbstractEventLoop, tick_s: float) -> Ticker:
        """The event loop's ticker of that length."""
        tickers = _TICKERS.setdefault(loop, {})
        ticker = tickers.get(tick_s)
        if ticker is None:
            ticker = tickers[tick_s] = cls(tick_s)
        return ticker

    def add(self, socket: DirectSocket) -> None:
        """Flush ``socket`` once its window is over (it is added once a window)."""
        loop = asyncio.get_running_loop()
        due = loop.time() + self.tick_s
        self._due.append((due, socket))
        if self._timer is None:
            # The loop is not kept: the table of tickers holds loops weakly.
            self._timer = loop.call_at(due, self._tick)

    def _tick(self) -> None:
        self._timer = None
        loop = asyncio.get_running_loop()
        horizon = loop.time() + self._slot
        due = self._due
        while due and due[0][0] <= horizon:
            # A socket flushed since (by an ack) writes only what came after it.
            due.popleft()[1].flush()
        if due:
            self._timer = loop.call_at(due[0][0], self._tick)


# Each event loop's tickers (a test may run several loops, one after another).
_TICKERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[float, Ticker]] = (
    weakref.WeakKeyDictionary()
)


class DirectSocket:
    """Writes whole frames to a uvicorn sans-I/O WebSocket's transport.

    Frames sent during one turn of the event loop leave in one write at the
    end of it: each write is a system call (on loopback the kernel delivers
    the bytes inside it), the largest cost per message once the frames are
    built once, so a busy server sends its bursts in fewer, larger writes.
    Frames that may wait (``soon=False``) leave with the next that may not,
    or at the end of their window (:class:`Ticker`).
    """

    __slots__ = (
        "_conn",
        "_loop",
        "_pending",
        "_pending_bytes",
        "_protocol",
        "_soon",
        "_ticked",
        "_ticker",
        "_transport",
    )

    def __init__(
        self, protocol: Any, conn: Protocol, transport: Any, ticker: Ticker | None = None
    ) -> None:
        self._protocol = protocol
        self._conn = conn
        self._transport = transport
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._loop = asyncio.get_running_loop()
        self._ticker = ticker
        self._soon = False  # a flush is due at the end of this turn of the loop
        self._ticked = False  # a flush is due at the end of the window

    @classmethod
    def find(cls, scope: MutableMapping[str, Any], tick_s: float = 0.0) -> DirectSocket | None:
        """The socket behind an accepted WebSocket, or None to use ASGI ``send``.

        ``tick_s``: how long frames that may wait wait at most (0: not at all).
        """
        protocol = getattr(scope.get(RAW_SEND), "__self__", None)
        conn = getattr(protocol, "conn", None)
        transport = getattr(protocol, "transport", None)
        if (
            not isinstance(conn, Protocol)
            or transport is None
            or not hasattr(protocol, "close_sent")
            or conn.state is not State.OPEN
            or conn.extensions  # e.g. permessage-deflate: frames would need compressing
        ):
            return None
        loop = asyncio.get_running_loop()
        return cls(protocol, conn, transport, Ticker.of(loop, tick_s) if tick_s > 0 else None)

    @property
    def open(self) -> bool:
        return (
            self._conn.state is State.OPEN
            and not self._protocol.close_sent
            and not self._transport.is_closing()
        )

    def write(self, frame: bytes, soon: bool = True) -> None:
        """Send one frame at the end of this turn of the loop, or (``soon`` False) at the
        latest at the end of the window; frames leave in the order written (dropped once
        closing)."""
        self._pending.append(frame)
        self._pending_bytes += len(frame)
        if self._soon:
            return
        ticker = self._ticker
        if soon or ticker is None:
            self._soon = True
            self._loop.call_soon(self.flush)
        elif not self._ticked:
            self._ticked = True
            ticker.add(self)

    def flush(self) -> None:
        """Write the frames waiting, in one go; the close handshake comes after them."""
        self._soon = self._ticked = False
        pending = self._pending
        if not pending:
            return
        self._pending = []
        self._pending_bytes = 0
        if self.open:
            self._transport.write(pending[0] if len(pending) == 1 else b"".join(pending))

    @property
    def buffered(self) -> int:
        """Bytes not yet taken by the kernel: the client is that far behind."""
        return int(self._transport.get_write_buffer_size()) + self._pending_bytes
