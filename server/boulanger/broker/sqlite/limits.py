"""The SQLite store's limits: in this process's memory, which is the whole store's.

A SQLite file has one process (its lock, :mod:`.file`), so that process's
counters are every counter of the store: the memory store's limits serve as
they are. They are not written to the file: a count matters for a minute,
not across a restart, and a connection opened would otherwise cost a write
to the disk (twice, with its close).
"""

from __future__ import annotations

from ..memory.limits import MemoryLimits


class SqliteLimits(MemoryLimits):
    """The limits of the one process that holds the file."""
