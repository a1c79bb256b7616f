"""The Redis store's limits: counts every process sharing the Redis sees, each one script.

Layout, for a key ``K`` (``conns:{address}``, ``created:{address}``: the
caller's key names its hash tag, so a cluster keeps each count on one shard)::

    bk:K   zset   hits: member -> when counted (ms); leases: member -> when it expires

The time is Redis's own (``TIME``), so that the processes' clocks do not matter.
"""

from __future__ import annotations

import itertools
import secrets

from ..contracts import Lease, Limits
from .errors import Client, redis_client_errors

_NOW = "local t = redis.call('TIME') local now = t[1] * 1000 + math.floor(t[2] / 1000)\n"

# KEYS: the key's hits. ARGV: limit, window ms, member.
HIT = (
    _NOW
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""
)

# KEYS: the key's leases (member -> expiry). ARGV: limit, lease ms, member.
ENTER = (
    _NOW
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""
)

# KEYS: the key's leases. ARGV: lease ms, member (renewed only if still there).
RENEW = (
    _NOW
    + """
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return 1
"""
)

RENEW_BATCH = 512  # leases renewed per pipeline


def stored_key(key: str) -> str:
    """The Redis key of a limit's key."""
    return f"bk:{key}"


class RedisLimits(Limits):
    """Hits and leases in sorted sets, each decision one script run atomically."""

    def __init__(self, redis: Client) -> None:
        """``redis``: the store's redis-py client (a cluster's, or one Redis's)."""
        self.redis = redis
        self._hit = redis.register_script(HIT)
        self._enter = redis.register_script(ENTER)
        # Names each hit: this process's prefix, and a number.
        self._prefix = f"{secrets.token_hex(6)}:h"
        self._ids = itertools.count(1)

    async def hit(self, key: str, limit: int, window_s: float) -> bool:
        member = f"{self._prefix}{next(self._ids)}"
        with redis_client_errors():
            counted = await self._hit(
                keys=[stored_key(key)], args=[limit, int(window_s * 1000), member]
            )
        return bool(int(counted))

    async def enter(self, key: str, limit: int, lease_s: float, member: str) -> Lease | None:
        with redis_client_errors():
            admitted = await self._enter(
                keys=[stored_key(key)], args=[limit, int(lease_s * 1000), member]
            )
        return Lease(key, member) if int(admitted) else None

    async def leave(self, lease: Lease) -> None:
        with redis_client_errors():
            await self.redis.zrem(stored_key(lease.key), lease.member)

    async def renew(self, leases: list[Lease], lease_s: float) -> None:
        lease_ms = int(lease_s * 1000)
        for start in range(0, len(leases), RENEW_BATCH):
            with redis_client_errors():
                # EVAL queued on the pipeline (it routes each by its key on a
                # cluster), and the whole batch sent and awaited at once.
                pipe = self.redis.pipeline(transaction=False)
                for lease in leases[start : start + RENEW_BATCH]:
                    pipe.eval(RENEW, 1, stored_key(lease.key), lease_ms, lease.member)
                await pipe.execute()
