"""The memory store: everything in this process's memory, lost when it stops (``memory://``).

For tests and for trying the server: one process, nothing to install.
"""

from __future__ import annotations

from ..contracts import Store
from .daily import MemoryDailyStore
from .kv import MemoryKeyValue
from .limits import MemoryLimits
from .log import MemoryBroker

__all__ = ["MemoryBroker", "MemoryDailyStore", "MemoryKeyValue", "MemoryLimits", "open_memory"]


def open_memory(url: str, *, replica_wait: int = 0, retention_days: int) -> Store:
    """A new memory store (``memory://``; the URL says nothing more)."""
    broker = MemoryBroker()
    return Store(broker, MemoryKeyValue(), MemoryDailyStore(broker, retention_days), MemoryLimits())
