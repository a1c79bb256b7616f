"""Where a server keeps its races, accounts, daily challenge and limits: one store, by URL.

Each URL scheme names a backend, one folder of this package holding the
store's four parts (:mod:`.contracts`); adding a store is adding a folder
and its schemes here.
"""

from __future__ import annotations

import importlib
from typing import Protocol

from .contracts import Broker, Store

DEFAULT_RETENTION_DAYS = 90


class Opener(Protocol):
    def __call__(self, url: str, *, replica_wait: int, retention_days: int) -> Store: ...


# scheme -> (module of the backend, its function that opens a store)
BACKENDS: dict[str, tuple[str, str]] = {
    "memory": (".memory", "open_memory"),
    "sqlite": (".sqlite", "open_sqlite"),
    "redis": (".redis", "open_redis"),
    "rediss": (".redis", "open_redis"),
    "unix": (".redis", "open_redis"),
    "redis-cluster": (".redis", "open_redis_cluster"),
}


def open_store(
    url: str | None, replica_wait: int = 0, retention_days: int = DEFAULT_RETENTION_DAYS
) -> Store:
    """The store of ``url``: ``memory://`` (the default), ``sqlite:///path/to/file.db``,
    ``redis://host:port/db`` or ``redis-cluster://host:port[,host:port...]``.

    ``replica_wait``: replicas an append must reach before it is acknowledged
    (Redis only; ``WAIT``). ``retention_days``: how long the daily challenge's
    days are kept.
    """
    scheme = (url or "memory://").partition(":")[0]
    backend = BACKENDS.get(scheme)
    if backend is None:
        raise ValueError(
            f"unknown broker URL {url!r}: use sqlite:///path/to/file.db, memory://, "
            "redis://host:port or redis-cluster://host:port[,host:port...]"
        )
    # Imported when asked for: a memory store never loads redis-py.
    module, name = backend
    opener: Opener = getattr(importlib.import_module(module, __package__), name)
    return opener(url or "memory://", replica_wait=replica_wait, retention_days=retention_days)


def open_broker(url: str | None, replica_wait: int = 0) -> Broker:
    """The broker of :func:`open_store`'s store, for who needs the race logs alone."""
    return open_store(url, replica_wait).broker
