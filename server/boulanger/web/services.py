"""The services of one server process, made once and handed to the routes.

:class:`Server` holds the broker, the race hubs, the daily challenge, the
address limits, the solver pool and the quick-race queue, and creates races.
:func:`boulanger.web.app.create_app` makes one and puts it on the app's state;
the routes' modules reach it there (they import this module for its type).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from typing import Any

from ..broker import Store, open_store
from ..engine import GameCode
from ..race.ids import new_race_id, new_secret, secret_hash
from ..race.race import RaceMeta
from .accounts import Accounts
from .daily import Daily
from .hub import Hubs, RaceHub, now_ms
from .limits import AddressLimits
from .quick import QuickRaces
from .settings import Settings
from .solving import SolverPool

log = logging.getLogger(__name__)

SWEEP_INTERVAL_S = 30
FULL_COLLECTION_SWEEPS = 10  # every 5 minutes


class Server:
    """Everything one server process holds: broker, hubs, daily challenge, limits,
    solver pool and quick races; made once by :func:`boulanger.web.app.create_app`.

    A ``store`` given is the caller's, started before and closed after: apps
    that share one in a process stand for processes sharing a deployment's.
    """

    def __init__(self, settings: Settings, store: Store | None = None) -> None:
        self.settings = settings
        self._own_store = store is None
        if store is None:
            store = open_store(
                settings.broker_url, settings.replica_wait, settings.daily_retention_days
            )
        self.store = store
        self.broker = store.broker
        # The daily challenge: its store and live leaderboards; it records ranked
        # attempts when their races are over (boulanger.web.daily).
        self.daily = Daily(store, settings)
        # Accounts, sessions, histories and ratings (boulanger.web.accounts).
        self.accounts = Accounts(self)
        self.hubs = Hubs(
            self.broker,
            settings.idle_race_s,
            on_over=self._race_over,
            judge_after_s=settings.judge_after_s,
        )
        # Per client address, counted in the store (boulanger.web.limits).
        self.addresses = AddressLimits(
            store.limits,
            settings.max_connections_per_address,
            settings.races_per_minute_per_address,
            settings.address_lease_s,
        )
        self.solver = SolverPool(settings.catalog_seed)
        self.quick = QuickRaces(self)  # the public queue of POST /api/quick
        self.stopping = False
        self._sweeper: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Connect the broker, start the hubs, the limits and the sweep of idle hubs."""
        if self._own_store:
            await self.store.start()
        await self.hubs.start()
        await self.addresses.start()
        self._sweeper = asyncio.create_task(self._sweep_loop())

    async def stop(self) -> None:
        """Close everything, in the order the services depend on each other."""
        self.stopping = True
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        await self.quick.close()
        await self.hubs.close()
        await self.daily.close()  # daily challenge
        await self.addresses.close()
        if self._own_store:
            await self.store.close()
        self.solver.close()

    async def _race_over(self, hub: RaceHub) -> None:
        await self.daily.on_over(hub)
        await self.accounts.on_over(hub)

    async def _sweep_loop(self) -> None:
        sweeps = 0
        while True:
            await asyncio.sleep(SWEEP_INTERVAL_S)
            sweeps += 1
            try:
                await self.hubs.sweep()
            except Exception:
                log.exception("closing idle race hubs failed")
            self.addresses.sweep()
            if sweeps % FULL_COLLECTION_SWEEPS == 0:
                gc.collect()  # see boulanger serve: the oldest generation is collected here

    def race_meta(
        self,
        race_id: str,
        code: GameCode,
        host_key_hash: str,
        *,
        practice: bool = False,
        **fields: Any,
    ) -> RaceMeta:
        """What is fixed of a new race, with this server's settings: every race is made here.

        ``fields``: the rest of :class:`RaceMeta` (par, daily, hidden_deal...).
        """
        return RaceMeta(
            race_id=race_id,
            code=str(code),
            created_at=now_ms(),
            host_key_hash=host_key_hash,
            time_limit_s=self.settings.time_limit_s,
            # A practice game is a race of one: it starts at once, no countdown.
            countdown_ms=0 if practice else self.settings.countdown_ms,
            practice=practice,
            # Practice games may take hints: their results prove nothing.
            review=None if practice else self.settings.review_limits().to_dict(),
            **fields,
        )

    async def create_race(
        self,
        *,
        cells: int = 4,
        code: GameCode | None = None,
        practice: bool = False,
        open_boards: bool = False,
        host_key_hash: str | None = None,
    ) -> dict[str, Any]:
        """Create a race on a catalog deal (or the given code); answer the creator's view.

        A deal picked here stays secret until the race starts (its code is
        null in the answer), and is never today's daily deal.
        """
        par: int | None
        winnable: bool | None
        hidden = code is None
        if code is None:
            code, par, winnable = self.solver.pick(cells, avoid=self.daily.deal_today())
        else:
            winnable, par = await self.solver.judge(code, self.settings.solve_budget_s)
        race_id = new_race_id()
        host_key = new_secret()
        meta = self.race_meta(
            race_id,
            code,
            host_key_hash or secret_hash(host_key),
            practice=practice,
            par=par,
            winnable=winnable,
            hidden_deal=hidden,
            open_boards=open_boards,
        )
        await self.broker.create_race(race_id, meta.to_dict())
        return {
            "race_id": race_id,
            "code": None if hidden else str(code),
            "url": f"/race/{race_id}",
            "host_key": host_key,
            "par": par,
            "winnable": winnable,
            "open_boards": open_boards,
        }

    async def hint(self, record: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        """A hint for a game record, searched in the solver pool."""
        return await self.solver.hint(record, self.settings.hint_budget_s)
