"""The memory store's key-value part (accounts' keys): dictionaries, expiring by the clock."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable

from ..contracts import KeyValue


class MemoryKeyValue(KeyValue):
    """Keys in this process's memory, lost with the process."""

    def __init__(self) -> None:
        self.values: dict[str, tuple[str, float | None]] = {}
        self.lists: dict[str, list[str]] = defaultdict(list)
        self.zsets: dict[str, dict[str, float]] = defaultdict(dict)
        self.versions: dict[str, dict[str, int]] = defaultdict(dict)

    def _live(self, key: str) -> str | None:
        found = self.values.get(key)
        if found is None:
            return None
        value, expires = found
        if expires is not None and expires <= time.monotonic():
            del self.values[key]
            return None
        return value

    async def get(self, key: str) -> str | None:
        return self._live(key)

    async def set(self, key: str, value: str, ttl_s: float | None = None) -> None:
        self.values[key] = (value, None if ttl_s is None else time.monotonic() + ttl_s)

    async def set_nx(self, key: str, value: str, ttl_s: float | None = None) -> bool:
        if self._live(key) is not None:
            return False
        await self.set(key, value, ttl_s)
        return True

    async def update(self, key: str, change: Callable[[str | None], str]) -> str:
        # No await between the read and the write: nothing else runs in between.
        value = change(self._live(key))
        self.values[key] = (value, None)
        return value

    async def delete(self, key: str) -> None:
        self.values.pop(key, None)
        self.lists.pop(key, None)
        self.zsets.pop(key, None)
        self.versions.pop(key, None)

    async def incr(self, key: str, ttl_s: float) -> int:
        current = self._live(key)
        if current is None:
            await self.set(key, "1", ttl_s)
            return 1
        expires = self.values[key][1]
        self.values[key] = (str(int(current) + 1), expires)
        return int(current) + 1

    async def push(self, key: str, value: str, cap: int) -> None:
        found = self.lists[key]
        found.insert(0, value)
        del found[cap:]

    async def items(self, key: str, limit: int) -> list[str]:
        return list(self.lists.get(key, [])[:limit])

    async def zset(self, key: str, member: str, score: float, version: int) -> None:
        if self.versions[key].get(member, -1) >= version:
            return
        self.versions[key][member] = version
        self.zsets[key][member] = score

    async def zrem(self, key: str, member: str) -> None:
        self.zsets.get(key, {}).pop(member, None)
        self.versions.get(key, {}).pop(member, None)

    async def ztop(self, key: str, limit: int) -> list[tuple[str, float]]:
        found = self.zsets.get(key, {})
        return sorted(found.items(), key=lambda item: (-item[1], item[0]))[:limit]
