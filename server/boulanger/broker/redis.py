"""The Redis broker: race logs in Redis lists, fan-out through Redis pub/sub.

Keys of one race share the ``{race_id}`` hash tag so that Redis Cluster
keeps them on one shard. An append is one Lua script: it checks the
append's condition (see :class:`Condition`), numbers the event, pushes it and
publishes it, atomically, so the channel carries each race's events in log
order. Pub/sub is at-most-once: after a dropped
connection the broker resubscribes and tells every listener to resync from
the log.

Most commands go through redis-py. Subscriptions do not: receiving one
message per ``PubSub.get_message`` call cost about a fifth of the server's
CPU under load, so the subscriber is one raw connection (an
:class:`asyncio.Protocol`) whose bytes are parsed by :mod:`.resp` and
dispatched to listeners as they arrive, every message of a read in one pass.
Appends do not either: redis-py's pipeline machinery cost about a fifth of
the server's CPU at saturation, so they go over a second raw connection
(:class:`_Appender`) as ``EVALSHA`` commands, every append of a turn of the
event loop in one write, their replies matched to them in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import ssl
from collections import deque
from typing import Any, cast
from urllib.parse import urlparse

import redis.asyncio as aioredis
from redis.asyncio.connection import parse_url
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .base import Broker, BrokerUnavailable, Condition, Listener, race_channel
from .resp import ProtocolError, ReplyError, RespReader, encode_command

log = logging.getLogger(__name__)

RACE_TTL_S = 7 * 24 * 3600
APPENDS_IN_FLIGHT = 4096  # sent and not yet answered, at most; beyond: BrokerUnavailable

# Always subscribed: a RESP2 connection with no subscription left would drop
# out of subscribed mode, and SUBSCRIBE needs a channel to open with.
CONTROL_CHANNEL = "bk:control"
_PING = encode_command("PING")
_CONNECT_TIMEOUT_S = 2.0  # opening the subscriber connection (socket_connect_timeout)
_REPLY_TIMEOUT_S = 5.0  # AUTH, SUBSCRIBE, an append answered (socket_timeout of the commands)
_BACKOFF_FIRST_S = 0.05
_BACKOFF_MAX_S = 2.0

# KEYS: the log (a list), the race's state (a hash: "over", and "p:<id>"
# holding each player's number of events).
# ARGV: event JSON without its seq, channel, ttl, expected log length or "",
# player field or "", expected player events, "1" when the event ends the race.
_APPEND = """
local len = redis.call('LLEN', KEYS[1])
if ARGV[4] ~= '' and len ~= tonumber(ARGV[4]) then return 0 end
if ARGV[5] ~= '' then
  if redis.call('HEXISTS', KEYS[2], 'over') == 1 then return 0 end
  local n = tonumber(redis.call('HGET', KEYS[2], ARGV[5]) or '0')
  if n ~= tonumber(ARGV[6]) then return 0 end
  redis.call('HSET', KEYS[2], ARGV[5], n + 1)
end
if ARGV[7] == '1' then redis.call('HSET', KEYS[2], 'over', '1') end
local seq = len + 1
local text = '{"seq":' .. seq .. ',' .. string.sub(ARGV[1], 2)
redis.call('RPUSH', KEYS[1], text)
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[3])
redis.call('PUBLISH', ARGV[2], text)
return seq
"""
_APPEND_SHA = hashlib.sha1(_APPEND.encode()).hexdigest()
# An EVALSHA command's head, and the EVAL with the script body it becomes
# when Redis no longer has the script (NOSCRIPT: flushed, or restarted).
_EVALSHA_HEAD = encode_command("EVALSHA", _APPEND_SHA)[4:]
_EVAL_HEAD = encode_command("EVAL", _APPEND)[4:]


def _key(race_id: str, part: str) -> str:
    return f"bk:race:{{{race_id}}}:{part}"


class _Endpoint:
    """Where the subscriber connects, read from the broker URL as redis-py reads it.

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
        self.connect_timeout = float(options.get("socket_connect_timeout", _CONNECT_TIMEOUT_S))
        self.db = int(options.get("db") or 0)
        self.ssl: ssl.SSLContext | None = None
        if scheme == "rediss":
            self.ssl = _ssl_context(options)
        username: str | None = options.get("username")
        password: str | None = options.get("password")
        # Sent ahead of SUBSCRIBE, in the same write: Redis answers in order.
        self.hello = b""
        if username:
            self.hello = encode_command("AUTH", username, password or "")
        elif password:
            self.hello = encode_command("AUTH", password)

    def __repr__(self) -> str:
        return self.path or f"{self.host}:{self.port}"

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


class _Subscriber(asyncio.Protocol):
    """One subscriber connection: every reply of a read is handled in ``data_received``."""

    def __init__(self, broker: RedisBroker) -> None:
        loop = asyncio.get_running_loop()
        self._broker = broker
        self._listeners = broker._listeners
        self._reader = RespReader()
        self.transport: asyncio.Transport | None = None
        self._clock = loop.time
        self.last_received = self._clock()  # the health check's sign of life
        self.awaiting = 0  # SUBSCRIBE confirmations still to come before it counts as subscribed
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
        for reply in cast(list[Any], replies):  # checked below, at run time
            if type(reply) is list and len(reply) == 3 and reply[0] == b"message":
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
            # A refused AUTH, or a command Redis would not take: start afresh.
            self.fail(ConnectionError(f"Redis answered the subscriber: {reply}"))
            return False
        if type(reply) is list and reply and reply[0] == b"subscribe" and self.awaiting:
            self.awaiting -= 1
            if not self.awaiting and not self.subscribed.done():
                self.subscribed.set_result(None)
                # Here, before any message that follows in this read: listeners
                # resync first, then get what was published after it.
                self._broker._on_subscribed()
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
        self._broker._on_lost(self)


# What an appender's reply goes to: the caller's future, and how to resend the
# command on NOSCRIPT (its EVALSHA bytes; b"" once resent as EVAL; None for a
# reply that is handed over as it is: the connection's own setup commands).
_Waiting = tuple["asyncio.Future[Any]", "bytes | None"]


def _retrieved(done: asyncio.Future[Any]) -> None:
    """A reply nobody awaits: take its outcome so that asyncio does not report it."""
    if not done.cancelled():
        done.exception()


class _Appender(asyncio.Protocol):
    """The append connection: commands pipelined, replies matched to them in order.

    :meth:`send` queues a command; every command queued in one turn of the
    event loop leaves in one ``transport.write``. Redis answers a connection's
    commands in order, so each reply goes to the oldest waiting future. An
    error reply fails its own append only (a ``NOSCRIPT`` one resends it as
    ``EVAL``); a lost connection, bytes that are not RESP, or no reply within
    ``timeout`` seconds while some are awaited fail every waiting append with
    :class:`BrokerUnavailable` and end the connection.
    """

    def __init__(self, broker: RedisBroker, timeout: float, idle: float) -> None:
        loop = asyncio.get_running_loop()
        self._broker = broker
        self._loop = loop
        self._idle = idle
        self._idle_timer: asyncio.TimerHandle | None = None
        self._reader = RespReader()
        self._waiting: deque[_Waiting] = deque()
        self._out: list[bytes] = []
        self._timeout = timeout
        self._timer: asyncio.TimerHandle | None = None
        self._progress = 0.0  # when the oldest waiting reply started to be awaited, or last came
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
            self.send(_PING, None).add_done_callback(_retrieved)
            quiet = 0.0
        self._idle_timer = self._loop.call_later(self._idle - quiet, self._ping_if_idle)

    def send(self, command: bytes, resend: bytes | None) -> asyncio.Future[Any]:
        """Queue ``command``; its reply comes in the returned future.

        ``resend`` is the command to send again on a NOSCRIPT error (an
        append's EVALSHA), or None to get any reply, errors too, as the result.
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
        return done

    def _queue(self, command: bytes) -> None:
        if not self._out:
            self._loop.call_soon(self._flush)
        self._out.append(command)

    def _flush(self) -> None:
        out, self._out = self._out, []
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
        for reply in replies:
            try:
                done, resend = popleft()
            except IndexError:
                self.fail(ProtocolError(f"a reply to no command: {reply!r:.100}"))
                return
            if done.done():
                continue  # its caller went away
            if type(reply) is int or resend is None:
                done.set_result(reply)
            elif isinstance(reply, ReplyError):
                if resend and str(reply).startswith("NOSCRIPT"):
                    # Flushed from Redis's script cache: send the script itself,
                    # which puts it back in the cache for the EVALSHAs to come.
                    self._waiting.append((done, b""))
                    self._queue(resend.replace(_EVALSHA_HEAD, _EVAL_HEAD, 1))
                else:
                    done.set_exception(BrokerUnavailable(str(reply)))
            else:
                done.set_exception(
                    BrokerUnavailable(f"unexpected reply to an append: {reply!r:.100}")
                )

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
            self._broker._on_appender_lost(self)
        for timer in (self._timer, self._idle_timer):
            if timer is not None:
                timer.cancel()
        self._timer = self._idle_timer = None
        self._out = []
        waiting, self._waiting = self._waiting, deque()
        for done, _ in waiting:
            if not done.done():
                done.set_exception(error)

    def connection_lost(self, exc: Exception | None) -> None:
        self._close(BrokerUnavailable(str(exc) if exc else "Redis closed the append connection"))
        if not self.lost.done():
            self.lost.set_result(None)


class RedisBroker(Broker):
    kind = "redis"

    def __init__(
        self,
        url: str,
        *,
        health_check_interval: float = 10.0,
        health_check_timeout: float = 5.0,
        append_timeout: float = _REPLY_TIMEOUT_S,
    ) -> None:
        self.url = url
        self.redis: aioredis.Redis = aioredis.Redis.from_url(
            url,
            decode_responses=True,
            socket_connect_timeout=2,
            socket_timeout=5,
            health_check_interval=10,
            # A pooled connection that died with a Redis restart fails once:
            # retry briefly on a fresh one before reporting the broker down.
            retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), retries=2),
            retry_on_error=[RedisConnectionError, RedisTimeoutError],
        )
        self._endpoint = _Endpoint(url)
        # Appends on a connection of their own (see _Appender), opened when
        # needed: while one attempt is under way appends wait for it; after a
        # failed one they fail at once until its backoff has passed.
        self._append_timeout = append_timeout
        self._appender: _Appender | None = None
        self._appender_opening: asyncio.Task[_Appender | BaseException] | None = None
        self._appender_retry_at = 0.0
        self._appender_backoff = _BACKOFF_FIRST_S
        self._closing = False
        # Pub/sub on a connection of its own that never retries by itself: a
        # dropped subscription must surface here, since what was published
        # meanwhile is lost and every listener has to resync from the log.
        # A silent connection is sent a PING after health_check_interval
        # seconds and dropped if nothing comes back within health_check_timeout.
        self._health_interval = health_check_interval
        self._health_timeout = health_check_timeout
        self._listeners: dict[str, set[Listener]] = {}
        self._conn: _Subscriber | None = None
        self._reader: asyncio.Task[None] | None = None
        self.connected = asyncio.Event()  # set while subscribed

    async def start(self) -> None:
        self._reader = asyncio.create_task(self._read_loop(), name="redis-pubsub")
        self._open_appender()  # ready for the first append, if Redis is

    async def close(self) -> None:
        self._closing = True
        opening = self._appender_opening
        if opening is not None:
            opening.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await opening
        appender, self._appender = self._appender, None
        if appender is not None:
            appender.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        conn = self._drop()
        # Let the transports close their sockets while the loop still runs.
        lost = {c.lost for c in (conn, appender) if c is not None}
        if lost:
            await asyncio.wait(lost, timeout=1)
        await self.redis.aclose()

    async def ping(self) -> bool:
        try:
            return bool(await self.redis.ping())
        except (RedisError, OSError):
            return False

    # -- race logs ---------------------------------------------------------

    async def create_race(self, race_id: str, meta: dict[str, Any]) -> None:
        try:
            await self.redis.set(_key(race_id, "meta"), json.dumps(meta), ex=RACE_TTL_S)
        except (RedisError, OSError) as error:
            raise BrokerUnavailable(str(error)) from error

    async def race_meta(self, race_id: str) -> dict[str, Any] | None:
        try:
            text = await self.redis.get(_key(race_id, "meta"))
        except (RedisError, OSError) as error:
            raise BrokerUnavailable(str(error)) from error
        return None if text is None else dict(json.loads(text))

    async def append(self, race_id: str, event: dict[str, Any], condition: Condition) -> int:
        text = json.dumps(event, separators=(",", ":"))  # the script puts "seq" first
        args: list[str | int] = [
            text,
            race_channel(race_id),
            RACE_TTL_S,
            "" if condition.log_length is None else condition.log_length,
            "" if condition.player_id is None else f"p:{condition.player_id}",
            condition.player_events,
            "1" if condition.ends_race else "0",
        ]
        command = encode_command(
            "EVALSHA", _APPEND_SHA, 2, _key(race_id, "log"), _key(race_id, "state"), *args
        )
        appender = self._appender
        if appender is None:
            appender = await self._appender_ready()
        return int(await appender.send(command, command))

    async def _appender_ready(self) -> _Appender:
        """The append connection, opened now if need be; raises BrokerUnavailable."""
        if self._closing:
            raise BrokerUnavailable("the broker is closing")
        opening = self._appender_opening
        if opening is None:
            if asyncio.get_running_loop().time() < self._appender_retry_at:
                raise BrokerUnavailable("Redis is unreachable; retrying shortly")
            opening = self._open_appender()
        # Shielded: one caller going away must not cancel the others' connect.
        result = await asyncio.shield(opening)
        if isinstance(result, BaseException):
            raise BrokerUnavailable(str(result) or type(result).__name__) from result
        return result

    def _open_appender(self) -> asyncio.Task[_Appender | BaseException]:
        opening = asyncio.create_task(self._connect_appender(), name="redis-appender")
        self._appender_opening = opening
        return opening

    async def _connect_appender(self) -> _Appender | BaseException:
        """Open the append connection; its failure is returned, not raised."""
        endpoint = self._endpoint
        conn = _Appender(self, self._append_timeout, self._health_interval)
        try:
            await endpoint.open(conn)
            setup = [endpoint.hello] if endpoint.hello else []
            if endpoint.db:
                setup.append(encode_command("SELECT", endpoint.db))
            # Loaded with every connection: a new one is most often Redis
            # restarted, its script cache empty. (NOSCRIPT is handled anyway.)
            setup.append(encode_command("SCRIPT", "LOAD", _APPEND))
            replies = [conn.send(command, None) for command in setup]
            async with asyncio.timeout(self._append_timeout):
                answers = await asyncio.gather(*replies, return_exceptions=True)
            for answer in answers:
                if isinstance(answer, BaseException):  # ReplyError, or the connection lost
                    raise ConnectionError(f"Redis answered the appender: {answer}")
            if answers[-1] != _APPEND_SHA.encode():
                raise ProtocolError(f"SCRIPT LOAD answered {answers[-1]!r:.100}")
        except (OSError, ProtocolError, BrokerUnavailable) as error:
            conn.fail(error)
            self._appender_opening = None
            now = asyncio.get_running_loop().time()
            self._appender_retry_at = now + self._appender_backoff
            self._appender_backoff = min(self._appender_backoff * 2, _BACKOFF_MAX_S)
            log.warning(
                "redis append connection to %s failed (%s)",
                endpoint,
                str(error) or type(error).__name__,
            )
            return error
        except BaseException:
            conn.fail(ConnectionError("cancelled"))
            self._appender_opening = None
            raise
        self._appender_opening = None
        self._appender_backoff = _BACKOFF_FIRST_S
        if self._closing:
            conn.close()
            return BrokerUnavailable("the broker is closing")
        self._appender = conn
        return conn

    def _on_appender_lost(self, conn: _Appender) -> None:
        if conn is self._appender:
            self._appender = None
            log.warning("redis append connection to %s lost", self._endpoint)

    async def read(self, race_id: str, after: int) -> list[dict[str, Any]]:
        try:
            texts = await self.redis.lrange(_key(race_id, "log"), after, -1)
        except (RedisError, OSError) as error:
            raise BrokerUnavailable(str(error)) from error
        return [json.loads(text) for text in texts]

    # -- pub/sub -----------------------------------------------------------

    # subscribe() and unsubscribe() only write to the subscriber connection,
    # which never awaits: _connect takes its channel list and installs the
    # connection in one step, so a channel added while connecting is either
    # in the connect's SUBSCRIBE or subscribed by its own right after it.
    # With Redis down they write nothing; the reconnect subscribes them all.

    async def subscribe(self, channel: str, listener: Listener) -> None:
        listeners = self._listeners.get(channel)
        if listeners is not None:
            listeners.add(listener)
            return
        self._listeners[channel] = {listener}
        if channel != CONTROL_CHANNEL and self._conn is not None:
            self._conn.write(encode_command("SUBSCRIBE", channel))

    async def unsubscribe(self, channel: str, listener: Listener) -> None:
        listeners = self._listeners.get(channel)
        if listeners is None:
            return
        listeners.discard(listener)
        if listeners:
            return
        del self._listeners[channel]
        if channel != CONTROL_CHANNEL and self._conn is not None:
            self._conn.write(encode_command("UNSUBSCRIBE", channel))

    async def publish(self, channel: str, data: str) -> None:
        try:
            await self.redis.publish(channel, data)
        except (RedisError, OSError) as error:
            raise BrokerUnavailable(str(error)) from error

    async def _connect(self) -> _Subscriber:
        """Open the subscriber connection; return once Redis confirmed every SUBSCRIBE."""
        endpoint = self._endpoint
        conn = _Subscriber(self)
        await endpoint.open(conn)
        # No await from here to self._conn (see subscribe()).
        channels = dict.fromkeys((CONTROL_CHANNEL, *self._listeners))
        conn.awaiting = len(channels)
        conn.write(endpoint.hello + encode_command("SUBSCRIBE", *channels))
        self._conn = conn
        async with asyncio.timeout(_REPLY_TIMEOUT_S):
            await conn.subscribed
        return conn

    def _on_subscribed(self) -> None:
        self.connected.set()
        # Anything published while we were away is gone: resync.
        for listeners in list(self._listeners.values()):
            for listener in tuple(listeners):
                try:
                    listener.on_resync()
                except Exception:
                    log.exception("listener failed to resync")

    def _on_lost(self, conn: _Subscriber) -> None:
        if conn is self._conn:
            self.connected.clear()

    def _drop(self) -> _Subscriber | None:
        conn, self._conn = self._conn, None
        self.connected.clear()
        if conn is not None and conn.transport is not None:
            conn.transport.abort()
        return conn

    async def _watch(self, conn: _Subscriber) -> BaseException:
        """Wait while the connection lives; return why it ended.

        After health_check_interval seconds of silence it gets a PING (in
        subscribed mode Redis answers ``pong``); nothing back within
        health_check_timeout means a dead peer, which TCP alone would take
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
            conn.write(_PING)
            if await _ended(conn, self._health_timeout):
                return conn.lost.result()
            if conn.last_received < pinged:
                return TimeoutError(f"no answer to PING in {self._health_timeout:g} s")

    async def _read_loop(self) -> None:
        backoff = _BACKOFF_FIRST_S
        while True:
            try:
                conn = await self._connect()
                backoff = _BACKOFF_FIRST_S
                error = await self._watch(conn)
            except (OSError, ProtocolError) as failure:  # OSError: refused, timeouts, TLS
                error = failure
            except Exception as failure:  # a bug: log it, but keep pub/sub alive
                log.exception("redis pub/sub failed")
                error = failure
            log.warning(
                "redis pub/sub connection to %s lost (%s); reconnecting",
                self._endpoint,
                str(error) or type(error).__name__,
            )
            self._drop()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, _BACKOFF_MAX_S)


async def _ended(conn: _Subscriber, timeout: float) -> bool:
    """Whether the connection ends within ``timeout`` seconds."""
    await asyncio.wait({conn.lost}, timeout=timeout)
    return conn.lost.done()
