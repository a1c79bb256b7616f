"""The Starlette application: routes, lifespan and the per-process server state."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute

from ..broker import Broker, open_broker
from ..engine import GameCode
from ..race.ids import new_race_id, new_secret, secret_hash
from ..race.race import RaceMeta
from . import accounts, http
from .accounts import Accounts
from .daily import Daily
from .frames import RawSend
from .headers import SecurityHeaders
from .hub import Hubs, RaceHub, now_ms
from .limits import AddressLimits
from .quick import QuickRaces, quick_race
from .settings import Settings
from .socket import race_socket
from .solving import SolverPool
from .static import ClientFiles

log = logging.getLogger(__name__)


SWEEP_INTERVAL_S = 30
FULL_COLLECTION_SWEEPS = 10  # every 5 minutes


class Server:
    """Everything one server process holds: broker, hubs, limits, solver pool."""

    def __init__(self, settings: Settings, broker: Broker | None = None) -> None:
        self.settings = settings
        self.broker = broker or open_broker(settings.broker_url, settings.replica_wait)
        # The daily challenge: its store and live leaderboards; it records ranked
        # attempts when their races are over (boulanger.web.daily).
        self.daily = Daily(self.broker, settings)
        # Accounts, sessions, histories and ratings (boulanger.web.accounts).
        self.accounts = Accounts(self)
        self.hubs = Hubs(self.broker, settings.idle_race_s, on_over=self._race_over)
        # Per client address; in Redis when the broker is (boulanger.web.limits).
        self.addresses = AddressLimits(
            self.broker,
            settings.max_connections_per_address,
            settings.races_per_minute_per_address,
            settings.address_lease_s,
        )
        self.solver = SolverPool(settings.catalog_seed)
        self.quick = QuickRaces(self)  # the public queue of POST /api/quick
        self.stopping = False
        self._sweeper: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.broker.start()
        await self.addresses.start()
        self._sweeper = asyncio.create_task(self._sweep_loop())

    async def stop(self) -> None:
        self.stopping = True
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
        await self.quick.close()
        await self.hubs.close()
        await self.daily.close()  # daily challenge
        await self.addresses.close()
        await self.broker.close()
        self.solver.close()

    async def _race_over(self, hub: RaceHub) -> None:
        await self.daily.on_over(hub)
        await self.accounts.on_over(hub)

    async def _sweep_loop(self) -> None:
        sweeps = 0
        while True:
            await asyncio.sleep(SWEEP_INTERVAL_S)
            sweeps += 1
            with contextlib.suppress(Exception):
                await self.hubs.sweep()
            self.addresses.sweep()
            if sweeps % FULL_COLLECTION_SWEEPS == 0:
                gc.collect()  # see boulanger serve: the oldest generation is collected here

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
        meta = RaceMeta(
            race_id=race_id,
            code=str(code),
            created_at=now_ms(),
            host_key_hash=host_key_hash or secret_hash(host_key),
            time_limit_s=self.settings.time_limit_s,
            # A practice game is a race of one: it starts at once, no countdown.
            countdown_ms=0 if practice else self.settings.countdown_ms,
            practice=practice,
            par=par,
            winnable=winnable,
            hidden_deal=hidden,
            open_boards=open_boards,
            # Practice games may take hints: their results prove nothing.
            review=None if practice else self.settings.review_limits().to_dict(),
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
        return await self.solver.hint(record, self.settings.hint_budget_s)


def create_app(settings: Settings | None = None, broker: Broker | None = None) -> Starlette:
    """Assemble the application: one place for routes, static files and lifespan."""
    settings = settings or Settings.from_env()
    server = Server(settings, broker)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await server.start()
        try:
            yield
        finally:
            await server.stop()

    client = ClientFiles(settings.client_dir)

    async def page(request: Any) -> Response:
        return client.page(request)

    async def unknown(request: Any) -> Response:
        # Any other address is the client's "nothing here" page (with a 404),
        # except under /api/, whose callers read JSON.
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": {"code": "http", "reason": "Not Found"}}, 404)
        return client.page(request, status_code=404)

    routes = [
        Route("/healthz", http.healthz),
        Route("/api/races", http.create_race, methods=["POST"]),
        Route("/api/quick", quick_race, methods=["POST"]),
        Route("/api/races/{race_id}", http.race_snapshot),
        Route("/api/races/{race_id}/records/{player_id}", http.race_record),
        *http.daily_routes(),
        *accounts.routes(),
        WebSocketRoute("/ws/races/{race_id}", race_socket),
        Route("/", page),
        Route("/race/{race_id}", page),
        Route("/daily", page),
        Route("/daily/{date}", page),
        Route("/practice", page),
        Route("/rules", page),
        Route("/account", page),
        Route("/@/{name}", page),
        Mount("/static", client, name="static"),
        Route("/{path:path}", unknown),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers=http.EXCEPTION_HANDLERS,
        middleware=[
            # CSP, nosniff, frame and referrer policies on every answer (web/headers.py).
            Middleware(SecurityHeaders),
            # Lets a connection write frames straight to its socket (web/frames.py).
            Middleware(RawSend),
            # The client's files shrink to about a quarter (WebSockets are untouched).
            Middleware(GZipMiddleware, minimum_size=1024),
        ],
    )
    app.state.server = server
    return app
