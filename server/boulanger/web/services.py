"""The services of one server process, made once and handed to the routes.

:class:`Server` makes each service with what it uses (the store's parts,
the settings, the other services it calls) and holds them for the routes:
:func:`boulanger.web.app.create_app` makes one and puts it on the app's
state, and the route modules (``http``, ``daily_http``, ``accounts_http``,
``passkeys``, ``replays``, ``socket``) are the only ones that reach it there.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging

from ..broker import Store, open_store
from ..broker.accounts import AccountStore
from ..broker.desk import DeskStore
from .accounts import Accounts
from .daily import Daily
from .desk import Desk
from .hub import Hubs, RaceHub
from .limits import AddressLimits
from .lines import Lines
from .profiles import Profiles
from .quick import QuickRaces
from .races import Races
from .results import RaceResults
from .settings import Settings
from .solving import SolverPool

log = logging.getLogger(__name__)

SWEEP_INTERVAL_S = 30
FULL_COLLECTION_SWEEPS = 10  # every 5 minutes


class Server:
    """Everything one server process holds: the store, hubs, daily challenge, accounts,
    limits, solver pool, race creation and quick races; made once by
    :func:`boulanger.web.app.create_app`.

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
        self.daily = Daily(store.broker, store.daily, settings)
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
            settings.reviews_per_day_per_address,
        )
        # The solver's processes, shared fairly (boulanger.web.solving).
        self.solver = SolverPool(
            settings.catalog_seed, settings.solver_workers, settings.solver_queue
        )
        # Accounts, sessions, histories and ratings (boulanger.web.accounts); their
        # attempts counted per address and name in the store.
        desk = DeskStore(store.kv)
        self.accounts = Accounts(
            AccountStore(store.kv), settings, store.daily, desk, self.addresses
        )
        # Players' public profiles (boulanger.web.profiles).
        self.profiles = Profiles(self.accounts.store, store.daily, desk)
        # What a race's end does to its signed-in players' accounts (boulanger.web.results).
        self.results = RaceResults(self.accounts.store, desk)
        # The review desk: moderators' decisions, followed everywhere (boulanger.web.desk).
        self.desk = Desk(desk, self.broker, store.daily, self.accounts, self.results, self.hubs)
        # Each win's line, measured by the solver and logged (boulanger.web.lines).
        self.lines = Lines(self.solver)
        self.races = Races(self.broker, settings, self.solver, self.daily)
        self.quick = QuickRaces(
            settings, self.races, self.hubs, store.kv
        )  # the queue of POST /api/quick
        self.stopping = False
        self._sweeper: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Connect the store, start the hubs, the limits and the sweep of idle hubs."""
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
        self.lines.close()
        self.accounts.close()
        if self._own_store:
            await self.store.close()
        self.solver.close()

    async def _race_over(self, hub: RaceHub) -> None:
        await self.lines.settle(hub)  # results follow the verdict on every win's line
        await self.daily.on_over(hub)
        await self.results.on_over(hub)

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
