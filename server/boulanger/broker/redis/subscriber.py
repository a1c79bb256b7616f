"""A node's subscriber connection: every push of a read dispatched as it arrives.

:class:`Subscriber` hands every push of a read to the listeners in
``data_received``. :class:`Subscription` keeps one open: it reconnects,
subscribes every channel again, and tells every listener to resync, since
what was published meanwhile is lost (pub/sub is at-most-once).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any, cast

from ..contracts import Listener
from .endpoint import BACKOFF_FIRST_S, BACKOFF_MAX_S, PING, REPLY_TIMEOUT_S, Endpoint
from .resp import ReplyError, RespReader, UnexpectedReply, encode_command

log = logging.getLogger(__name__)


class Subscriber(asyncio.Protocol):
    """One subscriber connection: every reply of a read is handled in ``data_received``."""

    def __init__(self, owner: Subscription) -> None:
        loop = asyncio.get_running_loop()
        self._owner = owner
        self._listeners = owner.listeners
        self._push = owner.push
        self._reader = RespReader()
        self.transport: asyncio.Transport | None = None
        self._clock = loop.time
        self.last_received = self._clock()  # the health check's sign of life
        self.awaiting = 0  # confirmations still to come before it counts as subscribed
        self.subscribed: asyncio.Future[None] = loop.create_future()
        self.lost: asyncio.Future[BaseException] = loop.create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def write(self, data: bytes) -> None:
        """Send bytes if the connection is open; else drop them."""
        # Never raises: a lost connection is noticed by the read loop, which
        # resubscribes every channel on the next one.
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def data_received(self, data: bytes) -> None:
        self.last_received = self._clock()
        try:
            replies = self._reader.feed(data)
        except UnexpectedReply as error:
            self.fail(error)
            return
        listeners_of = self._listeners
        push = self._push
        for reply in cast(list[Any], replies):  # checked below, at run time
            if type(reply) is list and len(reply) == 3 and reply[0] == push:
                try:
                    listeners = listeners_of.get(reply[1].decode())
                    if not listeners:
                        continue  # unsubscribed meanwhile
                    text = reply[2].decode()
                except (AttributeError, UnicodeDecodeError):  # nil, or not UTF-8
                    log.warning("dropped a malformed message: %.100r", reply)
                    continue
                for listener in tuple(listeners):
                    try:
                        listener.on_message(text)
                    except Exception:
                        log.exception("listener failed on %r", reply[1])
            elif not self._control(reply):
                return

    def _control(self, reply: Any) -> bool:
        """Handle a reply that is not a message; False when it ends the connection."""
        if isinstance(reply, ReplyError):
            # A refused AUTH, a command Redis would not take, a channel on
            # another shard (MOVED): start afresh.
            self.fail(ConnectionError(f"Redis answered the subscriber: {reply}"))
            return False
        owner = self._owner
        kind = reply[0] if type(reply) is list and reply else reply
        if self.awaiting and kind in owner.confirmations:
            self.awaiting -= 1
            if not self.awaiting and not self.subscribed.done():
                self.subscribed.set_result(None)
                # Here, before any message that follows in this read: listeners
                # resync first, then get what was published after it.
                owner.on_subscribed()
        elif kind == b"ssubscribe" and owner.resync_when_confirmed:
            owner.confirmed(reply[1])
        elif kind == b"sunsubscribe":
            owner.unsubscribed(reply[1])
        # AUTH's +OK, unsubscribe confirmations and PING's pong: arriving was all.
        return True

    def fail(self, error: BaseException) -> None:
        """End the connection with ``error``, handed to whoever waits for it to end or subscribe."""
        if not self.lost.done():
            self.lost.set_result(error)
        if not self.subscribed.done():
            self.subscribed.set_exception(error)
        if self.transport is not None:
            self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        error = exc or ConnectionError("Redis closed the subscriber connection")
        if not self.lost.done():
            self.lost.set_result(error)
        if not self.subscribed.done():
            self.subscribed.set_exception(error)
        self._owner.on_lost(self)


class Subscription:
    """A node's subscriber connection, kept open: reconnects, resubscribes, resyncs.

    ``listeners`` maps each channel to subscribe on this node to its
    listeners; it is the caller's dict (the broker adds and removes channels,
    then calls :meth:`add` or :meth:`remove`). Plain pub/sub (``sharded``
    False) subscribes every channel in one ``SUBSCRIBE`` with ``always`` (a
    RESP2 connection with no subscription left would drop out of subscribed
    mode, and ``SUBSCRIBE`` needs a channel to open with). Sharded pub/sub
    sends one ``SSUBSCRIBE`` per channel (each must be on this node's slots)
    and a ``PING``, whose answer, after theirs, says they are all in place.

    It never retries by itself within a connection: a dropped subscription
    must surface here, since what was published meanwhile is lost and every
    listener has to resync from the log. A silent connection is sent a PING
    after ``health_interval`` seconds and dropped if nothing comes back within
    ``health_timeout``. ``on_down`` hears of every failed or lost connection;
    ``on_moved`` of every channel the node unsubscribed by itself (its slot
    went to another shard).
    """

    def __init__(
        self,
        endpoint: Endpoint,
        listeners: dict[str, set[Listener]],
        *,
        sharded: bool = False,
        always: tuple[str, ...] = (),
        health_interval: float = 10.0,
        health_timeout: float = 5.0,
        on_down: Callable[[], None] | None = None,
        on_moved: Callable[[str], None] | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.listeners = listeners
        self.sharded = sharded
        self.always = always
        self.push = b"smessage" if sharded else b"message"
        # The reply that ends a connect: PING's, in or out of subscribed mode.
        self.confirmations: tuple[bytes, ...] = (b"pong", b"PONG") if sharded else (b"subscribe",)
        self._health_interval = health_interval
        self._health_timeout = health_timeout
        self._on_down = on_down
        self._on_moved = on_moved
        # Channels moved here from another shard: their listeners resync once
        # this node confirms them (what was published in between is lost).
        self.resync_when_confirmed: set[str] = set()
        self._conn: Subscriber | None = None
        self._reader: asyncio.Task[None] | None = None
        self.connected = asyncio.Event()  # set while subscribed

    def start(self) -> None:
        """Start the read loop: connect, subscribe, and reconnect whenever the connection drops."""
        self._reader = asyncio.create_task(self._read_loop(), name=f"redis-pubsub {self.endpoint}")

    async def close(self) -> None:
        """Stop the read loop and close the connection."""
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        conn = self._drop()
        if conn is not None:  # let the transport close its socket while the loop runs
            await asyncio.wait({conn.lost}, timeout=1)

    # add() and remove() only write to the connection, which never awaits:
    # _connect takes its channel list and installs the connection in one
    # step, so a channel added while connecting is either in the connect's
    # SUBSCRIBE or subscribed by its own right after it. With the node down
    # they write nothing; the reconnect subscribes them all.

    def add(self, channel: str, resync: bool = False) -> None:
        """Subscribe ``channel`` (already in ``listeners``); ``resync``: once confirmed."""
        if channel in self.always:
            return
        if resync:
            self.resync_when_confirmed.add(channel)
        if self._conn is not None:
            command = "SSUBSCRIBE" if self.sharded else "SUBSCRIBE"
            self._conn.write(encode_command(command, channel))

    def remove(self, channel: str) -> None:
        """Unsubscribe ``channel`` (already gone from ``listeners``)."""
        self.resync_when_confirmed.discard(channel)
        if channel not in self.always and self._conn is not None:
            command = "SUNSUBSCRIBE" if self.sharded else "UNSUBSCRIBE"
            self._conn.write(encode_command(command, channel))

    def confirmed(self, channel: bytes) -> None:
        """Redis confirmed a subscription: resync its listeners if they were waiting for it."""
        name = channel.decode(errors="replace")
        if name in self.resync_when_confirmed:
            self.resync_when_confirmed.discard(name)
            _resync(self.listeners.get(name, ()))

    def unsubscribed(self, channel: bytes) -> None:
        """Redis unsubscribed a channel by itself (sharded: its slot moved): tell ``on_moved``."""
        name = channel.decode(errors="replace")
        if self.sharded and name in self.listeners and self._on_moved is not None:
            self._on_moved(name)

    async def _connect(self) -> Subscriber:
        """Open the connection; return once Redis confirmed every subscription."""
        endpoint = self.endpoint
        conn = Subscriber(self)
        await endpoint.open(conn)
        # No await from here to self._conn (see add()).
        channels = list(dict.fromkeys((*self.always, *self.listeners)))
        if self.sharded:
            subscribe = b"".join(encode_command("SSUBSCRIBE", ch) for ch in channels) + PING
            conn.awaiting = 1
        else:
            subscribe = encode_command("SUBSCRIBE", *channels)
            conn.awaiting = len(channels)
        self.resync_when_confirmed.clear()  # every listener resyncs on this connect
        conn.write(endpoint.hello + subscribe)
        self._conn = conn
        async with asyncio.timeout(REPLY_TIMEOUT_S):
            await conn.subscribed
        return conn

    def on_subscribed(self) -> None:
        """Every channel is subscribed on a new connection: resync every listener."""
        self.connected.set()
        # Anything published while we were away is gone: resync.
        for listeners in list(self.listeners.values()):
            _resync(listeners)

    def on_lost(self, conn: Subscriber) -> None:
        """A connection ended: no longer connected, if it was the current one."""
        if conn is self._conn:
            self.connected.clear()

    def _drop(self) -> Subscriber | None:
        conn, self._conn = self._conn, None
        self.connected.clear()
        if conn is not None and conn.transport is not None:
            conn.transport.abort()
        return conn

    async def _watch(self, conn: Subscriber) -> BaseException:
        """Wait while the connection lives; return why it ended.

        After health_interval seconds of silence it gets a PING (in
        subscribed mode Redis answers ``pong``); nothing back within
        health_timeout means a dead peer, which TCP alone would take
        minutes to notice.
        """
        clock = asyncio.get_running_loop().time
        while True:
            idle = clock() - conn.last_received
            if idle < self._health_interval:
                if await _ended(conn, self._health_interval - idle):
                    return conn.lost.result()
                continue
            pinged = clock()
            conn.write(PING)
            if await _ended(conn, self._health_timeout):
                return conn.lost.result()
            if conn.last_received < pinged:
                return TimeoutError(f"no answer to PING in {self._health_timeout:g} s")

    async def _read_loop(self) -> None:
        backoff = BACKOFF_FIRST_S
        while True:
            try:
                conn = await self._connect()
                backoff = BACKOFF_FIRST_S
                error = await self._watch(conn)
            except (OSError, UnexpectedReply) as failure:  # OSError: refused, timeouts, TLS
                error = failure
            except Exception as failure:  # a bug: log it, but keep pub/sub alive
                log.exception("redis pub/sub failed")
                error = failure
            log.warning(
                "redis pub/sub connection to %s lost (%s); reconnecting",
                self.endpoint,
                str(error) or type(error).__name__,
            )
            self._drop()
            if self._on_down is not None:
                self._on_down()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, BACKOFF_MAX_S)


def _resync(listeners: set[Listener] | tuple[()]) -> None:
    for listener in tuple(listeners):
        try:
            listener.on_resync()
        except Exception:
            log.exception("listener failed to resync")


async def _ended(conn: Subscriber, timeout: float) -> bool:
    """Whether the connection ends within ``timeout`` seconds."""
    await asyncio.wait({conn.lost}, timeout=timeout)
    return conn.lost.done()
