"""The SQLite store's daily challenge, in the log's file: the same answers as on Redis.

Tables (a day is ``date.toordinal()``; the log creates them with its own)::

    daily_attempts  (day, key_hash) -> race id of the ranked attempt
    daily_entries   (day, entry_id) -> key_hash, ranking key, entry JSON
                    indexed by (day, key_hash), unique: the first write wins,
                    and by (day, ranking_key): the leaderboard order
    daily_records   (day, entry_id) -> game record, zlib-compressed JSON
    daily_won       (key_hash, day): the days a player won
    daily_winners   key_hash -> the last day they won (when their won days expire)

Writes go through the broker's writer (:meth:`SqliteBroker.transact`, one
group commit with the appends), reads through its readers. A rank is the
count of the day's ranking keys before the entry's, read from the index:
a walk over that part of it, which a day of tens of thousands of entries
takes in milliseconds (Redis's sorted set answers in O(log N)). Days are
deleted ``retention_days`` after they end, and until then read as absent once
past it; a player's won days go that long after their last win, so a running
streak is never forgotten.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import zlib
from datetime import date
from typing import cast

from ...engine import RecordDict
from ...race.daily import (
    DAY_MS,
    WON,
    DailyEntry,
    RankedEntry,
    expires_at,
    ranking_key,
    today,
)
from ...race.review import Decision
from ..contracts import DailyStore, Page, Recorded, check_page, daily_channel, published
from .log import SqliteBroker

SCHEMA = """
CREATE TABLE IF NOT EXISTS daily_attempts (
    day INTEGER NOT NULL,
    key_hash TEXT NOT NULL,
    race_id TEXT NOT NULL,
    PRIMARY KEY (day, key_hash)
);
CREATE TABLE IF NOT EXISTS daily_entries (
    day INTEGER NOT NULL,
    entry_id INTEGER NOT NULL,
    key_hash TEXT NOT NULL,
    ranking_key TEXT NOT NULL,
    entry TEXT NOT NULL,
    -- 1: held for review (kept for its player, off the leaderboard).
    held INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (day, entry_id)
);
CREATE UNIQUE INDEX IF NOT EXISTS daily_entries_by_player ON daily_entries (day, key_hash);
CREATE INDEX IF NOT EXISTS daily_entries_by_rank ON daily_entries (day, held, ranking_key);
CREATE TABLE IF NOT EXISTS daily_records (
    day INTEGER NOT NULL,
    entry_id INTEGER NOT NULL,
    record BLOB NOT NULL,
    PRIMARY KEY (day, entry_id)
);
CREATE TABLE IF NOT EXISTS daily_won (
    key_hash TEXT NOT NULL,
    day INTEGER NOT NULL,
    PRIMARY KEY (key_hash, day)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS daily_winners (
    key_hash TEXT PRIMARY KEY,
    last_day INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS daily_winners_by_day ON daily_winners (last_day);
"""

AGE_ROWS = 2000  # rows of one table deleted per transaction while ageing
AGE_WINNERS = 200


def pack_record(record: RecordDict) -> bytes:
    """A game record as stored: compact JSON, zlib-compressed (about a ninth of the JSON)."""
    return zlib.compress(json.dumps(record, separators=(",", ":")).encode(), 6)


def unpack_record(blob: bytes) -> RecordDict:
    """A game record as :func:`pack_record` stored it."""
    return cast(RecordDict, json.loads(zlib.decompress(blob)))


def _rank(conn: sqlite3.Connection, day: int, key: str, held: int = 0) -> int | None:
    """The entry's place on the day's leaderboard; None when it is held off it."""
    if held:
        return None
    before = conn.execute(
        "SELECT count(*) FROM daily_entries WHERE day = ? AND held = 0 AND ranking_key < ?",
        (day, key),
    ).fetchone()[0]
    return int(before) + 1


class SqliteDailyStore(DailyStore):
    """The daily challenge in the SQLite broker's file (see the module docstring)."""

    def __init__(self, broker: SqliteBroker, retention_days: int) -> None:
        super().__init__(retention_days)
        self.broker = broker
        broker.add_schema(SCHEMA)
        broker.add_maintenance(self._age)

    def _expired(self, day: date) -> bool:
        return expires_at(day, self.retention_days) <= self.broker.now_ms()

    def _last_expired(self, now_ms: int) -> int:
        """The latest day past its retention at ``now_ms``, as an ordinal."""
        return today(now_ms - (self.retention_days + 1) * DAY_MS).toordinal()

    async def claim_attempt(self, day: date, key_hash: str, race_id: str) -> str:
        if self._expired(day):
            return race_id  # nothing is kept for it (Redis deletes it at once)
        number = day.toordinal()

        def claim(conn: sqlite3.Connection) -> str:
            conn.execute(
                "INSERT OR IGNORE INTO daily_attempts (day, key_hash, race_id) VALUES (?, ?, ?)",
                (number, key_hash, race_id),
            )
            row = conn.execute(
                "SELECT race_id FROM daily_attempts WHERE day = ? AND key_hash = ?",
                (number, key_hash),
            ).fetchone()
            return str(row[0])

        return await self.broker.transact(claim)

    async def attempt(self, day: date, key_hash: str) -> str | None:
        if self._expired(day):
            return None
        row = await self.broker.query(
            lambda conn: conn.execute(
                "SELECT race_id FROM daily_attempts WHERE day = ? AND key_hash = ?",
                (day.toordinal(), key_hash),
            ).fetchone()
        )
        return None if row is None else str(row[0])

    async def record(
        self, day: date, key_hash: str, entry: DailyEntry, record: RecordDict
    ) -> Recorded:
        number = day.toordinal()
        text = json.dumps(entry.to_dict(), separators=(",", ":"))
        packed = pack_record(record)
        if self._expired(day):
            # Past its retention: answered, published, and forgotten at once, as on Redis.
            held = not entry.counts
            recorded = Recorded(True, RankedEntry(None if held else 1, 1, entry))
            if not held:
                await self.broker.publish(daily_channel(day), published(day, recorded.ranked))
            return recorded

        def write(conn: sqlite3.Connection) -> Recorded:
            row = conn.execute(
                "SELECT entry_id, ranking_key, entry, held FROM daily_entries"
                " WHERE day = ? AND key_hash = ?",
                (number, key_hash),
            ).fetchone()
            if row is not None:
                stored = DailyEntry.from_dict(json.loads(row[2]))
                rank = _rank(conn, number, row[1], row[3])
                recorded = Recorded(False, RankedEntry(rank, row[0], stored))
            else:
                entry_id = conn.execute(
                    "SELECT coalesce(max(entry_id), 0) + 1 FROM daily_entries WHERE day = ?",
                    (number,),
                ).fetchone()[0]
                key = ranking_key(entry, entry_id)
                held = int(not entry.counts)
                conn.execute(
                    "INSERT INTO daily_entries (day, entry_id, key_hash, ranking_key, entry, held)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (number, entry_id, key_hash, key, text, held),
                )
                conn.execute(
                    "INSERT INTO daily_records (day, entry_id, record) VALUES (?, ?, ?)",
                    (number, entry_id, packed),
                )
                recorded = Recorded(
                    True, RankedEntry(_rank(conn, number, key, held), entry_id, entry)
                )
            if recorded.ranked.entry.result == WON and recorded.ranked.entry.counts:
                # Also when the entry was there: a hook run again after a crash adds it.
                conn.execute(
                    "INSERT OR IGNORE INTO daily_won (key_hash, day) VALUES (?, ?)",
                    (key_hash, number),
                )
                conn.execute(
                    "INSERT INTO daily_winners (key_hash, last_day) VALUES (?, ?)"
                    " ON CONFLICT (key_hash) DO UPDATE"
                    " SET last_day = max(last_day, excluded.last_day)",
                    (key_hash, number),
                )
            return recorded

        recorded = await self.broker.transact(write)
        if recorded.created and recorded.ranked.rank is not None:  # a held entry stays quiet
            await self.broker.publish(daily_channel(day), published(day, recorded.ranked))
        return recorded

    async def rename(self, day: date, key_hash: str, name: str) -> bool:
        if self._expired(day):
            return False
        number = day.toordinal()

        def write(conn: sqlite3.Connection) -> bool:
            row = conn.execute(
                "SELECT entry FROM daily_entries WHERE day = ? AND key_hash = ?",
                (number, key_hash),
            ).fetchone()
            if row is None:
                return False
            entry = {**json.loads(row[0]), "name": name}
            conn.execute(
                "UPDATE daily_entries SET entry = ? WHERE day = ? AND key_hash = ?",
                (json.dumps(entry, separators=(",", ":")), number, key_hash),
            )
            return True

        return await self.broker.transact(write)

    async def decide(self, day: date, entry_id: int, decision: Decision) -> RankedEntry | None:
        if self._expired(day):
            return None
        number = day.toordinal()

        def write(conn: sqlite3.Connection) -> RankedEntry | None:
            row = conn.execute(
                "SELECT key_hash, ranking_key, entry FROM daily_entries"
                " WHERE day = ? AND entry_id = ?",
                (number, entry_id),
            ).fetchone()
            if row is None:
                return None
            key_hash, key = str(row[0]), str(row[1])
            entry = dataclasses.replace(DailyEntry.from_dict(json.loads(row[2])), decision=decision)
            held = int(not entry.counts)
            conn.execute(
                "UPDATE daily_entries SET entry = ?, held = ? WHERE day = ? AND entry_id = ?",
                (json.dumps(entry.to_dict(), separators=(",", ":")), held, number, entry_id),
            )
            if entry.counts and entry.result == WON:
                conn.execute(
                    "INSERT OR IGNORE INTO daily_won (key_hash, day) VALUES (?, ?)",
                    (key_hash, number),
                )
                conn.execute(
                    "INSERT INTO daily_winners (key_hash, last_day) VALUES (?, ?)"
                    " ON CONFLICT (key_hash) DO UPDATE"
                    " SET last_day = max(last_day, excluded.last_day)",
                    (key_hash, number),
                )
            else:
                conn.execute(
                    "DELETE FROM daily_won WHERE key_hash = ? AND day = ?", (key_hash, number)
                )
            return RankedEntry(_rank(conn, number, key, held), entry_id, entry)

        return await self.broker.transact(write)

    async def reviewed(self, day: date, limit: int) -> list[RankedEntry]:
        if self._expired(day):
            return []
        number = day.toordinal()

        def read(conn: sqlite3.Connection) -> list[RankedEntry]:
            # A scan of the day's entries (the desk asks, rarely), newest first.
            rows = conn.execute(
                "SELECT entry_id, ranking_key, entry, held FROM daily_entries WHERE day = ?"
                " AND (json_extract(entry, '$.review') IS NOT NULL"
                " OR json_extract(entry, '$.decision') IS NOT NULL)"
                " ORDER BY entry_id DESC LIMIT ?",
                (number, limit),
            ).fetchall()
            return [
                RankedEntry(
                    _rank(conn, number, key, held),
                    int(entry_id),
                    DailyEntry.from_dict(json.loads(text)),
                )
                for entry_id, key, text, held in rows
            ]

        return await self.broker.query(read)

    async def page(self, day: date, offset: int, limit: int) -> Page:
        check_page(offset, limit)
        if self._expired(day):
            return Page(0, [])
        number = day.toordinal()

        def read(conn: sqlite3.Connection) -> tuple[int, list[tuple[int, str]]]:
            total = conn.execute(
                "SELECT count(*) FROM daily_entries WHERE day = ? AND held = 0", (number,)
            ).fetchone()[0]
            rows = []
            if limit:
                rows = conn.execute(
                    "SELECT entry_id, entry FROM daily_entries WHERE day = ? AND held = 0"
                    " ORDER BY ranking_key LIMIT ? OFFSET ?",
                    (number, limit, offset),
                ).fetchall()
            return int(total), rows

        total, rows = await self.broker.query(read)
        entries = [
            RankedEntry(offset + i + 1, int(entry_id), DailyEntry.from_dict(json.loads(text)))
            for i, (entry_id, text) in enumerate(rows)
        ]
        return Page(total, entries)

    async def player(self, day: date, key_hash: str) -> RankedEntry | None:
        if self._expired(day):
            return None
        number = day.toordinal()

        def read(conn: sqlite3.Connection) -> RankedEntry | None:
            row = conn.execute(
                "SELECT entry_id, ranking_key, entry, held FROM daily_entries"
                " WHERE day = ? AND key_hash = ?",
                (number, key_hash),
            ).fetchone()
            if row is None:
                return None
            entry = DailyEntry.from_dict(json.loads(row[2]))
            return RankedEntry(_rank(conn, number, row[1], row[3]), int(row[0]), entry)

        return await self.broker.query(read)

    async def game_record(self, day: date, entry_id: int) -> RecordDict | None:
        if self._expired(day):
            return None
        row = await self.broker.query(
            lambda conn: conn.execute(
                "SELECT record FROM daily_records WHERE day = ? AND entry_id = ?",
                (day.toordinal(), entry_id),
            ).fetchone()
        )
        return None if row is None else unpack_record(row[0])

    async def won_days(self, key_hash: str, upto: date, limit: int) -> list[date]:
        last_expired = self._last_expired(self.broker.now_ms())

        def read(conn: sqlite3.Connection) -> list[tuple[int]]:
            # Nothing once the last win is past its retention (Redis: the set expired).
            return conn.execute(
                "SELECT day FROM daily_won WHERE key_hash = ? AND day <= ?"
                " AND (SELECT last_day FROM daily_winners WHERE key_hash = ?) > ?"
                " ORDER BY day DESC LIMIT ?",
                (key_hash, upto.toordinal(), key_hash, last_expired, limit),
            ).fetchall()

        return [date.fromordinal(row[0]) for row in await self.broker.query(read)]

    def _age(self, conn: sqlite3.Connection, now_ms: int) -> bool:
        """Delete a bounded part of what is past the retention; True while more is left."""
        last = self._last_expired(now_ms)
        more = False
        for table in ("daily_attempts", "daily_entries", "daily_records"):
            deleted = conn.execute(
                f"DELETE FROM {table} WHERE rowid IN"
                f" (SELECT rowid FROM {table} WHERE day <= ? LIMIT ?)",
                (last, AGE_ROWS),
            ).rowcount
            more = more or deleted == AGE_ROWS
        winners = conn.execute(
            "SELECT key_hash FROM daily_winners WHERE last_day <= ? LIMIT ?", (last, AGE_WINNERS)
        ).fetchall()
        for (key_hash,) in winners:
            conn.execute("DELETE FROM daily_won WHERE key_hash = ?", (key_hash,))
            conn.execute("DELETE FROM daily_winners WHERE key_hash = ?", (key_hash,))
        return more or len(winners) == AGE_WINNERS
