"""Race creation: every race the server makes is made here, with its settings."""

from __future__ import annotations

from typing import TypedDict

from ..broker import Broker
from ..engine import GameCode
from ..race.ids import new_race_id, new_secret, secret_hash
from ..race.race import RaceMeta
from .clock import now_ms
from .daily import Daily
from .settings import Settings
from .solving import SolverPool


class CreatedRace(TypedDict):
    """A new race as its creator is answered (``POST /api/races``)."""

    race_id: str
    code: str | None
    url: str
    host_key: str
    par: int | None
    winnable: bool | None
    open_boards: bool


class Races:
    """Makes races: their meta from this server's settings, a deal from the catalog."""

    def __init__(
        self, broker: Broker, settings: Settings, solver: SolverPool, daily: Daily
    ) -> None:
        self.broker = broker
        self.settings = settings
        self.solver = solver
        self.daily = daily  # today's daily deal is no other race's

    def meta(
        self,
        race_id: str,
        code: GameCode,
        host_key_hash: str,
        *,
        practice: bool = False,
        par: int | None = None,
        winnable: bool | None = None,
        hidden_deal: bool = False,
        open_boards: bool = False,
        daily: str | None = None,
        ranked: bool = False,
        player_key_hash: str | None = None,
    ) -> RaceMeta:
        """What is fixed of a new race, with this server's settings (see :class:`RaceMeta`)."""
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
            par=par,
            winnable=winnable,
            hidden_deal=hidden_deal,
            open_boards=open_boards,
            daily=daily,
            ranked=ranked,
            player_key_hash=player_key_hash,
        )

    async def add(self, meta: RaceMeta) -> None:
        """Store a new race (its meta) in the store."""
        await self.broker.create_race(meta)

    async def create(
        self,
        *,
        cells: int = 4,
        code: GameCode | None = None,
        practice: bool = False,
        open_boards: bool = False,
        host_key_hash: str | None = None,
        owners: tuple[str, ...] = (),
    ) -> CreatedRace:
        """Create a race on a catalog deal (or the given code); answer the creator's view.

        A deal picked here stays secret until the race starts (its code is
        null in the answer), and is never today's daily deal. A code outside
        the catalog is judged by the solver for ``owners`` (who asked: see
        :meth:`SolverPool.judge`).
        """
        par: int | None
        winnable: bool | None
        hidden = code is None
        if code is None:
            code, par, winnable = self.solver.pick(cells, avoid=self.daily.deal_today())
        else:
            winnable, par = await self.solver.judge(code, self.settings.solve_budget_s, owners)
        race_id = new_race_id()
        host_key = new_secret()
        meta = self.meta(
            race_id,
            code,
            host_key_hash or secret_hash(host_key),
            practice=practice,
            par=par,
            winnable=winnable,
            hidden_deal=hidden,
            open_boards=open_boards,
        )
        await self.add(meta)
        return {
            "race_id": race_id,
            "code": None if hidden else str(code),
            "url": f"/race/{race_id}",
            "host_key": host_key,
            "par": par,
            "winnable": winnable,
            "open_boards": open_boards,
        }
