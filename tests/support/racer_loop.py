"""Racers a synchronous (browser) test drives: an event loop of their own, in a thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any

from .racer import Racer


class RacerLoop:
    """Scripted racers (the real WebSocket protocol) on an event loop in a thread."""

    def __init__(self, ws_base: str, timeout: float = 30) -> None:
        self.ws_base = ws_base
        self.timeout = timeout
        self.racers: list[Racer] = []
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, Any], timeout: float | None = None) -> Any:
        """Run ``coro`` on the racers' loop and wait for its answer."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return future.result(self.timeout if timeout is None else timeout)

    async def joined(self, race_id: str, name: str, **extra: Any) -> Racer:
        """A new racer, connected and welcome in ``race_id`` as ``name`` (on the loop)."""
        racer = await Racer(self.ws_base, race_id, answer_pings=True).connect()
        welcome = await racer.join(name, **extra)
        assert welcome["type"] == "welcome", welcome
        self.racers.append(racer)
        return racer

    def join(self, race_id: str, name: str, **extra: Any) -> Racer:
        """:meth:`joined`, from the test's thread."""
        racer: Racer = self.run(self.joined(race_id, name, **extra))
        return racer

    def close(self) -> None:
        """Close every racer's connection, then stop the loop."""

        async def closed() -> None:
            for racer in self.racers:
                await racer.close()

        try:
            self.run(closed())
        finally:
            self.stop_loop()

    def stop_loop(self) -> None:
        """Stop and close the loop (its racers closed or not)."""
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()
