"""The daily challenge's store: attempts, results, game records and streaks of each day.

Three implementations, chosen by the broker: :class:`MemoryDailyStore` keeps
everything in this process's memory (held by the memory broker; lost when the
process stops, like its races), :class:`RedisDailyStore`
keeps it in Redis, durable and shared by every server process, and
``SqliteDailyStore`` (:mod:`.sqlite_daily`) in the SQLite broker's file.

Redis layout, for a day ``D`` (``YYYY-MM-DD``; the ``{D}`` hash tag keeps a
day's keys on one Redis Cluster shard)::

    bk:daily:{D}:attempts  hash    player key hash -> race id of the ranked attempt
    bk:daily:{D}:players   hash    player key hash -> ranking key of the player's entry
    bk:daily:{D}:board     zset    every ranking key, all with score 0
    bk:daily:{D}:entries   hash    entry id -> entry JSON
    bk:daily:{D}:records   hash    entry id -> game record JSON, zlib-compressed, base64
    bk:daily:{D}:ids       string  the last entry id given out
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

Results are recorded once per player key and day: the first write wins, and
writing again answers the entry already there (the race's on-over hook may
run more than once, in any process). An entry held for review
(``DailyEntry.review``) is kept with its game record and shown to its player,
but stays out of the board (and so has no rank), is not published and does
not count as a day won.
"""

from __future__ import annotations

import abc
import base64
import bisect
import json
import time
import zlib
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from ..race.daily import (
    WON,
    DailyEntry,
    RankedEntry,
    day_number,
    entry_id_of,
    expires_at,
    ranking_key,
    streak,
)
from .base import Broker
from .errors import redis_errors

STREAK_BATCH = 128


def daily_channel(day: date) -> str:
    """The pub/sub channel on which a day's new entries are published."""
    return f"bk:daily:{{{day.isoformat()}}}:live"


@dataclass(frozen=True, slots=True)
class Recorded:
    """The answer to :meth:`DailyStore.record`: the entry and whether this call wrote it."""

    created: bool
    ranked: RankedEntry


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a day's leaderboard, and how many entries the board has in all."""

    total: int
    entries: list[RankedEntry]


def published(day: date, ranked: RankedEntry) -> str:
    """The message published on :func:`daily_channel` for a new entry."""
    return json.dumps(
        {
            "date": day.isoformat(),
            "entry_id": ranked.entry_id,
            "rank": ranked.rank,
            "entry": ranked.entry.to_dict(),
        },
        separators=(",", ":"),
    )


def parse_published(data: str) -> RankedEntry:
    """The inverse of :func:`published` (the date is the channel's)."""
    message = json.loads(data)
    return RankedEntry(
        int(message["rank"]), int(message["entry_id"]), DailyEntry.from_dict(message["entry"])
    )


class DailyStore(abc.ABC):
    """Every day's attempts, entries and game records; every player's won days."""

    def __init__(self, retention_days: int) -> None:
        self.retention_days = retention_days

    @abc.abstractmethod
    async def claim_attempt(self, day: date, key_hash: str, race_id: str) -> str:
        """Make ``race_id`` the player's ranked attempt unless they have one: answer theirs."""

    @abc.abstractmethod
    async def attempt(self, day: date, key_hash: str) -> str | None:
        """The race id of the player's ranked attempt, if any."""

    @abc.abstractmethod
    async def record(
        self, day: date, key_hash: str, entry: DailyEntry, record: dict[str, Any]
    ) -> Recorded:
        """Record the player's result and game record, unless recorded already (first wins).

        A new entry is published on :func:`daily_channel`, unless it is held.
        """

    @abc.abstractmethod
    async def page(self, day: date, offset: int, limit: int) -> Page:
        """Entries ``offset`` .. ``offset + limit - 1`` in leaderboard order, and the total.

        ``limit`` 0 answers the total only.
        """

    @abc.abstractmethod
    async def player(self, day: date, key_hash: str) -> RankedEntry | None:
        """The player's entry at its current rank."""

    @abc.abstractmethod
    async def game_record(self, day: date, entry_id: int) -> dict[str, Any] | None: ...

    @abc.abstractmethod
    async def won_days(self, key_hash: str, upto: date, limit: int) -> list[date]:
        """Up to ``limit`` days won by the player, ``upto`` and before, latest first."""

    async def streak(self, key_hash: str, day: date) -> int:
        """Consecutive days won, ending on ``day`` or the day before."""
        found: set[date] = set()
        upto = day
        while True:
            days = await self.won_days(key_hash, upto, STREAK_BATCH)
            found.update(days)
            count = streak(found, day)
            if len(days) < STREAK_BATCH or min(days) < day - timedelta(days=count + 1):
                return count
            upto = min(days) - timedelta(days=1)


def _check_page(offset: int, limit: int) -> None:
    if offset < 0 or limit < 0:
        raise ValueError(f"a page needs offset >= 0 and limit >= 0, not {offset} and {limit}")


# -- in memory --------------------------------------------------------------


@dataclass(slots=True)
class _Day:
    attempts: dict[str, str] = field(default_factory=dict)
    players: dict[str, str] = field(default_factory=dict)
    board: list[str] = field(default_factory=list)  # ranking keys, sorted
    entries: dict[int, DailyEntry] = field(default_factory=dict)
    records: dict[int, str] = field(default_factory=dict)


@dataclass(slots=True)
class MemoryDailyData:
    """The memory daily store's days, held by its broker: every store of one broker shares them."""

    days: dict[date, _Day] = field(default_factory=dict)
    won: dict[str, set[date]] = field(default_factory=dict)


class MemoryDailyStore(DailyStore):
    """The daily challenge in this process's memory: lost when the process stops.

    Its data is its broker's (:class:`MemoryDailyData`), shared by every store of it.
    A day's board is a sorted list: ranks and pages by binary search; an
    insertion shifts the list's tail (a memory move, not a scan). Days are
    dropped ``retention_days`` after they end; won days are kept.
    """

    def __init__(self, broker: Broker, data: MemoryDailyData, retention_days: int) -> None:
        """``broker`` publishes the live results; ``data`` is the broker's too."""
        super().__init__(retention_days)
        self.broker = broker
        self.data = data

    def _day(self, day: date, create: bool = False) -> _Day | None:
        now = int(time.time() * 1000)
        if expires_at(day, self.retention_days) <= now:  # past its retention: forgotten
            self.data.days.pop(day, None)
            return _Day() if create else None
        found = self.data.days.get(day)
        if found is None and create:
            for old in [d for d in self.data.days if expires_at(d, self.retention_days) <= now]:
                del self.data.days[old]
            found = self.data.days[day] = _Day()
        return found

    async def claim_attempt(self, day: date, key_hash: str, race_id: str) -> str:
        attempts = self._day(day, create=True).attempts  # type: ignore[union-attr]
        return attempts.setdefault(key_hash, race_id)

    async def attempt(self, day: date, key_hash: str) -> str | None:
        found = self._day(day)
        return None if found is None else found.attempts.get(key_hash)

    async def record(
        self, day: date, key_hash: str, entry: DailyEntry, record: dict[str, Any]
    ) -> Recorded:
        found = self._day(day, create=True)
        assert found is not None
        key = found.players.get(key_hash)
        if key is not None:
            ranked = self._ranked(found, key)
            return Recorded(False, ranked)
        entry_id = len(found.entries) + 1
        key = ranking_key(entry, entry_id)
        found.players[key_hash] = key
        found.entries[entry_id] = entry
        found.records[entry_id] = json.dumps(record, separators=(",", ":"))
        if entry.review is not None:  # held: kept, off the board
            return Recorded(True, self._ranked(found, key))
        bisect.insort(found.board, key)
        if entry.result == WON:
            self.data.won.setdefault(key_hash, set()).add(day)
        ranked = self._ranked(found, key)
        await self.broker.publish(daily_channel(day), published(day, ranked))
        return Recorded(True, ranked)

    @staticmethod
    def _ranked(found: _Day, key: str) -> RankedEntry:
        entry_id = entry_id_of(key)
        at = bisect.bisect_left(found.board, key)
        on_board = at < len(found.board) and found.board[at] == key
        return RankedEntry(at + 1 if on_board else None, entry_id, found.entries[entry_id])

    async def page(self, day: date, offset: int, limit: int) -> Page:
        _check_page(offset, limit)
        found = self._day(day)
        if found is None:
            return Page(0, [])
        keys = found.board[offset : offset + limit]
        entries = [
            RankedEntry(offset + i + 1, entry_id_of(k), found.entries[entry_id_of(k)])
            for i, k in enumerate(keys)
        ]
        return Page(len(found.board), entries)

    async def player(self, day: date, key_hash: str) -> RankedEntry | None:
        found = self._day(day)
        key = None if found is None else found.players.get(key_hash)
        return None if key is None or found is None else self._ranked(found, key)

    async def game_record(self, day: date, entry_id: int) -> dict[str, Any] | None:
        found = self._day(day)
        text = None if found is None else found.records.get(entry_id)
        return None if text is None else dict(json.loads(text))

    async def won_days(self, key_hash: str, upto: date, limit: int) -> list[date]:
        days = sorted((d for d in self.data.won.get(key_hash, ()) if d <= upto), reverse=True)
        return days[:limit]


# -- in Redis ------------------------------------------------------------------

# KEYS: players, board, entries, records, ids; ARGV: key hash,
# ranking key prefix (without the id), entry JSON, record JSON, expire-at ms,
# channel, date, "1" when the entry is held for review (kept off the board).
# Answers created (0/1), ranking key, rank from 0 (-1: not on the board).
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
local rank = -1
if ARGV[8] ~= '1' then
  redis.call('ZADD', KEYS[2], 0, key)
  rank = redis.call('ZRANK', KEYS[2], key)
  redis.call('PUBLISH', ARGV[6], '{"date":"' .. ARGV[7] .. '","entry_id":' .. id ..
    ',"rank":' .. (rank + 1) .. ',"entry":' .. ARGV[3] .. '}')
end
for i = 1, 5 do redis.call('PEXPIREAT', KEYS[i], ARGV[5]) end
return {1, key, rank}
"""

# KEYS: board, entries; ARGV: offset, limit. Answers total, then id, JSON pairs.
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


def pack_record(record: dict[str, Any]) -> str:
    """A game record as stored in Redis: compact JSON, zlib-compressed, base64."""
    text = json.dumps(record, separators=(",", ":")).encode()
    return "z:" + base64.b64encode(zlib.compress(text, 6)).decode("ascii")


def unpack_record(text: str) -> dict[str, Any]:
    if text.startswith("z:"):
        return dict(json.loads(zlib.decompress(base64.b64decode(text[2:]))))
    return dict(json.loads(text))


def _day_key(day: date, part: str) -> str:
    return f"bk:daily:{{{day.isoformat()}}}:{part}"


def _won_key(key_hash: str) -> str:
    return f"bk:daily:won:{{{key_hash}}}"


class RedisDailyStore(DailyStore):
    """The daily challenge in Redis (see the module docstring for the layout)."""

    def __init__(self, redis: Any, retention_days: int, sharded: bool = False) -> None:
        """``redis``: the broker's redis-py client; ``sharded``: on a Redis Cluster, whose
        broker subscribes with sharded pub/sub (so the store publishes with it)."""
        super().__init__(retention_days)
        self.redis = redis
        self._record = self.redis.register_script(
            _RECORD.replace("'PUBLISH'", "'SPUBLISH'") if sharded else _RECORD
        )
        self._page = self.redis.register_script(_PAGE)

    async def claim_attempt(self, day: date, key_hash: str, race_id: str) -> str:
        key = _day_key(day, "attempts")
        with redis_errors():
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hsetnx(key, key_hash, race_id)
                pipe.hget(key, key_hash)
                pipe.pexpireat(key, expires_at(day, self.retention_days))
                _, claimed, _ = await pipe.execute()
        return str(claimed)

    async def attempt(self, day: date, key_hash: str) -> str | None:
        with redis_errors():
            found = await self.redis.hget(_day_key(day, "attempts"), key_hash)
        return None if found is None else str(found)

    async def record(
        self, day: date, key_hash: str, entry: DailyEntry, record: dict[str, Any]
    ) -> Recorded:
        keys = [_day_key(day, part) for part in ("players", "board", "entries", "records", "ids")]
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
            "1" if entry.review is not None else "0",
        ]
        with redis_errors():
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
            if ranked.entry.result == WON and ranked.entry.review is None:
                # Another shard in a cluster: not in the script; idempotent, so a
                # repeated hook run after a crash in between still adds it.
                async with self.redis.pipeline(transaction=False) as pipe:
                    pipe.zadd(_won_key(key_hash), {day.isoformat(): day_number(day)})
                    pipe.pexpireat(_won_key(key_hash), expire, gt=True)
                    pipe.pexpireat(_won_key(key_hash), expire, nx=True)
                    await pipe.execute()
        return Recorded(bool(created), ranked)

    async def page(self, day: date, offset: int, limit: int) -> Page:
        _check_page(offset, limit)
        keys = [_day_key(day, "board"), _day_key(day, "entries")]
        with redis_errors():
            answer = await self._page(keys=keys, args=[offset, limit])
        total, pairs = int(answer[0]), answer[1:]
        entries = [
            RankedEntry(offset + i + 1, int(pairs[2 * i]), DailyEntry.from_dict(json.loads(text)))
            for i, text in enumerate(pairs[1::2])
        ]
        return Page(total, entries)

    async def player(self, day: date, key_hash: str) -> RankedEntry | None:
        with redis_errors():
            key = await self.redis.hget(_day_key(day, "players"), key_hash)
            if key is None:
                return None
            entry_id = entry_id_of(key)
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zrank(_day_key(day, "board"), key)
                pipe.hget(_day_key(day, "entries"), str(entry_id))
                rank, text = await pipe.execute()
        if text is None:
            return None
        place = None if rank is None else int(rank) + 1  # None: held, off the board
        return RankedEntry(place, entry_id, DailyEntry.from_dict(json.loads(text)))

    async def game_record(self, day: date, entry_id: int) -> dict[str, Any] | None:
        with redis_errors():
            text = await self.redis.hget(_day_key(day, "records"), str(entry_id))
        return None if text is None else unpack_record(text)

    async def won_days(self, key_hash: str, upto: date, limit: int) -> list[date]:
        with redis_errors():
            found = await self.redis.zrevrangebyscore(
                _won_key(key_hash), day_number(upto), "-inf", start=0, num=limit
            )
        return [date.fromisoformat(text) for text in found]
