"""A player's public profile (``GET /api/players/{name}``): stats, streak,
calendar, ratings and their history, recent races and ranked dailies, each result as it
counts (held or decided by the review desk, :mod:`.desk`).

See docs/protocol.md, "Accounts".
"""

from __future__ import annotations

from datetime import date
from typing import TypedDict

from ..broker import DailyStore
from ..broker.accounts import AccountStore
from ..broker.desk import DeskStore
from ..race import accounts as a
from ..race import daily as d
from ..race.review import review_wire
from ..race.wire import ReviewWire
from .clock import now_ms

CELLS = (4, 2, 1)
HISTORY_SHOWN = 20
DAILIES_SHOWN = 60  # the ranked dailies a profile lists (its calendar and times chart)


class Profile(TypedDict):
    """A player's public profile (``GET /api/players/{name}``)."""

    name: str
    since: int
    stats: a.StatsWire
    streak: int
    calendar: list[str]
    ratings: dict[str, a.RatingWire]
    rating_history: dict[str, list[a.RatingPoint]]
    races: list[ProfileRace]
    dailies: list[ProfileDaily]


class ProfileRace(a.RaceResultDict):
    """A race of a profile's history, with the links to it, its record and its replay."""

    url: str
    record: str
    replay: str | None
    review: ReviewWire | None


class ProfileDaily(TypedDict):
    """A ranked daily of a profile: won or not, and whether the win counts (held or
    disqualified: ``review`` says which)."""

    date: str
    won: bool
    counted: bool
    time_ms: int | None
    review: ReviewWire | None


class Profiles:
    """Profiles read from the accounts' store, the daily store and the desk's decisions."""

    def __init__(self, store: AccountStore, daily: DailyStore, desk: DeskStore) -> None:
        self.store = store
        self.daily = daily
        self.desk = desk

    async def profile(self, account: a.Account) -> Profile:
        """The account's public profile (``GET /api/players/{name}``)."""
        store = self.store
        results = await store.history(account.id, a.HISTORY_MAX)
        today = d.today(now_ms())
        streak = await self.daily.streak(account.daily_key, today)
        won = await self.daily.won_days(account.daily_key, today, 400)
        played = {date.fromisoformat(r.daily) for r in results if r.daily and r.ranked}
        shown = results[:HISTORY_SHOWN]
        races = [await self._race_of(account, r, today) for r in shown]
        ratings = {}
        rating_history = {}
        for cells in CELLS:
            found = await store.rating(account.id, cells)
            if found is not None:
                ratings[str(cells)] = found.to_wire()
            points = await store.rating_history(account.id, cells, a.RATING_HISTORY_MAX)
            if points:
                rating_history[str(cells)] = points[::-1]  # oldest first
        return {
            "name": account.name,
            "since": account.created,
            "stats": a.stats(results),
            "streak": streak,
            "calendar": a.calendar(played | set(won)),
            "ratings": ratings,
            "rating_history": rating_history,
            "races": races,
            "dailies": await self._dailies(account, results, set(won)),
        }

    async def _race_of(self, account: a.Account, r: a.RaceResult, today: date) -> ProfileRace:
        """A race of the profile's list: its links (a replay once its deal may be seen)
        and its review."""
        replay: str | None = f"/race/{r.race_id}/replay/{r.player_id}"
        if r.daily is not None and date.fromisoformat(r.daily) >= today:
            replay = None  # today's deal is secret until the day ends
        elif r.daily is not None and r.ranked:
            entry = await self.daily.player(date.fromisoformat(r.daily), account.daily_key)
            replay = None if entry is None else f"/daily/{r.daily}/replay/{entry.entry_id}"
        return {
            **r.to_dict(),
            "url": f"/race/{r.race_id}",
            "record": f"/api/races/{r.race_id}/records/{r.player_id}",
            "replay": replay,
            "review": await self._review_of(account, r),
        }

    async def _dailies(
        self, account: a.Account, results: list[a.RaceResult], won: set[date]
    ) -> list[ProfileDaily]:
        """The last ranked dailies, latest first: a win that does not count (held or
        disqualified) with its review; days won before the history (a claimed guest
        key's) as bare wins."""
        days: dict[str, ProfileDaily] = {}
        for r in results:
            if r.daily is None or not r.ranked or r.daily in days:
                continue
            counted = date.fromisoformat(r.daily) in won
            review = None if counted or not r.won else await self._review_of(account, r)
            days[r.daily] = {
                "date": r.daily,
                "won": r.won,
                "counted": counted,
                "time_ms": r.time_ms,
                "review": review,
            }
        for day in won:
            days.setdefault(
                day.isoformat(),
                {
                    "date": day.isoformat(),
                    "won": True,
                    "counted": True,
                    "time_ms": None,
                    "review": None,
                },
            )
        return sorted(days.values(), key=lambda x: x["date"], reverse=True)[:DAILIES_SHOWN]

    async def _review_of(self, account: a.Account, result: a.RaceResult) -> ReviewWire | None:
        """A result's review as its player's profile shows it: held, or as decided."""
        if result.daily is not None and result.ranked:
            entry = await self.daily.player(date.fromisoformat(result.daily), account.daily_key)
            return None if entry is None else review_wire(entry.entry.review, entry.entry.decision)
        decided = (await self.desk.decisions(f"race:{result.race_id}")).get(result.player_id)
        return review_wire(result.held, decided)
