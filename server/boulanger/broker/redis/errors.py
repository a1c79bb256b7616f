"""Redis's errors as the rest of the server sees them: the broker is unavailable."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisError

from ..contracts import BrokerUnavailable

# The redis-py client of a store's key-value, daily and limits parts: one Redis's
# (with its connection pool) or a cluster's.
Client = Redis | RedisCluster


@contextlib.contextmanager
def redis_errors() -> Iterator[None]:
    """Raise :class:`BrokerUnavailable` for a Redis error or a lost connection inside."""
    try:
        yield
    except (RedisError, OSError) as error:
        raise BrokerUnavailable(str(error)) from error


@contextlib.contextmanager
def redis_client_errors() -> Iterator[None]:
    """:func:`redis_errors` around calls to redis-py's clients, and one error more.

    redis-py's cluster client (8.1) sometimes raises AttributeError ("'NoneType'
    object has no attribute 'writelines'") when many commands at once open
    connections: one task's connection is closed under another's handshake. The
    command was then not sent, or its answer lost: the store is unavailable for it.
    Kept to the blocks that call the client: elsewhere an AttributeError is a bug to see.
    """
    with redis_errors():
        try:
            yield
        except AttributeError as error:
            raise OSError(f"redis client: {error}") from error
