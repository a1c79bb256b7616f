"""The key-value part of a SQLite file that a running server holds, for the command line.

A server takes its SQLite file for itself (:func:`.file.lock`): one process
per file. The command line's few reads and writes of keys (``boulanger
moderators``) may still go to the file beside it: the file is in WAL mode,
the server reads keys from the file at every request (it keeps none in
memory), and each call here is one short transaction of its own, which
waits for the server's group commit (and the server for it) as SQLite's
locks say. Only reading a key and changing one atomically are offered.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

from ..contracts import KeyValue

BUSY_TIMEOUT_S = 10.0


class LiveKeyValue(KeyValue):
    """``get`` and ``update`` on the ``kv`` table of a server's SQLite file."""

    def __init__(self, path: Path) -> None:
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such SQLite file")
        self.conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)

    def close(self) -> None:
        self.conn.close()

    def _get(self, key: str) -> str | None:
        row = self.conn.execute(
            "SELECT value FROM kv WHERE key = ? AND (expires IS NULL OR expires > ?)",
            (key, int(time.time() * 1000)),
        ).fetchone()
        return None if row is None else str(row[0])

    async def get(self, key: str) -> str | None:
        return self._get(key)

    async def update(self, key: str, change: Callable[[str | None], str]) -> str:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            value = change(self._get(key))
            self.conn.execute(
                "INSERT OR REPLACE INTO kv (key, value, expires) VALUES (?, ?, NULL)", (key, value)
            )
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")
        return value

    def _no(self) -> NotImplementedError:
        return NotImplementedError("the command line reads and changes single keys only")

    async def set(self, key: str, value: str, ttl_s: float | None = None) -> None:
        raise self._no()

    async def set_nx(self, key: str, value: str, ttl_s: float | None = None) -> bool:
        raise self._no()

    async def delete(self, key: str) -> None:
        raise self._no()

    async def incr(self, key: str, ttl_s: float) -> int:
        raise self._no()

    async def push(self, key: str, value: str, cap: int) -> None:
        raise self._no()

    async def items(self, key: str, limit: int) -> list[str]:
        raise self._no()

    async def zset(self, key: str, member: str, score: float, version: int) -> None:
        raise self._no()

    async def zrem(self, key: str, member: str) -> None:
        raise self._no()

    async def ztop(self, key: str, limit: int) -> list[tuple[str, float]]:
        raise self._no()
