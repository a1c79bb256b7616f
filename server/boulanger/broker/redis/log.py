"""The Redis store's log: race logs in Redis lists, fan-out through Redis pub/sub.

Keys of one race share the ``{race_id}`` hash tag so that Redis Cluster
keeps them on one shard (:mod:`..cluster`). An append is one Lua script: it
checks the append's condition (see :class:`Condition`), numbers the event,
pushes it and publishes it, atomically, so the channel carries each race's
events in log order. Pub/sub is at-most-once: after a dropped connection the
broker resubscribes and tells every listener to resync from the log.

Most commands go through redis-py. Subscriptions and appends do not: they
use the raw connections of :mod:`.subscriber` and :mod:`.appender` (a subscriber whose messages are
dispatched as they arrive, every message of a read in one pass; an
appender sending ``EVALSHA`` commands, every append of a turn of the event
loop in one write, their replies matched to them in order).

With ``replica_wait`` (the ``BOULANGER_REPLICA_WAIT`` setting) an append is
acknowledged only once that many replicas have it (``WAIT``, see
:class:`~.appender.Appender`); without, once the primary has it.
"""

from __future__ import annotations

import json
import logging

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ...race.race import RaceMeta
from ..contracts import CONTROL_CHANNEL, AppendRefused, Broker, Condition, Listener
from .appender import Appends
from .endpoint import REPLY_TIMEOUT_S, Endpoint
from .errors import redis_errors
from .resp import encode_command
from .scripts import (
    APPEND_SCRIPT,
    APPEND_SHA,
    RACE_TTL_S,
    append_command,
    check_script_loaded,
    confirm_command,
    race_key,
)
from .subscriber import Subscription

log = logging.getLogger(__name__)

REPLICA_WAIT_MS = 1000  # how long an append waits for its replicas before it is refused
# redis-py's connections (the store's other parts, race metas, reads) at most;
# a command past them waits for one (POOL_WAIT_S at most). Without a cap, a
# burst of commands at once (connections opening, each counted) leaves as many
# connections open behind it.
POOL_MAX = 16
POOL_WAIT_S = 5.0


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
        # Shared with the store's other parts (:func:`boulanger.broker.redis.open_redis`).
        self.redis: aioredis.Redis = aioredis.Redis.from_pool(  # closes the pool with it
            aioredis.BlockingConnectionPool.from_url(
                url,
                max_connections=POOL_MAX,
                timeout=POOL_WAIT_S,
                decode_responses=True,
                socket_connect_timeout=2,
                socket_timeout=5,
                health_check_interval=10,
                # A pooled connection that died with a Redis restart fails once:
                # retry briefly on a fresh one before reporting the broker down.
                retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), retries=2),
                retry_on_error=[RedisConnectionError, RedisTimeoutError],
            )
        )
        self._endpoint = Endpoint(url)
        # Appends on a connection of their own, opened when needed. The script
        # is loaded with every connection: a new one is most often Redis
        # restarted, its script cache empty (NOSCRIPT is handled anyway).
        self._appends = Appends(
            self._endpoint,
            [encode_command("SCRIPT", "LOAD", APPEND_SCRIPT)],
            check_script_loaded(APPEND_SHA),
            timeout=append_timeout,
            idle=health_check_interval,
            replicas=replica_wait,
            wait_ms=min(replica_wait_ms, int(append_timeout * 500)),
            scripts=(APPEND_SCRIPT,),
        )
        # Pub/sub on a connection of its own (see Subscription). The control
        # channel is always subscribed: a RESP2 connection with no subscription
        # left would drop out of subscribed mode, and SUBSCRIBE needs a channel
        # to open with. It is a plain channel here, as every race's is.
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

    async def create_race(self, meta: RaceMeta) -> None:
        with redis_errors():
            text = json.dumps(meta.to_dict())
            await self.redis.set(race_key(meta.race_id, "meta"), text, ex=RACE_TTL_S)

    async def race_meta(self, race_id: str) -> RaceMeta | None:
        with redis_errors():
            text = await self.redis.get(race_key(race_id, "meta"))
        return None if text is None else RaceMeta.from_dict(json.loads(text))

    async def append(self, race_id: str, event: str, condition: Condition) -> int:
        command = append_command(APPEND_SHA, race_id, event, condition)
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

    async def read(self, race_id: str, after: int) -> list[str]:
        with redis_errors():
            texts = await self.redis.lrange(race_key(race_id, "log"), after, -1)
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
