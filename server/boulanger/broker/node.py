"""One Redis node's raw connections: pipelined commands, and a subscriber.

The Redis broker holds one of each for its one Redis; the Redis Cluster
broker one of each per shard (its primary). Both are plain
:class:`asyncio.Protocol` objects whose bytes are parsed by :mod:`.resp`:
redis-py's pub/sub (one message per ``get_message`` call) and its pipeline
machinery each cost about a fifth of the server's CPU under load.

- :class:`Appender`: commands pipelined, every command of a turn of the event
  loop in one write, replies matched to them in order. :class:`Appends`
  keeps one open (on demand, with a backoff after a failure). With a replica
  wait, every write that carries appends ends with ``WAIT``, and an append is
  answered only once that ``WAIT`` reports enough replicas.
- :class:`Subscriber`: every push of a read dispatched to the listeners in
  ``data_received``. :class:`Subscription` keeps one open: it reconnects,
  subscribes every channel again, and tells every listener to resync, since
  what was published meanwhile is lost (pub/sub is at-most-once).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import hashlib
import logging
import ssl
from collections import deque
from collections.abc import Callable
from typing import Any, cast
from urllib.parse import urlparse

from redis.asyncio.connection import parse_url

from .base import BrokerUnavailable, Listener
from .resp import ProtocolError, ReplyError, RespReader, encode_command

log = logging.getLogger(__name__)

APPENDS_IN_FLIGHT = 4096  # sent and not yet answered, at most; beyond: BrokerUnavailable
CONNECT_TIMEOUT_S = 2.0  # opening a connection (socket_connect_timeout)
REPLY_TIMEOUT_S = 5.0  # AUTH, SUBSCRIBE, an append answered (socket_timeout of the commands)
BACKOFF_FIRST_S = 0.05
BACKOFF_MAX_S = 2.0
PING = encode_command("PING")
# The resend mark of a WAIT in an appender's queue (compared by identity).
_WAIT = b"WAIT"


def script_heads(script: str) -> tuple[bytes, bytes]:
    """An ``EVALSHA`` command's head for ``script``, and the ``EVAL`` head it becomes
    when Redis no longer has the script (NOSCRIPT: flushed, or restarted)."""
    sha = hashlib.sha1(script.encode()).hexdigest()
    return encode_command("EVALSHA", sha)[4:], encode_command("EVAL", script)[4:]


class ReplyRefused(BrokerUnavailable):
    """Redis answered an append with an error (the text is Redis's: ``MOVED ...``, ``ERR ...``)."""


class NotReplicated(BrokerUnavailable):
    """The append is in the primary's log, but WAIT did not see it on enough replicas in time."""


class Endpoint:
    """Where a connection goes, read from a broker URL as redis-py reads it.

    Host and port (or a unix socket path), TLS for ``rediss://``, credentials
    (sent as ``AUTH``) and the database number (``SELECT``, for the appender:
    pub/sub channels are not per database).
    """

    def __init__(self, url: str) -> None:
        options = cast(dict[str, Any], parse_url(url))  # redis-py's parsing: same target
        scheme = urlparse(url).scheme
        self.path: str | None = options.get("path") if scheme == "unix" else None
        if scheme == "unix" and not self.path:
            raise ValueError(f"no socket path in {url!r}")
        self.host: str = options.get("host", "localhost")
        self.port = int(options.get("port", 6379))
        self.connect_timeout = float(options.get("socket_connect_timeout", CONNECT_TIMEOUT_S))
        self.db = int(options.get("db") or 0)
        self.ssl: ssl.SSLContext | None = None
        if scheme == "rediss":
            self.ssl = _ssl_context(options)
        username: str | None = options.get("username")
        password: str | None = options.get("password")
        # Sent ahead of the first command, in the same write: Redis answers in order.
        self.hello = b""
        if username:
            self.hello = encode_command("AUTH", username, password or "")
        elif password:
            self.hello = encode_command("AUTH", password)

    def __repr__(self) -> str:
        return self.path or f"{self.host}:{self.port}"

    def at(self, host: str, port: int) -> Endpoint:
        """The same credentials and TLS at another node (a cluster's), database 0."""
        other = copy.copy(self)
        other.host, other.port, other.path, other.db = host, port, None, 0
        return other

    async def open(self, protocol: asyncio.Protocol) -> None:
        """Connect ``protocol`` to Redis (TCP, TLS or unix socket) within the connect timeout."""
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(self.connect_timeout):
            if self.path is not None:
                await loop.create_unix_connection(lambda: protocol, self.path)
            else:
                await loop.create_connection(lambda: protocol, self.host, self.port, ssl=self.ssl)


def _ssl_context(options: dict[str, Any]) -> ssl.SSLContext:
    """TLS as redis-py sets it up for ``rediss://``: certificate and host name checked."""
    modes = {"none": ssl.CERT_NONE, "optional": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
    mode = modes.get(options.get("ssl_cert_reqs", "required"))
    if mode is None:
        raise ValueError(f"ssl_cert_reqs must be one of {', '.join(modes)}")
    context = ssl.create_default_context()
    context.check_hostname = mode != ssl.CERT_NONE and bool(options.get("ssl_check_hostname", True))
    context.verify_mode = mode
    if options.get("ssl_certfile") or options.get("ssl_keyfile"):
        context.load_cert_chain(options["ssl_certfile"], options.get("ssl_keyfile"))
    if options.get("ssl_ca_certs") or options.get("ssl_ca_path"):
        context.load_verify_locations(options.get("ssl_ca_certs"), options.get("ssl_ca_path"))
    return context


# -- subscriber ----------------------------------------------------------------


class Subscriber(asyncio.Protocol):
    """One subscriber connection: every reply of a read is handled in ``data_received``."""

    def __init__(self, owner: Subscription) -> None:
        loop = asyncio.get_running_loop()
        self._owner = owner
        self._listeners = owner.listeners
        self._push = owner.push
        self._reader = RespReader(owner.push)
        self.transport: asyncio.Transport | None = None
        self._clock = loop.time
        self.last_received = self._clock()  # the health check's sign of life
        self.awaiting = 0  # confirmations still to come before it counts as subscribed
        self.subscribed: asyncio.Future[None] = loop.create_future()
        self.lost: asyncio.Future[BaseException] = loop.create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def write(self, data: bytes) -> None:
        # Never raises: a lost connection is noticed by the read loop, which
        # resubscribes every channel on the next one.
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def data_received(self, data: bytes) -> None:
        self.last_received = self._clock()
        try:
            replies = self._reader.feed(data)
        except ProtocolError as error:
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
        self.confirmations: tuple[bytes | str, ...] = (
            (b"pong", "PONG") if sharded else (b"subscribe",)
        )
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
        self._reader = asyncio.create_task(self._read_loop(), name=f"redis-pubsub {self.endpoint}")

    async def close(self) -> None:
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
        name = channel.decode(errors="replace")
        if name in self.resync_when_confirmed:
            self.resync_when_confirmed.discard(name)
            _resync(self.listeners.get(name, ()))

    def unsubscribed(self, channel: bytes) -> None:
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
        self.connected.set()
        # Anything published while we were away is gone: resync.
        for listeners in list(self.listeners.values()):
            _resync(listeners)

    def on_lost(self, conn: Subscriber) -> None:
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
            except (OSError, ProtocolError) as failure:  # OSError: refused, timeouts, TLS
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


# -- appender --------------------------------------------------------------------

# What an appender's reply goes to: the caller's future, and how to handle it:
# None hands the reply over as it is (errors too: setup commands, PING,
# ASKING); bytes mark an append, whose error reply fails it (NOSCRIPT resends
# it as those bytes with EVALSHA turned EVAL; b"" once resent) and which waits
# for the replicas when the appender has a replica wait; _WAIT marks a WAIT.
_Waiting = tuple["asyncio.Future[Any]", "bytes | None"]


def retrieved(done: asyncio.Future[Any]) -> None:
    """A reply nobody awaits: take its outcome so that asyncio does not report it."""
    if not done.cancelled():
        done.exception()


class Appender(asyncio.Protocol):
    """The append connection: commands pipelined, replies matched to them in order.

    :meth:`send` queues a command; every command queued in one turn of the
    event loop leaves in one ``transport.write``. Redis answers a connection's
    commands in order, so each reply goes to the oldest waiting future. An
    error reply fails its own append only (a ``NOSCRIPT`` one resends it as
    ``EVAL``); a lost connection, bytes that are not RESP, or no reply within
    ``timeout`` seconds while some are awaited fail every waiting append with
    :class:`BrokerUnavailable` and end the connection.

    With ``replicas`` > 0, each write that carries appends ends with ``WAIT
    replicas wait_ms``. Redis answers WAIT once the replicas have acknowledged
    every write this connection made before it, so one WAIT covers every
    append answered before it on the connection (a group commit): those are
    answered with their seq when WAIT reports enough replicas, and fail with
    :class:`NotReplicated` otherwise. WAIT blocks the connection meanwhile;
    the appends of the next turns queue up behind it and share the next one.
    """

    def __init__(
        self,
        owner: Appends,
        timeout: float,
        idle: float,
        replicas: int = 0,
        wait_ms: int = 1000,
        scripts: tuple[tuple[bytes, bytes], ...] = (),
    ) -> None:
        loop = asyncio.get_running_loop()
        self._owner = owner
        self._scripts = scripts
        self._loop = loop
        self._idle = idle
        self._idle_timer: asyncio.TimerHandle | None = None
        self._reader = RespReader()
        self._waiting: deque[_Waiting] = deque()
        self._out: list[bytes] = []
        self._timeout = timeout
        self._timer: asyncio.TimerHandle | None = None
        self._progress = 0.0  # when the oldest waiting reply started to be awaited, or last came
        self._replicas = replicas
        self._wait = encode_command("WAIT", replicas, wait_ms) if replicas else b""
        self._wait_in_batch = False  # an append was queued since the last WAIT
        # Appends Redis answered that wait for the next WAIT (None: no replica wait).
        self._unconfirmed: list[tuple[asyncio.Future[Any], Any]] | None = [] if replicas else None
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.lost: asyncio.Future[None] = loop.create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        self._progress = self._loop.time()
        self._idle_timer = self._loop.call_later(self._idle, self._ping_if_idle)

    def _ping_if_idle(self) -> None:
        """After ``idle`` silent seconds, a PING: the reply timer then tells a dead connection,
        before an append finds out the slow way."""
        self._idle_timer = None
        if self.closed:
            return
        quiet = self._loop.time() - self._progress
        if not self._waiting and quiet >= self._idle:
            self.send(PING, None).add_done_callback(retrieved)
            quiet = 0.0
        self._idle_timer = self._loop.call_later(self._idle - quiet, self._ping_if_idle)

    def send(self, command: bytes, resend: bytes | None) -> asyncio.Future[Any]:
        """Queue ``command``; its reply comes in the returned future.

        ``resend`` is the command to send again on a NOSCRIPT error (an
        append's EVALSHA; b"" for an append not to resend), or None to get
        any reply, errors too, as the result.
        """
        if self.closed:
            raise BrokerUnavailable("the connection to Redis was lost")
        waiting = self._waiting
        if len(waiting) >= APPENDS_IN_FLIGHT:
            raise BrokerUnavailable(f"{APPENDS_IN_FLIGHT} appends already awaiting Redis")
        done: asyncio.Future[Any] = self._loop.create_future()
        if not waiting:
            self._progress = self._loop.time()
            if self._timer is None:
                self._timer = self._loop.call_at(self._progress + self._timeout, self._check)
        waiting.append((done, resend))
        self._queue(command)
        if resend is not None:
            self._wait_in_batch = True
        return done

    def _queue(self, command: bytes) -> None:
        if not self._out:
            self._loop.call_soon(self._flush)
        self._out.append(command)

    def _flush(self) -> None:
        out, self._out = self._out, []
        if self._wait_in_batch and self._replicas and not self.closed:
            # After the batch's appends: WAIT covers them all.
            self._wait_in_batch = False
            waited: asyncio.Future[Any] = self._loop.create_future()
            self._waiting.append((waited, _WAIT))
            out.append(self._wait)
        if out and not self.closed and self.transport is not None:
            self.transport.write(b"".join(out))

    def _check(self) -> None:
        """The reply timer: no reply for ``timeout`` seconds while some are awaited ends it."""
        self._timer = None
        if self.closed or not self._waiting:
            return
        deadline = self._progress + self._timeout
        if self._loop.time() >= deadline:
            self.fail(TimeoutError(f"Redis did not answer within {self._timeout:g} s"))
        else:
            self._timer = self._loop.call_at(deadline, self._check)

    def data_received(self, data: bytes) -> None:
        try:
            replies = self._reader.feed(data)
        except ProtocolError as error:
            self.fail(error)
            return
        if not replies:
            return
        self._progress = self._loop.time()
        popleft = self._waiting.popleft
        unconfirmed = self._unconfirmed
        for reply in replies:
            try:
                done, resend = popleft()
            except IndexError:
                self.fail(ProtocolError(f"a reply to no command: {reply!r:.100}"))
                return
            if resend is None:
                if not done.done():
                    done.set_result(reply)
            elif resend is _WAIT:
                self._replicated(reply)
            elif done.done():
                continue  # its caller went away
            elif type(reply) is int:
                if unconfirmed is None or not reply:  # 0: refused, nothing written
                    done.set_result(reply)
                else:
                    unconfirmed.append((done, reply))
            elif isinstance(reply, ReplyError):
                if resend and str(reply).startswith("NOSCRIPT"):
                    # Flushed from Redis's script cache: send the script itself,
                    # which puts it back in the cache for the EVALSHAs to come.
                    head = resend.find(b"\r\n") + 2  # after the array's length
                    for evalsha, eval_ in self._scripts:
                        if resend.startswith(evalsha, head):
                            self._waiting.append((done, b""))
                            self._queue(resend.replace(evalsha, eval_, 1))
                            self._wait_in_batch = True
                            break
                    else:
                        done.set_exception(ReplyRefused(str(reply)))
                else:
                    done.set_exception(ReplyRefused(str(reply)))
            else:
                done.set_exception(
                    BrokerUnavailable(f"unexpected reply to an append: {reply!r:.100}")
                )

    def _replicated(self, reply: Any) -> None:
        """A WAIT's answer: the appends answered before it are replicated, or not."""
        # Emptied in place: data_received holds the list while it reads on.
        pending = list(self._unconfirmed or ())
        if self._unconfirmed is not None:
            self._unconfirmed.clear()
        if type(reply) is int and reply >= self._replicas:
            for done, seq in pending:
                if not done.done():
                    done.set_result(seq)
            return
        error = NotReplicated(f"WAIT answered {reply!r:.100}: not on {self._replicas} replica(s)")
        for done, _ in pending:
            if not done.done():
                done.set_exception(error)

    def fail(self, error: BaseException) -> None:
        """End the connection, failing every awaited reply."""
        self._close(BrokerUnavailable(str(error) or type(error).__name__))
        if self.transport is not None:
            self.transport.abort()

    def close(self) -> None:
        """End the connection cleanly, failing every awaited reply."""
        self._close(BrokerUnavailable("the broker is closing"))
        if self.transport is not None:
            self.transport.close()

    def _close(self, error: BrokerUnavailable) -> None:
        if not self.closed:
            self.closed = True
            self._owner.on_lost(self)
        for timer in (self._timer, self._idle_timer):
            if timer is not None:
                timer.cancel()
        self._timer = self._idle_timer = None
        self._out = []
        waiting, self._waiting = self._waiting, deque()
        unconfirmed, self._unconfirmed = self._unconfirmed, None
        for done, resend in [*waiting, *(unconfirmed or ())]:
            if not done.done() and resend is not _WAIT:  # a WAIT's own future has no reader
                done.set_exception(error)

    def connection_lost(self, exc: Exception | None) -> None:
        self._close(BrokerUnavailable(str(exc) if exc else "Redis closed the append connection"))
        if not self.lost.done():
            self.lost.set_result(None)


class Appends:
    """A node's append connection, opened when needed.

    While one attempt to connect is under way, callers wait for it; after a
    failed one they fail at once until its backoff has passed. ``setup``
    commands (``SELECT``, ``SCRIPT LOAD``...) go first on every new
    connection; ``check`` judges their answers (raising to refuse it).
    ``scripts`` are the Lua scripts its appends run with ``EVALSHA``: one
    that Redis no longer has is sent again with ``EVAL``. ``on_down`` hears
    of every failed or lost connection.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        setup: list[bytes],
        check: Callable[[list[Any]], None],
        *,
        timeout: float = REPLY_TIMEOUT_S,
        idle: float = 10.0,
        replicas: int = 0,
        wait_ms: int = 1000,
        scripts: tuple[str, ...] = (),
        on_down: Callable[[], None] | None = None,
    ) -> None:
        self.endpoint = endpoint
        self._scripts = tuple(script_heads(script) for script in scripts)
        self._setup = setup
        self._check = check
        self._timeout = timeout
        self._idle = idle
        self._replicas = replicas
        self._wait_ms = wait_ms
        self._on_down = on_down
        self.conn: Appender | None = None
        self._opening: asyncio.Task[Appender | BaseException] | None = None
        self._retry_at = 0.0
        self._backoff = BACKOFF_FIRST_S
        self._closing = False

    async def ready(self) -> Appender:
        """The connection, opened now if need be; raises BrokerUnavailable."""
        if self._closing:
            raise BrokerUnavailable("the broker is closing")
        opening = self._opening
        if opening is None:
            if asyncio.get_running_loop().time() < self._retry_at:
                raise BrokerUnavailable(
                    f"Redis at {self.endpoint} is unreachable; retrying shortly"
                )
            opening = self.open()
        # Shielded: one caller going away must not cancel the others' connect.
        try:
            result = await asyncio.shield(opening)
        except asyncio.CancelledError:
            # The connect itself was called off (the shard closed, a new slot map):
            # for a caller that was not cancelled, the store is unavailable for now.
            task = asyncio.current_task()
            if opening.cancelled() and (task is None or not task.cancelling()):
                raise BrokerUnavailable(f"the connection to {self.endpoint} was closed") from None
            raise
        if isinstance(result, BaseException):
            raise BrokerUnavailable(str(result) or type(result).__name__) from result
        return result

    def open(self) -> asyncio.Task[Appender | BaseException]:
        """Start connecting (ahead of the first append, if Redis is up)."""
        opening = asyncio.create_task(self._connect(), name=f"redis-appender {self.endpoint}")
        self._opening = opening
        return opening

    async def close(self) -> None:
        self._closing = True
        opening = self._opening
        if opening is not None:
            opening.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await opening
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.close()
            await asyncio.wait({conn.lost}, timeout=1)

    async def _connect(self) -> Appender | BaseException:
        """Open the connection; its failure is returned, not raised."""
        endpoint = self.endpoint
        conn = Appender(
            self, self._timeout, self._idle, self._replicas, self._wait_ms, self._scripts
        )
        try:
            await endpoint.open(conn)
            setup = [endpoint.hello] if endpoint.hello else []
            if endpoint.db:
                setup.append(encode_command("SELECT", endpoint.db))
            setup.extend(self._setup)
            replies = [conn.send(command, None) for command in setup]
            async with asyncio.timeout(self._timeout):
                answers = await asyncio.gather(*replies, return_exceptions=True)
            for answer in answers:
                if isinstance(answer, BaseException):  # ReplyError, or the connection lost
                    raise ConnectionError(f"Redis answered the appender: {answer}")
            self._check(answers[len(answers) - len(self._setup) :])
        except (OSError, ProtocolError, BrokerUnavailable) as error:
            conn.fail(error)
            self._opening = None
            now = asyncio.get_running_loop().time()
            self._retry_at = now + self._backoff
            self._backoff = min(self._backoff * 2, BACKOFF_MAX_S)
            log.warning(
                "redis append connection to %s failed (%s)",
                endpoint,
                str(error) or type(error).__name__,
            )
            if self._on_down is not None:
                self._on_down()
            return error
        except BaseException:
            conn.fail(ConnectionError("cancelled"))
            self._opening = None
            raise
        self._opening = None
        self._backoff = BACKOFF_FIRST_S
        if self._closing:
            conn.close()
            return BrokerUnavailable("the broker is closing")
        self.conn = conn
        return conn

    def on_lost(self, conn: Appender) -> None:
        if conn is self.conn:
            self.conn = None
            log.warning("redis append connection to %s lost", self.endpoint)
            if self._on_down is not None and not self._closing:
                self._on_down()
