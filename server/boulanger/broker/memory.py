"""The embedded broker: logs and channels in this process's memory."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from typing import Any

from ..codec import with_seq
from .accounts import KeyValue, MemoryKeyValue
from .base import AppendRefused, Broker, Condition, Listener, race_channel
from .daily import DailyStore, MemoryDailyData, MemoryDailyStore


class MemoryBroker(Broker):
    """Everything in memory; lost when the process stops (the README says so)."""

    kind = "memory"

    def __init__(self, race_ttl_s: float = 24 * 3600) -> None:
        self.race_ttl_s = race_ttl_s
        self._created: dict[str, float] = {}  # insertion order is creation order
        self._metas: dict[str, dict[str, Any]] = {}
        self._logs: dict[str, list[str]] = defaultdict(list)
        self._counts: dict[str, dict[str, int]] = {}  # race -> player -> events
        self._over: set[str] = set()
        self._listeners: dict[str, set[Listener]] = defaultdict(set)
        self.daily_data = MemoryDailyData()  # every daily store of this broker shares it
        self._key_value = MemoryKeyValue()  # as is the accounts' store

    async def ping(self) -> bool:
        return True

    async def create_race(self, race_id: str, meta: dict[str, Any]) -> None:
        now = time.monotonic()
        # Forget races past their time, oldest first, so memory stays bounded.
        for old, created in list(self._created.items()):
            if created > now - self.race_ttl_s:
                break
            del self._created[old]
            self._metas.pop(old, None)
            self._logs.pop(old, None)
            self._counts.pop(old, None)
            self._over.discard(old)
        self._created[race_id] = now
        self._metas[race_id] = dict(meta)

    async def race_meta(self, race_id: str) -> dict[str, Any] | None:
        meta = self._metas.get(race_id)
        return None if meta is None else dict(meta)

    async def append(self, race_id: str, event: str, condition: Condition) -> int:
        log = self._logs[race_id]
        counts = self._counts.setdefault(race_id, {})
        if condition.log_length is not None and len(log) != condition.log_length:
            raise AppendRefused(f"race {race_id}: the log has moved on")
        player = condition.player_id
        if player is not None:
            if race_id in self._over or counts.get(player, 0) != condition.player_events:
                raise AppendRefused(f"race {race_id}: {player}'s events have moved on")
            counts[player] = condition.player_events + 1
        if condition.ends_race:
            self._over.add(race_id)
        seq = len(log) + 1
        text = with_seq(seq, event)
        log.append(text)
        await self.publish(race_channel(race_id), text)
        return seq

    async def read(self, race_id: str, after: int) -> list[str]:
        return self._logs.get(race_id, [])[after:]

    def key_value(self) -> KeyValue:
        return self._key_value

    def daily_store(self, retention_days: int) -> DailyStore:
        return MemoryDailyStore(self, self.daily_data, retention_days)

    async def subscribe(self, channel: str, listener: Listener) -> None:
        self._listeners[channel].add(listener)

    async def unsubscribe(self, channel: str, listener: Listener) -> None:
        listeners = self._listeners.get(channel)
        if listeners is not None:
            listeners.discard(listener)
            if not listeners:
                del self._listeners[channel]

    async def publish(self, channel: str, data: str) -> None:
        # Deliver on the next loop turn, as a network broker would: a
        # publisher never runs its own listeners in the middle of its work.
        loop = asyncio.get_running_loop()
        for listener in tuple(self._listeners.get(channel, ())):
            loop.call_soon(listener.on_message, data)
