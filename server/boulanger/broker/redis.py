"""The Redis broker: race logs in Redis lists, fan-out through Redis pub/sub.

Keys of one race share the ``{race_id}`` hash tag so that Redis Cluster
keeps them on one shard. An append is one Lua script: it checks the
append's condition (see :class:`Condition`), numbers the event, pushes it and
publishes it, atomically, so the channel carries each race's events in log
order. Pub/sub is at-most-once: after a dropped
connection the broker resubscribes and tells every listener to resync from
the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import defaultdict
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .base import Broker, BrokerUnavailable, Condition, Listener, race_channel

log = logging.getLogger(__name__)

RACE_TTL_S = 7 * 24 * 3600
APPEND_BATCH = 256  # appends in one pipeline at most

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


def _key(race_id: str, part: str) -> str:
    return f"bk:race:{{{race_id}}}:{part}"


class RedisBroker(Broker):
    kind = "redis"

    def __init__(self, url: str) -> None:
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
        # Pub/sub on a client that never retries by itself: a dropped
        # subscription must surface here, since what was published meanwhile
        # is lost and every listener has to resync from the log.
        self._subscriber: aioredis.Redis = aioredis.Redis.from_url(
            url,
            decode_responses=True,
            socket_connect_timeout=2,
            health_check_interval=10,
            retry=Retry(ExponentialBackoff(), retries=0),
        )
        self._append = self.redis.register_script(_APPEND)
        self._pending: list[tuple[list[str], list[str | int], asyncio.Future[int]]] = []
        self._appender: asyncio.Task[None] | None = None
        self._listeners: dict[str, set[Listener]] = defaultdict(set)
        self._pubsub: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._subscribe_lock = asyncio.Lock()
        self.connected = asyncio.Event()

    async def start(self) -> None:
        self._reader = asyncio.create_task(self._read_loop(), name="redis-pubsub")

    async def close(self) -> None:
        if self._appender is not None:
            self._appender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._appender
        for _, _, done in self._pending:
            if not done.done():
                done.set_exception(BrokerUnavailable("the broker is closing"))
        self._pending.clear()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        await self._drop_pubsub()
        await self._subscriber.aclose()
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
        keys = [_key(race_id, "log"), _key(race_id, "state")]
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._pending.append((keys, args, done))
        if self._appender is None or self._appender.done():
            self._appender = asyncio.create_task(self._append_loop())
        return await done

    async def _append_loop(self) -> None:
        """Send the appends waiting at each moment as one pipeline.

        One round trip carries every append that arrived while the previous
        one was in flight: an awaited script call per action made the Redis
        client the bottleneck (docs/performance.md).
        """
        while self._pending:
            batch, self._pending = self._pending[:APPEND_BATCH], self._pending[APPEND_BATCH:]
            results: list[Any]
            try:
                async with self.redis.pipeline(transaction=False) as pipe:
                    for keys, args, _ in batch:
                        await self._append(keys=keys, args=args, client=pipe)
                    results = await pipe.execute(raise_on_error=False)
            except (RedisError, OSError) as error:
                results = [error] * len(batch)
            for (_, _, done), result in zip(batch, results, strict=True):
                if done.done():
                    continue  # its caller went away
                if isinstance(result, BaseException):
                    done.set_exception(BrokerUnavailable(str(result)))
                else:
                    done.set_result(int(result))

    async def read(self, race_id: str, after: int) -> list[dict[str, Any]]:
        try:
            texts = await self.redis.lrange(_key(race_id, "log"), after, -1)
        except (RedisError, OSError) as error:
            raise BrokerUnavailable(str(error)) from error
        return [json.loads(text) for text in texts]

    # -- pub/sub -----------------------------------------------------------

    async def subscribe(self, channel: str, listener: Listener) -> None:
        # Under the lock that (re)connecting holds too: a channel added while
        # the read loop connects is either in its SUBSCRIBE or subscribed here.
        async with self._subscribe_lock:
            first = channel not in self._listeners
            self._listeners[channel].add(listener)
            if first and self._pubsub is not None:
                with contextlib.suppress(RedisError, OSError):
                    await self._pubsub.subscribe(channel)  # on failure the read loop resubscribes

    async def unsubscribe(self, channel: str, listener: Listener) -> None:
        async with self._subscribe_lock:
            listeners = self._listeners.get(channel)
            if listeners is None:
                return
            listeners.discard(listener)
            if not listeners:
                del self._listeners[channel]
                if self._pubsub is not None:
                    with contextlib.suppress(RedisError, OSError):
                        await self._pubsub.unsubscribe(channel)

    async def publish(self, channel: str, data: str) -> None:
        try:
            await self.redis.publish(channel, data)
        except (RedisError, OSError) as error:
            raise BrokerUnavailable(str(error)) from error

    async def _connect_pubsub(self) -> None:
        pubsub = self._subscriber.pubsub(ignore_subscribe_messages=True)
        # A channel must be subscribed to for the connection to open.
        await pubsub.subscribe("bk:control", *self._listeners)
        self._pubsub = pubsub

    async def _drop_pubsub(self) -> None:
        pubsub, self._pubsub = self._pubsub, None
        self.connected.clear()
        if pubsub is not None:
            with contextlib.suppress(Exception):
                await pubsub.aclose()

    async def _read_loop(self) -> None:
        backoff = 0.05
        while True:
            try:
                if self._pubsub is None:
                    async with self._subscribe_lock:
                        await self._connect_pubsub()
                    self.connected.set()
                    backoff = 0.05
                    # Anything published while we were away is gone: resync.
                    for listeners in list(self._listeners.values()):
                        for listener in tuple(listeners):
                            listener.on_resync()
                message = await self._pubsub.get_message(timeout=1.0)
                if message is not None and message.get("type") == "message":
                    for listener in tuple(self._listeners.get(message["channel"], ())):
                        try:
                            listener.on_message(message["data"])
                        except Exception:
                            log.exception("listener failed on %s", message["channel"])
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as error:
                log.warning("redis pub/sub connection lost (%s); reconnecting", error)
                await self._drop_pubsub()
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)
