"""Quick races: the queue behind ``POST /api/quick`` (:mod:`.http`) and the starter
that runs them.

A thin shell around :mod:`boulanger.race.quick`: it creates races on
catalog deals (proven winnable, like every race the server deals itself),
sends newcomers to the open one, and starts each race when the queue says
so. A quick race has no host: the host key is made and thrown away, so
nobody but this starter can start it. The queue lives in this process (with
several processes behind a proxy, each has its own queue).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TypedDict

from ..broker import BrokerUnavailable
from ..race.errors import Refused
from ..race.quick import QuickQueue, QuickRace, start_event
from .clock import now_ms
from .hub import Hubs, RaceHub
from .races import Races
from .settings import Settings

log = logging.getLogger(__name__)

POLL_S = 0.25  # how often waiting races are looked at


class QuickPlace(TypedDict):
    """Where a newcomer to the quick races goes (``POST /api/quick``)."""

    race_id: str
    url: str
    cells: int
    players: int
    wait_s: float
    start_by: int | None


def connected(hub: RaceHub) -> int:
    """The race's players connected to it in this process (where its quick queue is)."""
    return len({conn.player_id for conn in hub.connections if conn.player_id is not None})


class QuickRaces:
    """This process's quick-race queue and the task that starts its races."""

    def __init__(self, settings: Settings, races: Races, hubs: Hubs) -> None:
        self.races = races
        self.hubs = hubs
        self.queue = QuickQueue(
            settings.quick_race_players,
            int(settings.quick_race_wait_s * 1000),
            place_ms=int(settings.quick_place_s * 1000),
            places_per_address=settings.quick_places_per_address,
        )
        self.lock = asyncio.Lock()
        self._starter: asyncio.Task[None] | None = None

    async def ask(self, cells: int, address: str = "") -> QuickPlace:
        """Where a newcomer from ``address`` goes: the open race for ``cells``, or a new one."""
        async with self.lock:
            open_race = self.queue.open.get(cells)
            if open_race is not None:
                hub = self.hubs.local(open_race.race_id)
                if hub is not None:
                    self.queue.seen(open_race, connected(hub))
            race = self.queue.waiting(cells, now_ms())
            if race is None:
                created = await self.races.create(cells=cells)
                race = self.queue.add(created["race_id"], cells, now_ms())
            self.queue.hand_out(race, address, now_ms())
            if self._starter is None or self._starter.done():
                self._starter = asyncio.create_task(self._run())
            return {
                "race_id": race.race_id,
                "url": f"/race/{race.race_id}",
                "cells": cells,
                "players": self.queue.players,
                "wait_s": self.queue.wait_ms / 1000,
                "start_by": race.start_by(self.queue.wait_ms),
            }

    async def _run(self) -> None:
        while self.queue.watched:
            await asyncio.sleep(POLL_S)
            for race in list(self.queue.watched.values()):
                try:
                    await self._check(race)
                except BrokerUnavailable:
                    continue  # looked at again on the next round
                except Exception:
                    log.exception("quick race %s: could not check it", race.race_id)
                    self.queue.started(race)

    async def _check(self, race: QuickRace) -> None:
        hub = await self.hubs.get(race.race_id)
        now = now_ms()
        if hub is None or hub.race.start_at is not None or hub.race.over_reason is not None:
            self.queue.started(race)
            return
        if race.second_at is None and now - race.created_at > self.queue.expire_ms:
            self.queue.started(race)  # nobody else came: it stops taking newcomers
            return
        if self.queue.should_start(race, connected(hub), now):
            with contextlib.suppress(Refused):
                await hub.submit(lambda: start_event(hub.race, now_ms()))
            self.queue.started(race)

    async def close(self) -> None:
        """Stop the starter task."""
        if self._starter is not None:
            self._starter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._starter
