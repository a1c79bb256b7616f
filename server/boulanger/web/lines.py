"""The line of each win, measured off the event loop and logged (docs/fair-play.md).

A win in a reviewed race is final when it is made; its line (how closely it
follows a solver's winning line, ``boulanger.solver.line``) is measured in
the solver's process, and the figures are appended to the race's log
(``Race.decide_line``), where every replica judges them the same way. The
measure starts at the win, in the process that took the winning action,
so that it is mostly logged before the race is over; the race's on-over
hook waits for every win's line before results are recorded (daily
leaderboard, histories, ratings), and measures any not measured yet (the
process of the win stopped, or the win came in another process).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from ..broker import BrokerUnavailable
from ..race.errors import Refused
from ..race.review import LineSignal
from .clock import now_ms
from .hub import RaceHub
from .solving import SolverPool

log = logging.getLogger(__name__)


class LinesPending(Exception):
    """A race's results wait for a win's line (the on-over hook tries again later)."""


class Lines:
    """The measures under way in this process, one per won game at most."""

    def __init__(self, solver: SolverPool) -> None:
        self.solver = solver
        self._running: dict[tuple[str, str], asyncio.Task[None]] = {}

    def start(self, hub: RaceHub, player_id: str) -> None:
        """Measure the player's line if their win waits for it (not twice at once)."""
        if not hub.race.line_due(player_id):
            return
        key = (hub.race_id, player_id)
        if key not in self._running:
            task = asyncio.create_task(self._measure(hub, player_id))
            self._running[key] = task
            task.add_done_callback(lambda _: self._running.pop(key, None))

    async def settle(self, hub: RaceHub) -> None:
        """Measure and log every win of the race still waiting; raise
        :class:`LinesPending` if one is still missing from the log."""
        for player_id in hub.race.lines_pending():
            self.start(hub, player_id)
        running = [task for (race_id, _), task in self._running.items() if race_id == hub.race_id]
        await asyncio.gather(*running, return_exceptions=True)
        pending = hub.race.lines_pending()
        if pending:
            raise LinesPending(f"race {hub.race_id}: lines of {pending} not logged yet")

    async def _measure(self, hub: RaceHub, player_id: str) -> None:
        race = hub.race
        try:
            signal: LineSignal | None = LineSignal.from_dict(
                await self.solver.line(race.record(player_id).to_dict(), race.meta.par)
            )
        except Exception:
            # Logged unmeasured: the race's results must not wait for ever.
            log.exception("race %s: the line of %s could not be measured", race.race_id, player_id)
            signal = None
        # The race may have been rebuilt meanwhile: decide on the one the hub has now.
        with contextlib.suppress(Refused, BrokerUnavailable):  # settle() tries again
            await hub.submit(lambda: hub.race.decide_line(player_id, signal, now_ms()))

    def close(self) -> None:
        """Abandon the measures under way (the server stops)."""
        for task in self._running.values():
            task.cancel()
