"""The daily challenge over HTTP and WebSocket (docs/protocol.md, "Daily challenge").

- ``GET /api/daily`` and ``GET /api/daily/{date}``: the deal of a day.
- ``POST /api/daily/{date}/attempts``: a one-player race on the day's deal.
  A player key's first attempt of today is *ranked*: its result goes on the
  leaderboard when the race is over (:meth:`Daily.on_over`, the race hubs'
  on-over hook). Later attempts, and attempts on past days, are practice.
- ``GET /api/daily/{date}/leaderboard``, ``.../me`` and ``.../records/{entry_id}``.
- ``/ws/daily/{date}``: the live leaderboard. Each process subscribes once per
  day watched to the day's channel, where every new entry is published, and
  pushes the top of the leaderboard to its watchers at most twice a second.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from datetime import date
from typing import TypedDict

from .. import codec
from ..broker import Broker, BrokerUnavailable, DailyStore
from ..broker.contracts import daily_channel, parse_published
from ..engine import GameCode
from ..race import daily as d
from ..race.errors import Refused
from ..solver import catalog
from .clock import now_ms
from .connection import Connection, send_to_all
from .hub import Hubs, RaceHub
from .lines import LinesPending
from .settings import Settings

log = logging.getLogger(__name__)

LIVE_TOP = 20  # entries in each live leaderboard message
LIVE_INTERVAL_S = 0.5  # at most two live messages a second per watcher
RECENT_MAX = 20


class Challenge(TypedDict):
    """A day's challenge as ``GET /api/daily`` answers it."""

    date: str
    code: str | None
    par: int | None
    next_at: int


class Daily:
    """The daily challenge in one server process: its store and live leaderboards."""

    def __init__(self, broker: Broker, store: DailyStore, settings: Settings) -> None:
        """``broker`` carries the live leaderboards; ``store`` keeps the days."""
        self.broker = broker
        self.settings = settings
        self.store = store
        self.leaderboards: dict[date, LiveLeaderboard] = {}

    async def close(self) -> None:
        """Close every live leaderboard of this process."""
        for leaderboard in list(self.leaderboards.values()):
            await leaderboard.close()
        self.leaderboards.clear()

    def game_code(self, day: date) -> GameCode:
        """The deal of ``day``, on this server's schedule (its daily secret, if any)."""
        return d.game_code(day, self.settings.daily_secret)

    def deal_today(self) -> int:
        """Today's daily deal number: no other race may be dealt it until the day ends."""
        return self.game_code(d.today(now_ms())).deal

    def challenge(self, day: date) -> Challenge:
        """A day's challenge as ``GET /api/daily`` answers it: today's code is withheld.

        Today's deal reaches a player only in the ``race_starting`` of their own
        attempt; anyone may see it once the day is over.
        """
        code = self.game_code(day)
        entry = catalog.lookup(code)
        return {
            "date": day.isoformat(),
            "code": None if day >= d.today(now_ms()) else str(code),
            "par": None if entry is None else entry.par,
            "next_at": d.next_at(day),
        }

    # -- results -----------------------------------------------------------

    async def on_over(self, hub: RaceHub) -> None:
        """The race hubs' on-over hook: record a ranked attempt's result (idempotent)."""
        race = hub.race
        meta = race.meta
        if meta.daily is None or not meta.ranked or meta.player_key_hash is None:
            return
        if race.lines_pending():  # the hook records it once the win's line is judged
            return
        host = next((pl for pl in race.players.values() if pl.host), None)
        if host is None:  # nobody joined as the host: the race cannot have started
            return
        entry = d.entry_from_standing(race.standing(host), meta.time_limit_s * 1000, now_ms())
        record = race.record(host.player_id).to_dict()
        recorded = await self.store.record(
            d.parse_date(meta.daily), meta.player_key_hash, entry, record
        )
        if recorded.created:
            log.info("daily %s: entry %d recorded", meta.daily, recorded.ranked.entry_id)

    async def settle(self, hubs: Hubs, day: date, key_hash: str) -> d.RankedEntry | None:
        """The player's entry, recording it first when their ranked race is over unrecorded.

        A race left without connections is closed in its process before its
        time limit passes; opening it again ends it (and records it) here.
        """
        ranked = await self.store.player(day, key_hash)
        if ranked is not None:
            return ranked
        race_id = await self.store.attempt(day, key_hash)
        hub = None if race_id is None else await hubs.get(race_id)
        if hub is None:
            return None
        await hub.catch_up()
        if hub.race.over_reason is None and hub.race.decide_over(now_ms()) is not None:
            with contextlib.suppress(Refused):
                await hub.submit(lambda: hub.race.decide_over(now_ms()))
        if hub.race.over_reason is None:
            return None
        # The whole on-over hook: a win's line is judged before it is recorded.
        with contextlib.suppress(LinesPending):
            await (hub.on_over or self.on_over)(hub)
        return await self.store.player(day, key_hash)

    # -- live leaderboards -----------------------------------------------

    async def watch(self, day: date, conn: Connection) -> LiveLeaderboard:
        """Add a watcher to a day's live leaderboard (opened for the first) and greet it."""
        leaderboard = self.leaderboards.get(day)
        if leaderboard is None:
            leaderboard = self.leaderboards[day] = LiveLeaderboard(self.broker, self.store, day)
            await leaderboard.open()
        await leaderboard.ready.wait()
        try:
            await leaderboard.greet(conn)
        except BaseException:
            await self.leave(leaderboard, conn)
            raise
        return leaderboard

    async def leave(self, leaderboard: LiveLeaderboard, conn: Connection) -> None:
        """Remove a watcher; the last one out closes the day's live leaderboard."""
        leaderboard.connections.discard(conn)
        if not leaderboard.connections and self.leaderboards.get(leaderboard.day) is leaderboard:
            del self.leaderboards[leaderboard.day]
            await leaderboard.close()


class LiveLeaderboard:
    """One day's live leaderboard in this process: one subscription, coalesced pushes.

    New entries (from any process, through the broker) only mark the leaderboard
    changed; a push reads the top of the leaderboard once and sends the same
    text to every watcher here, no sooner than ``LIVE_INTERVAL_S`` after the
    previous push. A lost pub/sub message costs nothing but delay: every push
    reads the store, and a broker reconnect triggers one.
    """

    def __init__(self, broker: Broker, store: DailyStore, day: date) -> None:
        self.broker = broker
        self.store = store
        self.day = day
        self.channel = daily_channel(day)
        self.connections: set[Connection] = set()
        self.recent: deque[d.EntryWire] = deque(maxlen=RECENT_MAX)
        self.ready = asyncio.Event()
        self.pushes = 0
        self._lock = asyncio.Lock()
        self._dirty = False
        self._last = 0.0
        self._task: asyncio.Task[None] | None = None

    async def open(self) -> None:
        """Subscribe to the day's channel (``ready`` is set even if that fails)."""
        try:
            await self.broker.subscribe(self.channel, self)
        finally:
            self.ready.set()

    async def close(self) -> None:
        """Stop pushing and unsubscribe."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.broker.unsubscribe(self.channel, self)

    def on_message(self, data: str) -> None:
        try:
            ranked = parse_published(data)
            if ranked.rank is not None:  # else taken off the leaderboard: only read it again
                self.recent.append(ranked.to_wire())
        except (ValueError, KeyError, TypeError):
            log.warning("daily %s: unreadable message on %s", self.day, self.channel)
        self._changed()

    def on_resync(self) -> None:
        self._changed()

    def _changed(self) -> None:
        self._dirty = True
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._push_loop())

    async def _message(self, recent: list[d.EntryWire]) -> str:
        page = await self.store.page(self.day, 0, LIVE_TOP)
        entries = [ranked.to_wire() for ranked in page.entries]
        return codec.encode(d.DailyLeaderboard(self.day.isoformat(), page.total, entries, recent))

    async def greet(self, conn: Connection) -> None:
        """Send the leaderboard to a new watcher, then add it to the pushes' audience."""
        async with self._lock:
            conn.send(await self._message([]))
            self.connections.add(conn)

    async def _push_loop(self) -> None:
        while self._dirty and self.connections:
            wait = self._last + LIVE_INTERVAL_S - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            async with self._lock:
                self._dirty = False
                recent = list(self.recent)
                self.recent.clear()
                self._last = time.monotonic()
                try:
                    text = await self._message(recent)
                except BrokerUnavailable:
                    self.recent.extendleft(reversed(recent))
                    self._dirty = True
                    continue
                except Exception:
                    log.exception("daily %s: live leaderboard push failed", self.day)
                    continue
                self.pushes += 1
                send_to_all(list(self.connections), text)
