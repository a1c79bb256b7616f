"""Where a server keeps its races and daily challenge, chosen by URL."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Broker
from .daily import DailyStore

DEFAULT_RETENTION_DAYS = 90


@dataclass(frozen=True, slots=True)
class Store:
    """A broker and the daily store kept with it (in the same place)."""

    broker: Broker
    daily: DailyStore


def open_broker(url: str | None, replica_wait: int = 0) -> Broker:
    """A broker chosen by URL: ``memory://`` (the default), ``sqlite:///path/to/file.db``,
    ``redis://host:port/db`` or ``redis-cluster://host:port[,host:port...]``.

    ``replica_wait``: replicas an append must reach before it is acknowledged
    (Redis brokers only; ``WAIT``).
    """
    if not url or url.startswith("memory:"):
        from .memory import MemoryBroker

        return MemoryBroker()
    if url.startswith(("redis://", "rediss://", "unix://")):
        from .redis import RedisBroker

        return RedisBroker(url, replica_wait=replica_wait)
    if url.startswith("redis-cluster://"):
        from .cluster import RedisClusterBroker

        return RedisClusterBroker(url, replica_wait=replica_wait)
    if url.startswith("sqlite:"):
        from .sqlite import SqliteBroker

        return SqliteBroker(url)
    raise ValueError(
        f"unknown broker URL {url!r}: use sqlite:///path/to/file.db, memory://, "
        "redis://host:port or redis-cluster://host:port[,host:port...]"
    )


def open_store(
    url: str | None, replica_wait: int = 0, retention_days: int = DEFAULT_RETENTION_DAYS
) -> Store:
    """The broker of ``url`` (see :func:`open_broker`) and its daily store."""
    broker = open_broker(url, replica_wait)
    return Store(broker, broker.daily_store(retention_days))
