"""The Redis store, on one Redis (``redis://``, ``rediss://``, ``unix://``) or a Redis
Cluster (``redis-cluster://``), and what it is made of.

- :mod:`.log`: :class:`RedisBroker`, the race logs and pub/sub on one Redis;
  :mod:`.cluster`: :class:`RedisClusterBroker`, the same on a cluster, each race on its shard.
- :mod:`.endpoint`: where a connection goes (host, unix socket, TLS, AUTH).
- :mod:`.subscriber`: the pub/sub connection, kept open and resynced.
- :mod:`.appender`: the append connection, commands pipelined.
- :mod:`.scripts`: the Lua scripts of a race's log and their commands.
- :mod:`.resp`: the RESP parser; :mod:`.slots`: a cluster's hash slots.
- :mod:`.kv`, :mod:`.daily`, :mod:`.limits`: the store's other parts, on redis-py's
  client (the broker's :attr:`~RedisBroker.redis`).
- :mod:`.errors`: Redis's errors as the store's (``BrokerUnavailable``).
"""

from __future__ import annotations

from ..contracts import Store
from .cluster import RedisClusterBroker
from .daily import RedisDailyStore
from .kv import RedisKeyValue
from .limits import RedisLimits
from .log import POOL_MAX, REPLICA_WAIT_MS, RedisBroker
from .scripts import APPEND_SHA, RACE_TTL_S, race_key

__all__ = [
    "APPEND_SHA",
    "POOL_MAX",
    "RACE_TTL_S",
    "REPLICA_WAIT_MS",
    "RedisBroker",
    "RedisClusterBroker",
    "RedisDailyStore",
    "RedisKeyValue",
    "RedisLimits",
    "open_redis",
    "open_redis_cluster",
    "race_key",
]


def open_redis(url: str, *, replica_wait: int = 0, retention_days: int) -> Store:
    """The store on the one Redis of ``url``."""
    broker = RedisBroker(url, replica_wait=replica_wait)
    client = broker.redis
    return Store(
        broker, RedisKeyValue(client), RedisDailyStore(client, retention_days), RedisLimits(client)
    )


def open_redis_cluster(url: str, *, replica_wait: int = 0, retention_days: int) -> Store:
    """The store on the Redis Cluster of ``url`` (some of its nodes)."""
    broker = RedisClusterBroker(url, replica_wait=replica_wait)
    client = broker.redis
    # Sharded pub/sub for the live leaderboards, as the broker subscribes.
    daily = RedisDailyStore(client, retention_days, sharded=True)
    return Store(broker, RedisKeyValue(client), daily, RedisLimits(client))
