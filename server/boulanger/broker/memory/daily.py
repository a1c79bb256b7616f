"""The memory store's daily challenge: every day in this process's memory, lost when it stops."""

from __future__ import annotations

import bisect
import dataclasses
import json
import time
from dataclasses import dataclass, field
from datetime import date
from typing import cast

from ...engine import RecordDict
from ...race.daily import WON, DailyEntry, RankedEntry, entry_id_of, expires_at, ranking_key
from ...race.review import Decision
from ..contracts import Broker, DailyStore, Page, Recorded, check_page, daily_channel, published


@dataclass(slots=True)
class _Day:
    attempts: dict[str, str] = field(default_factory=dict)
    players: dict[str, str] = field(default_factory=dict)
    leaderboard: list[str] = field(default_factory=list)  # ranking keys, sorted
    entries: dict[int, DailyEntry] = field(default_factory=dict)
    records: dict[int, str] = field(default_factory=dict)
    owners: dict[int, str] = field(default_factory=dict)  # entry id -> player key hash


@dataclass(slots=True)
class MemoryDailyData:
    """The memory daily store's days."""

    days: dict[date, _Day] = field(default_factory=dict)
    won: dict[str, set[date]] = field(default_factory=dict)


class MemoryDailyStore(DailyStore):
    """The daily challenge in this process's memory: lost when the process stops.

    A day's leaderboard is a sorted list: ranks and pages by binary search; an
    insertion shifts the list's tail (a memory move, not a scan). Days are
    dropped ``retention_days`` after they end; won days are kept.
    """

    def __init__(self, broker: Broker, retention_days: int) -> None:
        """``broker`` publishes the live results."""
        super().__init__(retention_days)
        self.broker = broker
        self.data = MemoryDailyData()

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
        self, day: date, key_hash: str, entry: DailyEntry, record: RecordDict
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
        found.owners[entry_id] = key_hash
        if not entry.counts:  # held: kept, off the leaderboard
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

    async def decide(self, day: date, entry_id: int, decision: Decision) -> RankedEntry | None:
        found = self._day(day)
        if found is None or entry_id not in found.entries:
            return None
        entry = found.entries[entry_id] = dataclasses.replace(
            found.entries[entry_id], decision=decision
        )
        key_hash = found.owners[entry_id]
        key = found.players[key_hash]
        at = bisect.bisect_left(found.leaderboard, key)
        there = at < len(found.leaderboard) and found.leaderboard[at] == key
        won = self.data.won.setdefault(key_hash, set())
        if entry.counts:
            if not there:
                found.leaderboard.insert(at, key)
            if entry.result == WON:
                won.add(day)
        else:
            if there:
                del found.leaderboard[at]
            won.discard(day)
        return self._ranked(found, key)

    async def reviewed(self, day: date, limit: int) -> list[RankedEntry]:
        found = self._day(day)
        if found is None:
            return []
        ids = [
            i for i, e in found.entries.items() if e.review is not None or e.decision is not None
        ]
        ids.sort(reverse=True)
        return [self._ranked(found, found.players[found.owners[i]]) for i in ids[:limit]]

    @staticmethod
    def _ranked(found: _Day, key: str) -> RankedEntry:
        entry_id = entry_id_of(key)
        at = bisect.bisect_left(found.leaderboard, key)
        ranked = at < len(found.leaderboard) and found.leaderboard[at] == key
        return RankedEntry(at + 1 if ranked else None, entry_id, found.entries[entry_id])

    async def page(self, day: date, offset: int, limit: int) -> Page:
        check_page(offset, limit)
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

    async def game_record(self, day: date, entry_id: int) -> RecordDict | None:
        found = self._day(day)
        text = None if found is None else found.records.get(entry_id)
        return None if text is None else cast(RecordDict, json.loads(text))

    async def won_days(self, key_hash: str, upto: date, limit: int) -> list[date]:
        days = sorted((d for d in self.data.won.get(key_hash, ()) if d <= upto), reverse=True)
        return days[:limit]
