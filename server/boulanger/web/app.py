"""The Starlette application: the one place that wires services, routes and lifespan.

Nothing imports this module but the command line and the tests: each
route's module takes the services (:class:`~.services.Server`) from the
app's state, and gives its routes to :func:`create_app` as a list.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route, WebSocketRoute

from ..broker import Store
from . import accounts_http, daily_http, desk_http, http, passkeys, replays
from .frames import RawSend
from .headers import SecurityHeaders
from .refusals import EXCEPTION_HANDLERS
from .services import Server
from .settings import Settings
from .socket import race_socket
from .static import ClientFiles


def create_app(settings: Settings | None = None, store: Store | None = None) -> Starlette:
    """Assemble the application: one place for routes, static files and lifespan.

    Without ``store``, the app opens the settings' store and closes it; a
    ``store`` given is started and closed by the caller (:class:`Server`).
    """
    settings = settings or Settings.from_env()
    server = Server(settings, store)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await server.start()
        try:
            yield
        finally:
            await server.stop()

    client = ClientFiles(settings.client_dir)

    async def page(request: Request) -> Response:
        return client.page(request)

    async def unknown(request: Request) -> Response:
        # Any other address is the client's "nothing here" page (with a 404),
        # except under /api/, whose callers read JSON.
        if request.url.path.startswith("/api/"):
            raise HTTPException(404)  # answered with the code "http", as Starlette's own
        return client.page(request, status_code=404)

    routes = [
        *http.routes(),
        *daily_http.routes(),
        *replays.routes(),
        *accounts_http.routes(),
        *passkeys.routes(),
        *desk_http.routes(),
        WebSocketRoute("/ws/races/{race_id}", race_socket),
        Route("/", page),
        Route("/race/{race_id}", page),
        Route("/daily", page),
        Route("/daily/{date}", page),
        Route("/practice", page),
        *(Route(path, page) for path in replays.PAGES),
        Route("/rules", page),
        Route("/account", page),
        Route("/desk", page),
        Route("/@/{name:path}", page),
        Mount("/static", client, name="static"),
        Route("/{path:path}", unknown),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers=EXCEPTION_HANDLERS,
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
