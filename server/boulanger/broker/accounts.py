"""Accounts, sessions, histories and ratings in the broker's store.

Every operation here is one key at a time (no transaction spans two keys), so
the same code runs on every broker through a small key-value shell
(:class:`KeyValue`): the memory broker's dictionaries, the SQLite broker's
file (:mod:`.sqlite_accounts`), Redis, and Redis Cluster. An account's own
keys share one hash tag (``{ID}``), so a cluster keeps them on one shard::

    bk:acct:{ID}               string  account JSON: name, password hash, passkeys, daily key
    bk:acct:{ID}:history       list    race results, newest first (RaceResult JSON)
    bk:acct:{ID}:rating:C      string  rating JSON for races with C cells
    bk:acct:{ID}:rating:C:writer:T  string  marks writer T's update done (Redis); expires
    bk:name:{K}                string  account id of the name whose look-alike key is K
    bk:cred:{C}                string  account id of passkey credential C
    bk:claim:{H}               string  account id that claimed the guest key whose hash is H
    bk:sess:{S}                string  session JSON (account id), S the session id's hash; expires
    bk:chal:{S}                string  a WebAuthn ceremony's challenge; expires in minutes
    bk:fail:{kind}:{K}         counter failed sign-ins of an account name or address; expires
    bk:race:{R}:accounts       hash-ish player id -> account id of a race's signed-in players
    bk:rated:{R}               string  set once a race's ratings and histories are counted
    bk:ratings:{C}             zset    account id -> shown rating, for the top list
    bk:ratings:{C}:versions    hash    account id -> version of the rating the top list shows

A session is found by the hash of its id, so a leaked store leaks no
cookie; deleting an account deletes its record, which ends its sessions
(their account is gone) without listing them.
"""

from __future__ import annotations

import abc
import asyncio
import json
import secrets
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from typing import Any

from .base import BrokerUnavailable
from .errors import redis_client_errors


class KeyValue(abc.ABC):
    """The few single-key operations accounts need, on one broker's store."""

    @abc.abstractmethod
    async def get(self, key: str) -> str | None: ...

    @abc.abstractmethod
    async def set(self, key: str, value: str, ttl_s: float | None = None) -> None: ...

    @abc.abstractmethod
    async def set_nx(self, key: str, value: str, ttl_s: float | None = None) -> bool:
        """Set ``key`` unless it is there: True when this call set it."""

    @abc.abstractmethod
    async def update(self, key: str, change: Callable[[str | None], str]) -> str:
        """Set ``key`` to ``change(current)`` atomically: no other write comes in between.

        ``change`` may run more than once (Redis retries when the key moved) and
        must not await or have side effects. Answers the value written.
        """

    @abc.abstractmethod
    async def delete(self, key: str) -> None: ...

    @abc.abstractmethod
    async def incr(self, key: str, ttl_s: float) -> int:
        """Add one; the key expires ``ttl_s`` after its first increment."""

    @abc.abstractmethod
    async def push(self, key: str, value: str, cap: int) -> None:
        """Put ``value`` first in the list at ``key``, keeping its ``cap`` newest."""

    @abc.abstractmethod
    async def items(self, key: str, limit: int) -> list[str]:
        """The list's first ``limit`` values (newest first)."""

    @abc.abstractmethod
    async def zset(self, key: str, member: str, score: float, version: int) -> None:
        """Set ``member``'s score, unless a write of a version at least as new is
        there already: of two writers racing, the newer value stays, whichever
        of them writes last."""

    @abc.abstractmethod
    async def zrem(self, key: str, member: str) -> None: ...

    @abc.abstractmethod
    async def ztop(self, key: str, limit: int) -> list[tuple[str, float]]:
        """The members with the highest scores, highest first."""


# -- in memory ---------------------------------------------------------------


class MemoryKeyValue(KeyValue):
    """Kept by the memory broker: shared by its users, lost with the process."""

    def __init__(self) -> None:
        self.values: dict[str, tuple[str, float | None]] = {}
        self.lists: dict[str, list[str]] = defaultdict(list)
        self.zsets: dict[str, dict[str, float]] = defaultdict(dict)
        self.versions: dict[str, dict[str, int]] = defaultdict(dict)

    def _live(self, key: str) -> str | None:
        found = self.values.get(key)
        if found is None:
            return None
        value, expires = found
        if expires is not None and expires <= time.monotonic():
            del self.values[key]
            return None
        return value

    async def get(self, key: str) -> str | None:
        return self._live(key)

    async def set(self, key: str, value: str, ttl_s: float | None = None) -> None:
        self.values[key] = (value, None if ttl_s is None else time.monotonic() + ttl_s)

    async def set_nx(self, key: str, value: str, ttl_s: float | None = None) -> bool:
        if self._live(key) is not None:
            return False
        await self.set(key, value, ttl_s)
        return True

    async def update(self, key: str, change: Callable[[str | None], str]) -> str:
        # No await between the read and the write: nothing else runs in between.
        value = change(self._live(key))
        self.values[key] = (value, None)
        return value

    async def delete(self, key: str) -> None:
        self.values.pop(key, None)
        self.lists.pop(key, None)
        self.zsets.pop(key, None)
        self.versions.pop(key, None)

    async def incr(self, key: str, ttl_s: float) -> int:
        current = self._live(key)
        if current is None:
            await self.set(key, "1", ttl_s)
            return 1
        expires = self.values[key][1]
        self.values[key] = (str(int(current) + 1), expires)
        return int(current) + 1

    async def push(self, key: str, value: str, cap: int) -> None:
        found = self.lists[key]
        found.insert(0, value)
        del found[cap:]

    async def items(self, key: str, limit: int) -> list[str]:
        return list(self.lists.get(key, [])[:limit])

    async def zset(self, key: str, member: str, score: float, version: int) -> None:
        if self.versions[key].get(member, -1) >= version:
            return
        self.versions[key][member] = version
        self.zsets[key][member] = score

    async def zrem(self, key: str, member: str) -> None:
        self.zsets.get(key, {}).pop(member, None)
        self.versions.get(key, {}).pop(member, None)

    async def ztop(self, key: str, limit: int) -> list[tuple[str, float]]:
        found = self.zsets.get(key, {})
        return sorted(found.items(), key=lambda item: (-item[1], item[0]))[:limit]


# -- in Redis (and Redis Cluster: one key per command) -----------------------------


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

    def __init__(self, redis: Any) -> None:
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


# -- accounts on top -------------------------------------------------------------


def _load(text: str | None) -> dict[str, Any] | None:
    return None if text is None else dict(json.loads(text))


def _version(rating: dict[str, Any]) -> int:
    # Each counted race adds one, in the same atomic update as the rating itself.
    return int(rating.get("races", 0))


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


class AccountStore:
    """Accounts, sessions, ceremonies, sign-in counters, histories and ratings."""

    def __init__(self, kv: KeyValue) -> None:
        self.kv = kv

    # accounts
    async def claim_name(self, key: str, account_id: str, ttl_s: float | None = None) -> bool:
        """Reserve a name; with ``ttl_s``, only for that long unless :meth:`keep_name`."""
        return await self.kv.set_nx(f"bk:name:{{{key}}}", account_id, ttl_s)

    async def keep_name(self, key: str, account_id: str) -> None:
        """A reserved name is kept for good, once its account is saved."""
        await self.kv.set(f"bk:name:{{{key}}}", account_id)

    async def release_name(self, key: str) -> None:
        await self.kv.delete(f"bk:name:{{{key}}}")

    async def name_taken(self, key: str) -> bool:
        """Whether an account holds (or a sign-up is reserving) the name of look-alike key ``key``."""
        return await self.kv.get(f"bk:name:{{{key}}}") is not None

    async def account_by_name(self, key: str) -> dict[str, Any] | None:
        account_id = await self.kv.get(f"bk:name:{{{key}}}")
        return None if account_id is None else await self.account(account_id)

    async def account(self, account_id: str) -> dict[str, Any] | None:
        return _load(await self.kv.get(f"bk:acct:{{{account_id}}}"))

    async def exists(self, account_id: str) -> bool:
        """Whether the account is there (False once deleted)."""
        return await self.kv.get(f"bk:acct:{{{account_id}}}") is not None

    async def save(self, account: dict[str, Any]) -> None:
        await self.kv.set(f"bk:acct:{{{account['id']}}}", _dump(account))

    async def delete(self, account: dict[str, Any], name_key: str, cells: list[int]) -> None:
        """The account's personal data goes; results kept elsewhere stay, nameless."""
        account_id = account["id"]
        await self.kv.delete(f"bk:acct:{{{account_id}}}")
        await self.kv.delete(f"bk:acct:{{{account_id}}}:history")
        for count in cells:
            await self.kv.delete(f"bk:acct:{{{account_id}}}:rating:{count}")
            await self.kv.zrem(f"bk:ratings:{{{count}}}", account_id)
        for credential in account.get("passkeys", []):
            await self.kv.delete(f"bk:cred:{{{credential['id']}}}")
        await self.kv.delete(f"bk:name:{{{name_key}}}")

    async def claim_credential(
        self, credential_id: str, account_id: str, ttl_s: float | None = None
    ) -> bool:
        return await self.kv.set_nx(f"bk:cred:{{{credential_id}}}", account_id, ttl_s)

    async def keep_credential(self, credential_id: str, account_id: str) -> None:
        await self.kv.set(f"bk:cred:{{{credential_id}}}", account_id)

    async def account_by_credential(self, credential_id: str) -> dict[str, Any] | None:
        account_id = await self.kv.get(f"bk:cred:{{{credential_id}}}")
        return None if account_id is None else await self.account(account_id)

    async def claim_guest_key(self, key_hash: str, account_id: str) -> bool:
        """A guest's player key goes to one account, once."""
        return await self.kv.set_nx(f"bk:claim:{{{key_hash}}}", account_id)

    # sessions and ceremonies
    async def open_session(self, session_hash: str, account_id: str, ttl_s: float) -> None:
        await self.kv.set(f"bk:sess:{{{session_hash}}}", account_id, ttl_s)

    async def session(self, session_hash: str) -> str | None:
        return await self.kv.get(f"bk:sess:{{{session_hash}}}")

    async def close_session(self, session_hash: str) -> None:
        await self.kv.delete(f"bk:sess:{{{session_hash}}}")

    async def put_ceremony(self, ceremony_hash: str, data: dict[str, Any], ttl_s: float) -> None:
        await self.kv.set(f"bk:chal:{{{ceremony_hash}}}", _dump(data), ttl_s)

    async def take_ceremony(self, ceremony_hash: str) -> dict[str, Any] | None:
        """A ceremony's data, usable once."""
        key = f"bk:chal:{{{ceremony_hash}}}"
        found = _load(await self.kv.get(key))
        if found is not None:
            await self.kv.delete(key)
        return found

    async def count_failure(self, kind: str, key: str, window_s: float) -> int:
        return await self.kv.incr(f"bk:fail:{kind}:{{{key}}}", window_s)

    async def failures(self, kind: str, key: str) -> int:
        found = await self.kv.get(f"bk:fail:{kind}:{{{key}}}")
        return 0 if found is None else int(found)

    # races, histories, ratings
    async def note_player(self, race_id: str, player_id: str, account_id: str) -> None:
        # Kept as long as a race's log is (a day): long enough for its end to be counted.
        await self.kv.set(f"bk:race:{{{race_id}}}:accounts:{player_id}", account_id, 2 * 86400)

    async def player_account(self, race_id: str, player_id: str) -> str | None:
        return await self.kv.get(f"bk:race:{{{race_id}}}:accounts:{player_id}")

    async def mark_counted(self, race_id: str) -> bool:
        """True the first time only: a race's end is counted once, whichever process sees it."""
        return await self.kv.set_nx(f"bk:rated:{{{race_id}}}", "1", 2 * 86400)

    async def add_result(self, account_id: str, result: dict[str, Any], cap: int) -> None:
        await self.kv.push(f"bk:acct:{{{account_id}}}:history", _dump(result), cap)

    async def history(self, account_id: str, limit: int) -> list[dict[str, Any]]:
        texts = await self.kv.items(f"bk:acct:{{{account_id}}}:history", limit)
        return [dict(json.loads(text)) for text in texts]

    async def rating(self, account_id: str, cells: int) -> dict[str, Any] | None:
        return _load(await self.kv.get(f"bk:acct:{{{account_id}}}:rating:{cells}"))

    async def set_rating(
        self, account_id: str, cells: int, rating: dict[str, Any], shown: int
    ) -> None:
        await self.kv.set(f"bk:acct:{{{account_id}}}:rating:{cells}", _dump(rating))
        await self.kv.zset(f"bk:ratings:{{{cells}}}", account_id, shown, _version(rating))

    async def update_rating(
        self,
        account_id: str,
        cells: int,
        change: Callable[[dict[str, Any] | None], dict[str, Any]],
        shown: Callable[[dict[str, Any]], int],
    ) -> dict[str, Any]:
        """Change a rating from its current value atomically, so two races ending at
        once both count; then the top list shows it. The top list is another key
        (on a cluster, another shard), so its entry carries the rating's race
        count: a race that wrote first but reaches the list last cannot put an
        older rating back over a newer one."""
        text = await self.kv.update(
            f"bk:acct:{{{account_id}}}:rating:{cells}", lambda found: _dump(change(_load(found)))
        )
        rating = dict(json.loads(text))
        await self.kv.zset(f"bk:ratings:{{{cells}}}", account_id, shown(rating), _version(rating))
        return rating

    async def top(self, cells: int, limit: int) -> list[tuple[str, float]]:
        return await self.kv.ztop(f"bk:ratings:{{{cells}}}", limit)
