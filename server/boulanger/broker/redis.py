"""The Redis broker: race logs in Redis lists, fan-out through Redis pub/sub.

Keys of one race share the ``{race_id}`` hash tag so that Redis Cluster
keeps them on one shard (:mod:`.cluster`). An append is one Lua script: it
checks the append's condition (see :class:`Condition`), numbers the event,
pushes it and publishes it, atomically, so the channel carries each race's
events in log order. Pub/sub is at-most-once: after a dropped connection the
broker resubscribes and tells every listener to resync from the log.

Most commands go through redis-py. Subscriptions and appends do not: they
use the raw connections of :mod:`.node` (a subscriber whose messages are
dispatched as they arrive, every message of a read in one pass; an
appender sending ``EVALSHA`` commands, every append of a turn of the event
loop in one write, their replies matched to them in order).

With ``replica_wait`` (the ``BOULANGER_REPLICA_WAIT`` setting) an append is
acknowledged only once that many replicas have it (``WAIT``, see
:class:`~.node.Appender`); without, once the primary has it.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ..codec import seq_of
from .base import AppendRefused, Broker, Condition, Listener, race_channel
from .daily import DailyStore, RedisDailyStore
from .errors import redis_errors
from .node import REPLY_TIMEOUT_S, Appends, Endpoint, Subscription
from .resp import ProtocolError, encode_command

log = logging.getLogger(__name__)

RACE_TTL_S = 7 * 24 * 3600
REPLICA_WAIT_MS = 1000  # how long an append waits for its replicas before it is refused

# Always subscribed: a RESP2 connection with no subscription left would drop
# out of subscribed mode, and SUBSCRIBE needs a channel to open with.
CONTROL_CHANNEL = "bk:control"


def append_script(publish: str) -> str:
    """The append script, publishing with ``PUBLISH`` or (Redis Cluster) ``SPUBLISH``.

    KEYS: the log (a list), the race's state (a hash: "over", and "p:<id>"
    holding each player's number of events). ARGV: event JSON without its
    seq, channel, ttl, expected log length or "", player field or "",
    expected player events, "1" when the event ends the race.
    """
    return f"""
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
local text = '{{"seq":' .. seq .. ',' .. string.sub(ARGV[1], 2)
redis.call('RPUSH', KEYS[1], text)
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[3])
redis.call('{publish}', ARGV[2], text)
return seq
"""


_APPEND = append_script("PUBLISH")
_APPEND_SHA = hashlib.sha1(_APPEND.encode()).hexdigest()

# Whether an event is in the log at its seq; if so, a write (the log's TTL
# renewed) that a WAIT after it can only see replicated once the event is.
# KEYS: the log; ARGV: seq, the event's text as logged, ttl.
CONFIRM = """
if redis.call('LINDEX', KEYS[1], tonumber(ARGV[1]) - 1) ~= ARGV[2] then return 0 end
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""


def _key(race_id: str, part: str) -> str:
    return f"bk:race:{{{race_id}}}:{part}"


def append_command(sha: str, race_id: str, text: str, condition: Condition) -> bytes:
    """``EVALSHA`` of the append script (whose sha is ``sha``) for one event's text."""
    # The script puts "seq" first, as codec.with_seq does.
    return encode_command(
        "EVALSHA",
        sha,
        2,
        _key(race_id, "log"),
        _key(race_id, "state"),
        text,
        race_channel(race_id),
        RACE_TTL_S,
        "" if condition.log_length is None else condition.log_length,
        "" if condition.player_id is None else f"p:{condition.player_id}",
        condition.player_events,
        "1" if condition.ends_race else "0",
    )


def confirm_command(race_id: str, text: str) -> bytes:
    """``CONFIRM`` for a logged event's text (as :meth:`Broker.read` returned it)."""
    seq = seq_of(text)
    assert seq is not None, "not a logged event"
    return encode_command("EVAL", CONFIRM, 1, _key(race_id, "log"), seq, text, RACE_TTL_S)


def check_script_loaded(sha: str) -> Any:
    """An :class:`~.node.Appends` check: SCRIPT LOAD answered the script's sha."""

    def check(answers: list[Any]) -> None:
        if answers[-1] != sha.encode():
            raise ProtocolError(f"SCRIPT LOAD answered {answers[-1]!r:.100}")

    return check


class RedisBroker(Broker):
    """The broker on one Redis: logs in lists, appends by script, fan-out by pub/sub."""

    kind = "redis"

    def __init__(
        self,
        url: str,
        *,
        health_check_interval: float = 10.0,
        health_check_timeout: float = 5.0,
        append_timeout: float = REPLY_TIMEOUT_S,
        replica_wait: int = 0,
        replica_wait_ms: int = REPLICA_WAIT_MS,
    ) -> None:
        self.url = url
        self.replica_wait = replica_wait
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
        self._endpoint = Endpoint(url)
        # Appends on a connection of their own, opened when needed. The script
        # is loaded with every connection: a new one is most often Redis
        # restarted, its script cache empty (NOSCRIPT is handled anyway).
        self._appends = Appends(
            self._endpoint,
            [encode_command("SCRIPT", "LOAD", _APPEND)],
            check_script_loaded(_APPEND_SHA),
            timeout=append_timeout,
            idle=health_check_interval,
            replicas=replica_wait,
            wait_ms=min(replica_wait_ms, int(append_timeout * 500)),
            scripts=(_APPEND,),
        )
        # Pub/sub on a connection of its own (see Subscription).
        self._listeners: dict[str, set[Listener]] = {}
        self._subscription = Subscription(
            self._endpoint,
            self._listeners,
            always=(CONTROL_CHANNEL,),
            health_interval=health_check_interval,
            health_timeout=health_check_timeout,
        )
        self.connected = self._subscription.connected  # set while subscribed

    async def start(self) -> None:
        self._subscription.start()
        self._appends.open()  # ready for the first append, if Redis is

    async def close(self) -> None:
        await self._appends.close()
        await self._subscription.close()
        await self.redis.aclose()

    async def ping(self) -> bool:
        try:
            return bool(await self.redis.ping())
        except (RedisError, OSError):
            return False

    # -- race logs ---------------------------------------------------------

    async def create_race(self, race_id: str, meta: dict[str, Any]) -> None:
        with redis_errors():
            await self.redis.set(_key(race_id, "meta"), json.dumps(meta), ex=RACE_TTL_S)

    async def race_meta(self, race_id: str) -> dict[str, Any] | None:
        with redis_errors():
            text = await self.redis.get(_key(race_id, "meta"))
        return None if text is None else dict(json.loads(text))

    async def append(self, race_id: str, event: str, condition: Condition) -> int:
        command = append_command(_APPEND_SHA, race_id, event, condition)
        appender = self._appends.conn
        if appender is None:
            appender = await self._appends.ready()
        seq = int(await appender.send(command, command))
        if not seq:
            raise AppendRefused(f"race {race_id}: the log has moved on")
        return seq

    async def confirm(self, race_id: str, event: str) -> bool:
        if not self.replica_wait:
            return True
        appender = self._appends.conn or await self._appends.ready()
        return bool(await appender.send(confirm_command(race_id, event), b""))

    def shared_client(self) -> Any:
        return self.redis

    def daily_store(self, retention_days: int) -> DailyStore:
        return RedisDailyStore(self.redis, retention_days)

    async def read(self, race_id: str, after: int) -> list[str]:
        with redis_errors():
            texts = await self.redis.lrange(_key(race_id, "log"), after, -1)
        return [str(text) for text in texts]  # decode_responses: str already

    # -- pub/sub -----------------------------------------------------------

    async def subscribe(self, channel: str, listener: Listener) -> None:
        listeners = self._listeners.get(channel)
        if listeners is not None:
            listeners.add(listener)
            return
        self._listeners[channel] = {listener}
        self._subscription.add(channel)

    async def unsubscribe(self, channel: str, listener: Listener) -> None:
        listeners = self._listeners.get(channel)
        if listeners is None:
            return
        listeners.discard(listener)
        if listeners:
            return
        del self._listeners[channel]
        self._subscription.remove(channel)

    async def publish(self, channel: str, data: str) -> None:
        with redis_errors():
            await self.redis.publish(channel, data)
