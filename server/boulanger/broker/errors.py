"""Redis's errors as the rest of the server sees them: the broker is unavailable."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from redis.exceptions import RedisError

from .base import BrokerUnavailable


@contextlib.contextmanager
def redis_errors() -> Iterator[None]:
    """Raise :class:`BrokerUnavailable` for a Redis error or a lost connection inside."""
    try:
        yield
    except (RedisError, OSError) as error:
        raise BrokerUnavailable(str(error)) from error
