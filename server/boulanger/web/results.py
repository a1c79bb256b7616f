"""What a race's end does to its signed-in players' accounts.

Each signed-in player's result goes into their history; a fair race of two
or more signed-in players who each played enough is rated, and its held
results and winner are listed for the review desk (:mod:`.desk`), whose
decisions the ratings follow (:meth:`RaceResults.follow_decisions`). A
race's players whose account is gone show as "deleted player"
(:meth:`RaceResults.find_deleted`).
"""

from __future__ import annotations

import asyncio

from ..broker.accounts import AccountStore
from ..broker.desk import DeskStore, RaceSeen, RatedRaceDict
from ..race import accounts as a
from ..race import daily as d
from ..race.review import counts
from .clock import now_ms
from .hub import RaceHub


class RaceResults:
    """The race hubs' on-over hook for accounts: histories, the desk's list, ratings."""

    def __init__(self, store: AccountStore, desk: DeskStore) -> None:
        self.store = store
        self.desk = desk

    async def on_over(self, hub: RaceHub) -> None:
        """The hubs' on-over hook: each signed-in player's history, then ratings."""
        race = hub.race
        meta = race.meta
        if meta.practice:
            return
        accounts: dict[str, str] = {}
        for player_id in race.players:
            account_id = await self.store.player_account(race.race_id, player_id)
            if account_id is not None:
                accounts[player_id] = account_id
        if not accounts or not await self.store.mark_counted(race.race_id):
            return
        standings = {s.player_id: s for s in race.standings(final=True)}
        at = now_ms()
        for player_id, account_id in accounts.items():
            s = standings[player_id]
            result = a.RaceResult(
                race_id=race.race_id,
                player_id=player_id,
                at=at,
                cells=race.code.cells,
                players=len(race.players),
                place=s.rank,
                won=s.time_ms is not None,
                time_ms=s.time_ms,
                daily=meta.daily,
                ranked=meta.ranked,
                held=s.review,
            )
            await self.store.add_result(account_id, result, a.HISTORY_MAX)
        fair = a.rated_race(practice=meta.practice, open_boards=meta.open_boards, daily=meta.daily)
        played = all(a.played_enough(standings[pid].actions) for pid in accounts)
        if len(accounts) < 2 or not fair or not played:
            return
        day = d.today(at).isoformat()
        for player_id in accounts:  # the review desk lists each held result and the winner
            s = standings[player_id]
            if s.review is not None or s.rank == 1:
                await self.desk.add_race_result(
                    day,
                    RaceSeen(
                        race.race_id,
                        player_id,
                        s.name,
                        race.code.cells,
                        len(race.players),
                        s.rank,
                        s.time_ms,
                        s.actions,
                        s.review,
                        s.line,
                        s.line_held,
                        at,
                    ),
                )
        # The race's change of rating for each player, from the ratings all had when
        # it ended; applied while the player's result counts. While a result is held,
        # none is: the race's ratings wait for the review desk (follow_decisions).
        cells = race.code.cells
        before = [await self.store.rating(i, cells) or a.Rating() for i in accounts.values()]
        places = [standings[pid].rank or len(race.players) for pid in accounts]
        after = a.update_ratings(before, places)
        rated: RatedRaceDict = {
            "cells": cells,
            "players": {
                pid: {
                    "account_id": account_id,
                    "change": [new.mu - old.mu, new.sigma - old.sigma],
                    "applied": False,
                    "held": standings[pid].review is not None,
                }
                for (pid, account_id), old, new in zip(accounts.items(), before, after, strict=True)
            },
        }
        await self.desk.set_rated_race(race.race_id, rated)
        await self.follow_decisions(race.race_id)

    async def follow_decisions(self, race_id: str) -> None:
        """Apply each player's change of rating of a rated race while their result
        counts, and take it back when it does not (a moderator's decision); nothing
        while a result of the race is held and undecided. Each change is applied,
        or taken back, once (the race's note says which it is), and makes a point of
        the player's rating history."""
        rated = await self.desk.rated_race(race_id)
        if rated is None:
            return
        decided = await self.desk.decisions(f"race:{race_id}")
        players = rated["players"]
        if any(p.get("held") and pid not in decided for pid, p in players.items()):
            return
        for player_id, player in players.items():
            held = "held" if player.get("held") else None
            applied = counts(held, decided.get(player_id))
            flipped = await self.desk.mark_applied(race_id, player_id, applied)
            account_id = player["account_id"]
            if flipped is None or await self.store.account(account_id) is None:
                continue

            def change(
                found: a.Rating | None, by: list[float] = flipped, applied: bool = applied
            ) -> a.Rating:
                now = found or a.Rating()
                races = now.races + (1 if applied else -1)
                return a.Rating(now.mu + by[0], max(0.01, now.sigma + by[1]), max(0, races))

            rating = await self.store.update_rating(account_id, rated["cells"], change)
            point: a.RatingPoint = {
                "at": now_ms(),
                "cells": rated["cells"],
                "shown": rating.shown,
                "race_id": race_id,
            }
            await self.store.add_rating_point(
                account_id, rated["cells"], point, a.RATING_HISTORY_MAX
            )

    async def find_deleted(self, hub: RaceHub) -> frozenset[str]:
        """Note in ``hub`` (and answer) its players whose account has been deleted.

        Resolved when read, through the race's player -> account notes, not
        rewritten at deletion: a race's log is append-only, and an account does
        not know the races it is in right now. The notes outlive the race's log
        (two days against one), so this is exact for as long as the race can
        be read; it costs one read per player and one per signed-in player,
        each batch sent at once.
        """
        race = hub.race
        players = list(race.players)
        found = await asyncio.gather(
            *(self.store.player_account(race.race_id, pid) for pid in players)
        )
        signed = [(pid, aid) for pid, aid in zip(players, found, strict=True) if aid is not None]
        alive = await asyncio.gather(*(self.store.exists(aid) for _, aid in signed))
        hub.deleted = frozenset(pid for (pid, _), yes in zip(signed, alive, strict=True) if not yes)
        return hub.deleted
