"""The Redis store's key-value part (accounts' keys): one command on one key at a time.

Each operation touches one key (or two of one hash tag), so a Redis Cluster
routes it; a command whose answer may be lost is sent again only when that
is safe (a read, an overwrite, or a write marked done by its writer).
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from ..contracts import BrokerUnavailable, KeyValue
from .errors import Client, redis_client_errors

# Set KEYS[1] to ARGV[2] if it still holds ARGV[1] (ARGV[3] = "0": if it is absent),
# and mark the write done in KEYS[2], a key of this writer's own token (same hash
# tag). A client that resends the script after a lost answer finds its mark
# there: its write was done, and is not done twice. The mark is the token's own
# key, not one key "last writer" that the next writer overwrites: a resend that
# comes after another writer's write must still find it.
_COMPARE_AND_SET = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 1 end
local current = redis.call('GET', KEYS[1])
if ARGV[3] == '0' then
  if current then return 0 end
elseif current ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], '1', 'EX', ARGV[4])
return 1
"""

# How long a writer's mark lasts: far longer than any resend takes.
WRITER_MARK_S = 60

# Tries of one command whose answer may be lost: the first and four resends
# (twelve updates at once on a cluster needed two, once in fifteen runs).
TRIES = 5


# Set member ARGV[1]'s score in zset KEYS[1] to ARGV[2] unless the hash KEYS[2]
# (same hash tag) notes a version of it at least ARGV[3]; a resend is a no-op.
_ZSET_IF_NEWER = """
local seen = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '-1')
if seen >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
"""


def writer_mark(key: str, token: str) -> str:
    """The key that marks one writer's update of ``key`` done: in ``key``'s hash
    tag, so a cluster keeps both on one shard and one script may touch both."""
    tag, closed, _ = key.partition("{")[2].partition("}")
    if not tag or not closed:
        raise ValueError(f"key {key!r} has no hash tag")
    return f"{key}:writer:{token}"


class RedisKeyValue(KeyValue):
    """In Redis; each operation is one command on one key, so a cluster routes it."""

    def __init__(self, redis: Client) -> None:
        """``redis``: the store's redis-py client (a cluster's, or one Redis's)."""
        self.redis = redis

    async def update(self, key: str, change: Callable[[str | None], str]) -> str:
        # Optimistic: read, change, and write only if the key has not moved since
        # (a script on one key's hash tag, so a cluster routes it); else read again.
        while True:
            current = await self._again(self.redis.get, key)
            value = change(None if current is None else str(current))
            present = "0" if current is None else "1"
            mark = writer_mark(key, secrets.token_hex(8))
            # EVAL, not EVALSHA: a short script, and no SCRIPT LOAD sent to every
            # node of a cluster on first use. A resend carries the same mark, so
            # it cannot apply the change twice.
            done = await self._again(
                self.redis.eval,
                _COMPARE_AND_SET,
                2,
                key,
                mark,
                current or "",
                value,
                present,
                WRITER_MARK_S,
            )
            if done:
                return value

    async def _again(self, command: Callable[..., Awaitable[Any]], *args: Any, **kw: Any) -> Any:
        """Run ``command(*args, **kw)``, and resend it when its answer is lost; only for
        commands that are safe to run twice (a read, an overwrite, or a marked write)."""
        for attempt in range(1, TRIES + 1):
            try:
                with redis_client_errors():
                    return await command(*args, **kw)
            except BrokerUnavailable:
                if attempt == TRIES:
                    raise
                await asyncio.sleep(0.05 * attempt)
        raise AssertionError("unreachable")

    async def get(self, key: str) -> str | None:
        found = await self._again(self.redis.get, key)
        return None if found is None else str(found)

    async def set(self, key: str, value: str, ttl_s: float | None = None) -> None:
        px = None if ttl_s is None else int(ttl_s * 1000)
        await self._again(self.redis.set, key, value, px=px)

    async def set_nx(self, key: str, value: str, ttl_s: float | None = None) -> bool:
        # Not resent: after a lost answer a resend would find its own write.
        px = None if ttl_s is None else int(ttl_s * 1000)
        with redis_client_errors():
            return bool(await self.redis.set(key, value, px=px, nx=True))

    async def delete(self, key: str) -> None:
        await self._again(self.redis.delete, key)

    async def incr(self, key: str, ttl_s: float) -> int:
        with redis_client_errors():
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.incr(key)
                pipe.pexpire(key, int(ttl_s * 1000), nx=True)
                count, _ = await pipe.execute()
        return int(count)

    async def push(self, key: str, value: str, cap: int) -> None:
        with redis_client_errors():
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.lpush(key, value)
                pipe.ltrim(key, 0, cap - 1)
                await pipe.execute()

    async def items(self, key: str, limit: int) -> list[str]:
        return [str(v) for v in await self._again(self.redis.lrange, key, 0, limit - 1)]

    async def zset(self, key: str, member: str, score: float, version: int) -> None:
        # A resend is harmless: the version makes the second write a no-op.
        await self._again(
            self.redis.eval, _ZSET_IF_NEWER, 2, key, f"{key}:versions", member, score, version
        )

    async def zrem(self, key: str, member: str) -> None:
        with redis_client_errors():
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.zrem(key, member)
                pipe.hdel(f"{key}:versions", member)
                await pipe.execute()

    async def ztop(self, key: str, limit: int) -> list[tuple[str, float]]:
        found = await self._again(self.redis.zrevrange, key, 0, limit - 1, withscores=True)
        return [(str(member), float(score)) for member, score in found]
