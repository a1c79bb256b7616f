"""The daily challenge's store: attempts, results, game records and streaks of each day.

Three implementations, chosen by the broker: :class:`MemoryDailyStore` keeps
everything in this process's memory (held by the memory broker; lost when the
process stops, like its races), :class:`~.redis.daily.RedisDailyStore`
keeps it in Redis (:mod:`.redis.daily`), durable and shared by every server process, and
``SqliteDailyStore`` (:mod:`.sqlite_daily`) in the SQLite broker's file.

Results are recorded once per player key and day: the first write wins, and
writing again answers the entry already there (the race's on-over hook may
run more than once, in any process). An entry held for review
(``DailyEntry.review``) is kept with its game record and shown to its player,
but stays out of the leaderboard (and so has no rank), is not published and does
not count as a day won.
"""

from __future__ import annotations

import abc
import bisect
import dataclasses
import json
import time
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from ..race.daily import (
    WON,
    DailyEntry,
    RankedEntry,
    entry_id_of,
    expires_at,
    ranking_key,
    streak,
)
from .base import Broker

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
    async def rename(self, day: date, key_hash: str, name: str) -> bool:
        """Show the player's entry of ``day`` under ``name`` (a deleted account's
        entries become "deleted player"); False when the player has none."""

    @abc.abstractmethod
    async def page(self, day: date, offset: int, limit: int) -> Page:
        """Entries ``offset`` .. ``offset + limit - 1`` in leaderboard order, and the total.

        ``limit`` 0 answers the total only.
        """

    @abc.abstractmethod
    async def player(self, day: date, key_hash: str) -> RankedEntry | None:
        """The player's entry at its current rank."""

    @abc.abstractmethod
    async def game_record(self, day: date, entry_id: int) -> dict[str, Any] | None:
        """The game record of a day's entry, or None when there is no such entry."""

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
    leaderboard: list[str] = field(default_factory=list)  # ranking keys, sorted
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
    A day's leaderboard is a sorted list: ranks and pages by binary search; an
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
        if entry.review is not None:  # held: kept, off the leaderboard
            return Recorded(True, self._ranked(found, key))
        bisect.insort(found.leaderboard, key)
        if entry.result == WON:
            self.data.won.setdefault(key_hash, set()).add(day)
        ranked = self._ranked(found, key)
        await self.broker.publish(daily_channel(day), published(day, ranked))
        return Recorded(True, ranked)

    async def rename(self, day: date, key_hash: str, name: str) -> bool:
        found = self._day(day)
        key = None if found is None else found.players.get(key_hash)
        if found is None or key is None:
            return False
        entry_id = entry_id_of(key)
        found.entries[entry_id] = dataclasses.replace(found.entries[entry_id], name=name)
        return True

    @staticmethod
    def _ranked(found: _Day, key: str) -> RankedEntry:
        entry_id = entry_id_of(key)
        at = bisect.bisect_left(found.leaderboard, key)
        ranked = at < len(found.leaderboard) and found.leaderboard[at] == key
        return RankedEntry(at + 1 if ranked else None, entry_id, found.entries[entry_id])

    async def page(self, day: date, offset: int, limit: int) -> Page:
        _check_page(offset, limit)
        found = self._day(day)
        if found is None:
            return Page(0, [])
        keys = found.leaderboard[offset : offset + limit]
        entries = [
            RankedEntry(offset + i + 1, entry_id_of(k), found.entries[entry_id_of(k)])
            for i, k in enumerate(keys)
        ]
        return Page(len(found.leaderboard), entries)

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
