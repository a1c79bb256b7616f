"""The memory store's log: races and channels in this process's memory."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections import defaultdict

from ...codec import with_seq
from ...race.condition import LogState
from ...race.race import RaceMeta
from ..contracts import AppendRefused, Broker, Condition, Listener, race_channel


class MemoryBroker(Broker):
    """Everything in memory; lost when the process stops (the README says so)."""

    kind = "memory"

    def __init__(self, race_ttl_s: float = 24 * 3600) -> None:
        self.race_ttl_s = race_ttl_s
        self._created: dict[str, float] = {}  # insertion order is creation order
        self._metas: dict[str, RaceMeta] = {}
        self._logs: dict[str, list[str]] = defaultdict(list)
        self._states: dict[str, LogState] = {}
        self._listeners: dict[str, set[Listener]] = defaultdict(set)

    async def ping(self) -> bool:
        return True

    async def create_race(self, meta: RaceMeta) -> None:
        race_id = meta.race_id
        now = time.monotonic()
        # Forget races past their time, oldest first, so memory stays bounded.
        for old, created in list(self._created.items()):
            if created > now - self.race_ttl_s:
                break
            del self._created[old]
            self._metas.pop(old, None)
            self._logs.pop(old, None)
            self._states.pop(old, None)
        self._created[race_id] = now
        self._metas[race_id] = dataclasses.replace(meta)  # a copy: the caller's may change

    async def race_meta(self, race_id: str) -> RaceMeta | None:
        meta = self._metas.get(race_id)
        return None if meta is None else dataclasses.replace(meta)

    async def append(self, race_id: str, event: str, condition: Condition) -> int:
        state = self._states.get(race_id)
        if state is None:
            state = self._states[race_id] = LogState()
        seq = state.append(condition)
        if not seq:
            raise AppendRefused(f"race {race_id}: the log has moved on")
        text = with_seq(seq, event)
        self._logs[race_id].append(text)
        await self.publish(race_channel(race_id), text)
        return seq

    async def read(self, race_id: str, after: int) -> list[str]:
        return self._logs.get(race_id, [])[after:]

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
