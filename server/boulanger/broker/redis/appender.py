"""A node's append connection: commands pipelined, replies matched to them in order.

:class:`Appender` sends every command of a turn of the event loop in one
write. :class:`Appends` keeps one open (on demand, with a backoff after a
failure). With a replica wait, every write that carries appends ends with
``WAIT``, and an append is answered only once that ``WAIT`` reports enough
replicas.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections import deque
from collections.abc import Callable
from typing import Any, cast

from ..contracts import BrokerUnavailable
from .endpoint import BACKOFF_FIRST_S, BACKOFF_MAX_S, PING, REPLY_TIMEOUT_S, Endpoint
from .resp import ReplyError, RespReader, UnexpectedReply, encode_command

log = logging.getLogger(__name__)

APPENDS_IN_FLIGHT = 4096  # sent and not yet answered, at most; beyond: BrokerUnavailable
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
        except UnexpectedReply as error:
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
                self.fail(UnexpectedReply(f"a reply to no command: {reply!r:.100}"))
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
        """Close the connection (or the attempt to open one); later appends are refused."""
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
        except (OSError, UnexpectedReply, BrokerUnavailable) as error:
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
        """A connection ended: the next append opens a new one."""
        if conn is self.conn:
            self.conn = None
            log.warning("redis append connection to %s lost", self.endpoint)
            if self._on_down is not None and not self._closing:
                self._on_down()
