"""The SQLite store's key-value part (accounts' keys, :mod:`..accounts`), in the log's file.

Tables (the log creates them with its own)::

    kv        key -> value, and when it expires (ms; NULL: never)
    kv_list   (key, n) -> value: lists, newest with the highest n
    kv_zset   (key, member) -> score: top lists
    kv_zset_version  (key, member) -> version of the score there (see KeyValue.zset)

Writes go through the broker's writer (one group commit with the appends),
reads through its readers; expired keys read as absent and are deleted by
the broker's ageing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ..contracts import KeyValue
from .log import SqliteBroker

SCHEMA = """
CREATE TABLE IF NOT EXISTS kv (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    expires INTEGER
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS kv_by_expiry ON kv (expires) WHERE expires IS NOT NULL;
CREATE TABLE IF NOT EXISTS kv_list (
    key TEXT NOT NULL,
    n INTEGER NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (key, n)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS kv_zset (
    key TEXT NOT NULL,
    member TEXT NOT NULL,
    score REAL NOT NULL,
    PRIMARY KEY (key, member)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS kv_zset_by_score ON kv_zset (key, score);
CREATE TABLE IF NOT EXISTS kv_zset_version (
    key TEXT NOT NULL,
    member TEXT NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (key, member)
) WITHOUT ROWID;
"""

AGE_ROWS = 2000


class SqliteKeyValue(KeyValue):
    """Accounts' keys in the SQLite broker's file."""

    def __init__(self, broker: SqliteBroker) -> None:
        self.broker = broker
        broker.add_schema(SCHEMA)
        broker.add_maintenance(self._age)

    def _expires(self, ttl_s: float | None) -> int | None:
        return None if ttl_s is None else self.broker.now_ms() + int(ttl_s * 1000)

    @staticmethod
    def _live(conn: sqlite3.Connection, key: str, now: int) -> str | None:
        row = conn.execute(
            "SELECT value FROM kv WHERE key = ? AND (expires IS NULL OR expires > ?)", (key, now)
        ).fetchone()
        return None if row is None else str(row[0])

    async def get(self, key: str) -> str | None:
        now = self.broker.now_ms()
        return await self.broker.query(lambda conn: self._live(conn, key, now))

    async def set(self, key: str, value: str, ttl_s: float | None = None) -> None:
        expires = self._expires(ttl_s)

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT OR REPLACE INTO kv (key, value, expires) VALUES (?, ?, ?)",
                (key, value, expires),
            )

        await self.broker.transact(write)

    async def set_nx(self, key: str, value: str, ttl_s: float | None = None) -> bool:
        now, expires = self.broker.now_ms(), self._expires(ttl_s)

        def write(conn: sqlite3.Connection) -> bool:
            if self._live(conn, key, now) is not None:
                return False
            conn.execute(
                "INSERT OR REPLACE INTO kv (key, value, expires) VALUES (?, ?, ?)",
                (key, value, expires),
            )
            return True

        return await self.broker.transact(write)

    async def update(self, key: str, change: Callable[[str | None], str]) -> str:
        now = self.broker.now_ms()

        def write(conn: sqlite3.Connection) -> str:
            # Read and write in the writer's one transaction: no write comes in between.
            value = change(self._live(conn, key, now))
            conn.execute(
                "INSERT OR REPLACE INTO kv (key, value, expires) VALUES (?, ?, NULL)",
                (key, value),
            )
            return value

        return await self.broker.transact(write)

    async def delete(self, key: str) -> None:
        def write(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM kv WHERE key = ?", (key,))
            conn.execute("DELETE FROM kv_list WHERE key = ?", (key,))
            conn.execute("DELETE FROM kv_zset WHERE key = ?", (key,))
            conn.execute("DELETE FROM kv_zset_version WHERE key = ?", (key,))

        await self.broker.transact(write)

    async def incr(self, key: str, ttl_s: float) -> int:
        now, expires = self.broker.now_ms(), self._expires(ttl_s)

        def write(conn: sqlite3.Connection) -> int:
            current = self._live(conn, key, now)
            if current is None:
                conn.execute(
                    "INSERT OR REPLACE INTO kv (key, value, expires) VALUES (?, '1', ?)",
                    (key, expires),
                )
                return 1
            conn.execute("UPDATE kv SET value = ? WHERE key = ?", (str(int(current) + 1), key))
            return int(current) + 1

        return await self.broker.transact(write)

    async def push(self, key: str, value: str, cap: int) -> None:
        def write(conn: sqlite3.Connection) -> None:
            row = conn.execute("SELECT max(n) FROM kv_list WHERE key = ?", (key,)).fetchone()
            n = (row[0] or 0) + 1
            conn.execute("INSERT INTO kv_list (key, n, value) VALUES (?, ?, ?)", (key, n, value))
            conn.execute("DELETE FROM kv_list WHERE key = ? AND n <= ?", (key, n - cap))

        await self.broker.transact(write)

    async def items(self, key: str, limit: int) -> list[str]:
        def read(conn: sqlite3.Connection) -> list[str]:
            rows = conn.execute(
                "SELECT value FROM kv_list WHERE key = ? ORDER BY n DESC LIMIT ?", (key, limit)
            ).fetchall()
            return [str(row[0]) for row in rows]

        return await self.broker.query(read)

    async def zset(self, key: str, member: str, score: float, version: int) -> None:
        def write(conn: sqlite3.Connection) -> None:
            seen = conn.execute(
                "SELECT version FROM kv_zset_version WHERE key = ? AND member = ?", (key, member)
            ).fetchone()
            if seen is not None and seen[0] >= version:
                return
            conn.execute(
                "INSERT OR REPLACE INTO kv_zset_version (key, member, version) VALUES (?, ?, ?)",
                (key, member, version),
            )
            conn.execute(
                "INSERT OR REPLACE INTO kv_zset (key, member, score) VALUES (?, ?, ?)",
                (key, member, score),
            )

        await self.broker.transact(write)

    async def zrem(self, key: str, member: str) -> None:
        def write(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM kv_zset WHERE key = ? AND member = ?", (key, member))
            conn.execute("DELETE FROM kv_zset_version WHERE key = ? AND member = ?", (key, member))

        await self.broker.transact(write)

    async def ztop(self, key: str, limit: int) -> list[tuple[str, float]]:
        def read(conn: sqlite3.Connection) -> list[tuple[str, float]]:
            rows = conn.execute(
                "SELECT member, score FROM kv_zset WHERE key = ? "
                "ORDER BY score DESC, member LIMIT ?",
                (key, limit),
            ).fetchall()
            return [(str(m), float(s)) for m, s in rows]

        return await self.broker.query(read)

    @staticmethod
    def _age(conn: sqlite3.Connection, now_ms: int) -> bool:
        gone = conn.execute(
            "DELETE FROM kv WHERE key IN (SELECT key FROM kv WHERE expires <= ? LIMIT ?)",
            (now_ms, AGE_ROWS),
        ).rowcount
        return gone >= AGE_ROWS
