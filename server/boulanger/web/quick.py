"""Quick races: the queue behind ``POST /api/quick`` (:mod:`.http`) and the starter
that runs them.

A thin shell around :mod:`boulanger.race.quick`: it creates races on
catalog deals (proven winnable, like every race the server deals itself),
sends newcomers to the open one, and starts each race when the queue says
so. A quick race has no host: the host key is made and thrown away, so
nobody but this starter can start it. The queue lives in this process (with
several processes behind a proxy, each has its own queue).

While a race waits, the starter tells everyone connected to it (in this
process) the queue's state, a ``queue`` message: the players connected and
the one start time, the same for all. ``GET /api/quick`` answers how many
players wait in quick races and race now, summed over the processes through
the store (each process adds its own figures, at most every few seconds).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import TypedDict

from .. import codec
from ..broker import BrokerUnavailable, KeyValue
from ..race import protocol as p
from ..race.errors import Refused
from ..race.ids import new_secret
from ..race.quick import QuickQueue, QuickRace, start_event
from .clock import now_ms
from .connection import Connection
from .hub import Hubs, RaceHub
from .races import Races
from .settings import Settings

log = logging.getLogger(__name__)

POLL_S = 0.25  # how often waiting races are looked at
COUNTS_KEY = "bk:quick:{counts}"  # every process's figures: {process: [waiting, racing, at]}
COUNTS_FRESH_MS = 2_000  # the figures answered are at most this old
COUNTS_STALE_MS = 10_000  # a process silent this long counts no more


class QuickCounts(TypedDict):
    """How many players wait in quick races and race now (``GET /api/quick``)."""

    waiting: int
    racing: int


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


def racing(hubs: Hubs) -> int:
    """The players connected to this process who play a race now (practice aside).

    Connections, not the races' players: a race held by several processes
    counts each player once, where their connection is."""
    count = 0
    for hub in hubs.all():
        race = hub.race
        if race.start_at is None or race.over_reason is not None or race.meta.practice:
            continue
        playing = {conn.player_id for conn in hub.connections if conn.player_id is not None}
        count += sum(1 for pid in playing if pid in race.players and not race.players[pid].done)
    return count


def merged(found: str | None, process: str, mine: tuple[int, int], now: int) -> str:
    """The store's figures of every process with this one's (``mine``) put in."""
    try:
        data = json.loads(found) if found else {}
    except ValueError:
        data = {}
    if not isinstance(data, dict):
        data = {}
    kept = {
        key: value
        for key, value in data.items()
        if isinstance(value, list) and len(value) == 3 and now - value[2] < COUNTS_STALE_MS
    }
    kept[process] = [mine[0], mine[1], now]
    return json.dumps(kept, separators=(",", ":"))


class QuickRaces:
    """This process's quick-race queue and the task that starts its races."""

    def __init__(
        self, settings: Settings, races: Races, hubs: Hubs, kv: KeyValue | None = None
    ) -> None:
        self.races = races
        self.hubs = hubs
        self.kv = kv
        self.process = new_secret()[:12]  # this process's name among the figures
        self._counts: QuickCounts | None = None
        self._counts_at = 0
        # What each connection of a waiting race was last told: (waiting, start_by).
        self._told: dict[str, dict[Connection, tuple[int, int | None]]] = {}
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

    def waiting(self) -> int:
        """The players connected to this process's races waiting to start."""
        return sum(race.joined for race in self.queue.watched.values())

    async def counts(self) -> QuickCounts:
        """How many players wait and race now, over every process (this one's
        alone when the store does not answer); at most :data:`COUNTS_FRESH_MS` old."""
        now = now_ms()
        if self._counts is not None and now - self._counts_at < COUNTS_FRESH_MS:
            return self._counts
        mine = (self.waiting(), racing(self.hubs))
        counts: QuickCounts = {"waiting": mine[0], "racing": mine[1]}
        if self.kv is not None:
            try:
                text = await self.kv.update(
                    COUNTS_KEY, lambda found: merged(found, self.process, mine, now)
                )
                figures = json.loads(text).values()
                counts = {
                    "waiting": sum(int(f[0]) for f in figures),
                    "racing": sum(int(f[1]) for f in figures),
                }
            except BrokerUnavailable:
                pass
        self._counts, self._counts_at = counts, now
        return counts

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
            for race_id in [r for r in self._told if r not in self.queue.watched]:
                del self._told[race_id]

    def _tell(self, race: QuickRace, hub: RaceHub, now: int) -> None:
        """Send the race's queue state to its connections not told it yet."""
        state = (race.joined, race.start_by(self.queue.wait_ms))
        told = self._told.get(race.race_id, {})
        text = None
        for conn in hub.connections:
            if told.get(conn) == state:
                continue
            if text is None:
                message = p.QueueState(state[0], self.queue.players, state[1], now)
                text = codec.encode(message)
            conn.send(text)
        self._told[race.race_id] = dict.fromkeys(hub.connections, state)

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
            return
        self._tell(race, hub, now)

    async def close(self) -> None:
        """Stop the starter task."""
        if self._starter is not None:
            self._starter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._starter
