"""The application served in the test's own event loop, as ``boulanger serve`` serves it.

:class:`AppServer` builds the app with the public factory (``create_app``)
from the settings a ``boulanger serve`` would read from the same environment,
and serves it with uvicorn configured as the command line configures it, on
a socket the test holds. No process starts: a server-side exception is
logged into the test's own report with its traceback, and a test that goes
wrong fails at once instead of waiting for a process to time out. The tests
that need a real process (SIGKILL, restarts, nginx in front, the command
line) use :class:`~support.servers.ServerProcess`, which has the same
``base``, ``ws_base``, ``port``, ``broker_url`` and ``output()``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import traceback
from collections.abc import Mapping
from typing import Any
from unittest import mock

import uvicorn
from starlette.applications import Starlette

from boulanger import cli
from boulanger.web import logs
from boulanger.web.app import create_app
from boulanger.web.settings import Settings

from .servers import SERVER_ENV, listening_socket

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 15.0
# argon2id at its lowest cost: every app hashes once as it starts (a password
# unknown costs what a known one does), 0.2 s of CPU at the production cost.
# For servers whose tests make no accounts.
CHEAP_HASHING = {
    "BOULANGER_ARGON2_TIME_COST": "1",
    "BOULANGER_ARGON2_MEMORY_KIB": "8",
}


def settings_for(broker_url: str, env: Mapping[str, str] | None = None) -> Settings:
    """The settings of ``boulanger serve --broker broker_url`` started with ``env``.

    Read by :meth:`Settings.from_env` itself, from the environment a
    :class:`~support.servers.ServerProcess` would give its process.
    """
    with mock.patch.dict(os.environ, {**SERVER_ENV, **(env or {})}):
        return Settings.from_env(broker_url=broker_url)


class _Lines(logging.Handler):
    """Every record logged while a server runs, formatted as the process's log has it."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.lines.append(self.format(record))
        except Exception:  # a record that cannot be formatted is a finding too
            self.lines.append("".join(traceback.format_exc()))


class AppServer:
    """``boulanger serve`` without the process: the app on uvicorn in this event loop.

    ``env`` holds ``BOULANGER_*`` variables, as for a
    :class:`~support.servers.ServerProcess`. ``store``, when given, is what
    ``create_app`` takes besides the settings, shared with the caller (who
    starts and closes it): two apps on one embedded store are two processes
    of a deployment.
    """

    def __init__(
        self,
        broker_url: str = "memory://",
        env: Mapping[str, str] | None = None,
        store: Any = None,
    ) -> None:
        self.broker_url = broker_url
        self.env = dict(env or {})
        self.settings = settings_for(broker_url, self.env)
        self.store = store
        self.listener = listening_socket()
        self.port = int(self.listener.getsockname()[1])
        self.app: Starlette | None = None
        self._server: uvicorn.Server | None = None
        self._serving: asyncio.Task[None] | None = None
        self._log = _Lines()
        self._level = logging.NOTSET

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_base(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    @property
    def services(self) -> Any:
        """The app's services (its state's ``server``), for tests that look inside."""
        assert self.app is not None
        return self.app.state.server

    async def start(self) -> None:
        self.app = create_app(self.settings, self.store)
        with mock.patch.dict(os.environ, {**SERVER_ENV, **self.env}):
            options = cli.uvicorn_options(self.settings, log_level="warning")
        # The process's logging is not the server's to set up: every record is kept.
        config = uvicorn.Config(self.app, log_config=None, **options)
        logging.getLogger().addHandler(self._log)
        # As `boulanger serve`: the server's own info lines, client faults in one line each.
        self._level = logging.getLogger("boulanger").level
        logging.getLogger("boulanger").setLevel(logging.INFO)
        logs.install()
        self._server = uvicorn.Server(config)
        self._serving = asyncio.create_task(self._server.serve(sockets=[self.listener]))
        async with asyncio.timeout(START_TIMEOUT_S):
            while not self._server.started:
                if self._serving.done():
                    self._serving.result()  # the app's startup failed: its exception
                    raise RuntimeError(f"the app did not start: {self.tail()}")
                await asyncio.sleep(0.005)

    async def stop(self) -> None:
        """As SIGTERM does: connections closed, the app's shutdown run; its log kept."""
        try:
            if self._server is not None and self._serving is not None:
                self._server.should_exit = True
                await asyncio.wait_for(self._serving, STOP_TIMEOUT_S)
        finally:
            self._server = self._serving = None
            self.listener.close()
            logging.getLogger().removeHandler(self._log)
            logging.getLogger("boulanger").setLevel(self._level)

    def output(self) -> str:
        return "\n".join(self._log.lines)

    def tail(self) -> str:
        return self.output()[-2000:]

    async def __aenter__(self) -> AppServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
