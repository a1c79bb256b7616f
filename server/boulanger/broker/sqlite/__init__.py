"""The SQLite store: one durable file for one process (``sqlite:///path/to/file.db``).

- :mod:`.file`: the file's URL, its one-process lock, connections, backups.
- :mod:`.log`: :class:`SqliteBroker`, the race logs and the writer thread they share.
- :mod:`.kv`, :mod:`.daily`: accounts' keys and the daily challenge, in the same file.
- :mod:`.limits`: per-address counts, in the one process's memory.
"""

from __future__ import annotations

from ..contracts import Store
from .daily import SqliteDailyStore
from .kv import SqliteKeyValue
from .limits import SqliteLimits
from .log import SqliteBroker

__all__ = ["SqliteBroker", "SqliteDailyStore", "SqliteKeyValue", "SqliteLimits", "open_sqlite"]


def open_sqlite(url: str, *, replica_wait: int = 0, retention_days: int) -> Store:
    """The SQLite store of ``url``; its file is locked for this process at once."""
    broker = SqliteBroker(url)
    return Store(
        broker, SqliteKeyValue(broker), SqliteDailyStore(broker, retention_days), SqliteLimits()
    )
