"""The Redis store's daily challenge (:class:`RedisDailyStore`).

Redis layout, for a day ``D`` (``YYYY-MM-DD``; the ``{D}`` hash tag keeps a
day's keys on one Redis Cluster shard)::

    bk:daily:{D}:attempts  hash    player key hash -> race id of the ranked attempt
    bk:daily:{D}:players   hash    player key hash -> ranking key of the player's entry
    bk:daily:{D}:board     zset    the leaderboard: every ranking key, all with score 0
    bk:daily:{D}:entries   hash    entry id -> entry JSON
    bk:daily:{D}:records   hash    entry id -> game record JSON, zlib-compressed, base64
    bk:daily:{D}:ids       string  the last entry id given out
    bk:daily:{D}:owners    hash    entry id -> player key hash
    bk:daily:{D}:reviewed  zset    the ids of entries held or decided (score: the id)
    bk:daily:won:{H}       zset    the days won by player key hash H (score: day number)
    bk:daily:{D}:live      channel each new entry, as it is recorded

A ranking key (:func:`boulanger.race.daily.ranking_key`) is a fixed-width
string whose byte order is the leaderboard order and which ends with the
entry id. In a sorted set whose members all have the same score, Redis orders
members by their bytes: ``ZRANK`` gives a player's rank and ``ZRANGE`` by
index a page, both in O(log N) (plus the page's length), never a scan, and no
ranking field is squeezed into a double. A day's keys expire (``PEXPIREAT``)
``retention_days`` after the day ends; a player's won days expire that long
after their last win, so a running streak is never forgotten.

A game record is about 40 bytes of JSON per action (4 KB for a typical win);
compressed it takes about a ninth of that, which is what a day of 100,000
entries kept for 90 days asks for.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import zlib
from datetime import date
from typing import Any, cast

from ...engine import RecordDict
from ...race.daily import (
    WON,
    DailyEntry,
    RankedEntry,
    day_number,
    entry_id_of,
    expires_at,
    ranking_key,
)
from ...race.review import Decision
from ..contracts import DailyStore, Page, Recorded, check_page, daily_channel
from .errors import redis_client_errors

# The key of a day's leaderboard (the sorted set) ends with "board": stored
# days keep their key, since a new name would orphan every day retained.
LEADERBOARD = "board"


# KEYS: players, leaderboard, entries, records, ids, owners, reviewed; ARGV: key hash,
# ranking key prefix (without the id), entry JSON, record JSON, expire-at ms,
# channel, date, "1" when the entry is held for review (kept off the leaderboard).
# Answers created (0/1), ranking key, rank from 0 (-1: not on the leaderboard).
_RECORD = """
local existing = redis.call('HGET', KEYS[1], ARGV[1])
if existing then
  return {0, existing, redis.call('ZRANK', KEYS[2], existing) or -1}
end
local id = redis.call('INCR', KEYS[5])
local key = ARGV[2] .. string.format('%010d', id)
redis.call('HSET', KEYS[1], ARGV[1], key)
redis.call('HSET', KEYS[3], id, ARGV[3])
redis.call('HSET', KEYS[4], id, ARGV[4])
redis.call('HSET', KEYS[6], id, ARGV[1])
local rank = -1
if ARGV[8] == '1' then
  redis.call('ZADD', KEYS[7], id, id)
else
  redis.call('ZADD', KEYS[2], 0, key)
  rank = redis.call('ZRANK', KEYS[2], key)
  redis.call('PUBLISH', ARGV[6], '{"date":"' .. ARGV[7] .. '","entry_id":' .. id ..
    ',"rank":' .. (rank + 1) .. ',"entry":' .. ARGV[3] .. '}')
end
for i = 1, 7 do redis.call('PEXPIREAT', KEYS[i], ARGV[5]) end
return {1, key, rank}
"""

# KEYS: leaderboard, entries; ARGV: offset, limit. Answers total, then id, JSON pairs.
_PAGE = """
local out = {redis.call('ZCARD', KEYS[1])}
if tonumber(ARGV[2]) < 1 then return out end
local keys = redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[1] + ARGV[2] - 1)
for _, key in ipairs(keys) do
  local id = tostring(tonumber(string.sub(key, -10)))
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', KEYS[2], id)
end
return out
"""


def pack_record(record: RecordDict) -> str:
    """A game record as stored in Redis: compact JSON, zlib-compressed, base64."""
    text = json.dumps(record, separators=(",", ":")).encode()
    return "z:" + base64.b64encode(zlib.compress(text, 6)).decode("ascii")


def unpack_record(text: str) -> RecordDict:
    """A game record as :func:`pack_record` stored it, or as plain JSON (stored uncompressed)."""
    if text.startswith("z:"):
        return cast(RecordDict, json.loads(zlib.decompress(base64.b64decode(text[2:]))))
    return cast(RecordDict, json.loads(text))


def _day_key(day: date, part: str) -> str:
    return f"bk:daily:{{{day.isoformat()}}}:{part}"


def _won_key(key_hash: str) -> str:
    return f"bk:daily:won:{{{key_hash}}}"


class RedisDailyStore(DailyStore):
    """The daily challenge in Redis (see the module docstring for the layout)."""

    def __init__(self, redis: Any, retention_days: int, sharded: bool = False) -> None:
        """``redis``: the store's redis-py client (:data:`.errors.Client`: its replies are
        ``str``, which redis-py's types do not say); ``sharded``: on a Redis Cluster, whose
        broker subscribes with sharded pub/sub (so the store publishes with it)."""
        super().__init__(retention_days)
        self.redis = redis
        self._record = self.redis.register_script(
            _RECORD.replace("'PUBLISH'", "'SPUBLISH'") if sharded else _RECORD
        )
        self._page = self.redis.register_script(_PAGE)

    async def claim_attempt(self, day: date, key_hash: str, race_id: str) -> str:
        key = _day_key(day, "attempts")
        with redis_client_errors():
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hsetnx(key, key_hash, race_id)
                pipe.hget(key, key_hash)
                pipe.pexpireat(key, expires_at(day, self.retention_days))
                _, claimed, _ = await pipe.execute()
        return str(claimed)

    async def attempt(self, day: date, key_hash: str) -> str | None:
        with redis_client_errors():
            found = await self.redis.hget(_day_key(day, "attempts"), key_hash)
        return None if found is None else str(found)

    async def record(
        self, day: date, key_hash: str, entry: DailyEntry, record: RecordDict
    ) -> Recorded:
        keys = [
            _day_key(day, part)
            for part in ("players", LEADERBOARD, "entries", "records", "ids", "owners", "reviewed")
        ]
        prefix = ranking_key(entry, 0)[: -len(f"{0:010d}")]
        text = json.dumps(entry.to_dict(), separators=(",", ":"))
        expire = expires_at(day, self.retention_days)
        args = [
            key_hash,
            prefix,
            text,
            pack_record(record),
            expire,
            daily_channel(day),
            day.isoformat(),
            "0" if entry.counts else "1",
        ]
        with redis_client_errors():
            created, key, rank = await self._record(keys=keys, args=args)
            key = str(key)
            place = None if int(rank) < 0 else int(rank) + 1
            if created:
                ranked = RankedEntry(place, entry_id_of(key), entry)
            else:
                stored = await self.redis.hget(keys[2], str(entry_id_of(key)))
                ranked = RankedEntry(
                    place, entry_id_of(key), DailyEntry.from_dict(json.loads(stored))
                )
            if ranked.entry.result == WON and ranked.entry.counts:
                # Another shard in a cluster: not in the script; idempotent, so a
                # repeated hook run after a crash in between still adds it.
                async with self.redis.pipeline(transaction=False) as pipe:
                    pipe.zadd(_won_key(key_hash), {day.isoformat(): day_number(day)})
                    pipe.pexpireat(_won_key(key_hash), expire, gt=True)
                    pipe.pexpireat(_won_key(key_hash), expire, nx=True)
                    await pipe.execute()
        return Recorded(bool(created), ranked)

    async def rename(self, day: date, key_hash: str, name: str) -> bool:
        # Not one script: an entry is written once and never moves, so nothing
        # else writes it between this read and this write.
        entries = _day_key(day, "entries")
        with redis_client_errors():
            key = await self.redis.hget(_day_key(day, "players"), key_hash)
            if key is None:
                return False
            field = str(entry_id_of(key))
            text = await self.redis.hget(entries, field)
            if text is None:
                return False
            entry = {**json.loads(text), "name": name}
            await self.redis.hset(entries, field, json.dumps(entry, separators=(",", ":")))
        return True

    async def _owner(self, day: date, entry_id: int) -> str | None:
        """The player key hash of an entry (scanned for among the players for an entry
        recorded before owners were kept)."""
        found = await self.redis.hget(_day_key(day, "owners"), str(entry_id))
        if found is not None:
            return str(found)
        async for key_hash, key in self.redis.hscan_iter(_day_key(day, "players")):
            if entry_id_of(str(key)) == entry_id:
                return str(key_hash)
        return None

    async def decide(self, day: date, entry_id: int, decision: Decision) -> RankedEntry | None:
        entries, board = _day_key(day, "entries"), _day_key(day, LEADERBOARD)
        expire = expires_at(day, self.retention_days)
        with redis_client_errors():
            text = await self.redis.hget(entries, str(entry_id))
            key_hash = None if text is None else await self._owner(day, entry_id)
            key = (
                None
                if key_hash is None
                else await self.redis.hget(_day_key(day, "players"), key_hash)
            )
            if text is None or key_hash is None or key is None:
                return None
            entry = dataclasses.replace(DailyEntry.from_dict(json.loads(text)), decision=decision)
            # Each write sets what the decision says, so writing them again (after a
            # lost answer, or a decision reversed meanwhile) ends as the last one says.
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.hset(
                    entries, str(entry_id), json.dumps(entry.to_dict(), separators=(",", ":"))
                )
                if entry.counts:
                    pipe.zadd(board, {key: 0})
                else:
                    pipe.zrem(board, key)
                pipe.zadd(_day_key(day, "reviewed"), {str(entry_id): entry_id})
                pipe.pexpireat(_day_key(day, "reviewed"), expire)
                pipe.zrank(board, key)
                *_, rank = await pipe.execute()
            won = _won_key(key_hash)
            async with self.redis.pipeline(transaction=False) as pipe:
                if entry.counts and entry.result == WON:
                    pipe.zadd(won, {day.isoformat(): day_number(day)})
                    pipe.pexpireat(won, expire, gt=True)
                    pipe.pexpireat(won, expire, nx=True)
                else:
                    pipe.zrem(won, day.isoformat())
                await pipe.execute()
        return RankedEntry(None if rank is None else int(rank) + 1, entry_id, entry)

    async def reviewed(self, day: date, limit: int) -> list[RankedEntry]:
        if limit < 1:
            return []
        with redis_client_errors():
            ids = [
                int(i) for i in await self.redis.zrevrange(_day_key(day, "reviewed"), 0, limit - 1)
            ]
            found = []
            for entry_id in ids:
                key_hash = await self._owner(day, entry_id)
                if key_hash is None:
                    continue
                ranked = await self.player(day, key_hash)
                if ranked is not None:
                    found.append(ranked)
        return found

    async def page(self, day: date, offset: int, limit: int) -> Page:
        check_page(offset, limit)
        keys = [_day_key(day, LEADERBOARD), _day_key(day, "entries")]
        with redis_client_errors():
            answer = await self._page(keys=keys, args=[offset, limit])
        total, pairs = int(answer[0]), answer[1:]
        entries = [
            RankedEntry(offset + i + 1, int(pairs[2 * i]), DailyEntry.from_dict(json.loads(text)))
            for i, text in enumerate(pairs[1::2])
        ]
        return Page(total, entries)

    async def player(self, day: date, key_hash: str) -> RankedEntry | None:
        with redis_client_errors():
            key = await self.redis.hget(_day_key(day, "players"), key_hash)
            if key is None:
                return None
            entry_id = entry_id_of(key)
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zrank(_day_key(day, LEADERBOARD), key)
                pipe.hget(_day_key(day, "entries"), str(entry_id))
                rank, text = await pipe.execute()
        if text is None:
            return None
        place = None if rank is None else int(rank) + 1  # None: held, off the leaderboard
        return RankedEntry(place, entry_id, DailyEntry.from_dict(json.loads(text)))

    async def game_record(self, day: date, entry_id: int) -> RecordDict | None:
        with redis_client_errors():
            text = await self.redis.hget(_day_key(day, "records"), str(entry_id))
        return None if text is None else unpack_record(text)

    async def won_days(self, key_hash: str, upto: date, limit: int) -> list[date]:
        with redis_client_errors():
            found = await self.redis.zrevrangebyscore(
                _won_key(key_hash), day_number(upto), "-inf", start=0, num=limit
            )
        return [date.fromisoformat(text) for text in found]
