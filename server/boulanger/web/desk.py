"""The review desk in one server process: moderators' view of results, and their decisions.

See docs/fair-play.md, "The review desk". A moderator (an account the
operator granted the role, ``boulanger moderators add NAME``) lists a day's
held results and top results, daily and of rated races, with their signals,
and confirms or disqualifies each with a note. The decision is kept in the
store (:class:`~boulanger.broker.desk.DeskStore`), logged in the audit log,
and followed wherever the result shows: the daily leaderboard and streaks
(:meth:`DailyStore.decide`), ratings (:meth:`RaceResults.follow_decisions`), a
race's standings (:meth:`find_decisions`, read when a race is shown) and
profiles. Every process reads the same store, so every process follows it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date
from typing import NotRequired, TypedDict

from starlette.requests import HTTPConnection

from ..broker import Broker, DailyStore
from ..broker.contracts import daily_channel, published
from ..broker.desk import AuditEntry, DecidedMeanwhile, DeskStore
from ..race import accounts as a
from ..race import daily as d
from ..race.errors import Refused
from ..race.race import FINISHED
from ..race.review import (
    NOTE_MAX,
    VERDICTS,
    Decision,
    DecisionDict,
    LineSignalDict,
    review_wire,
    status_of,
)
from .accounts import Accounts
from .clock import now_ms
from .hub import Hubs, RaceHub
from .results import RaceResults

log = logging.getLogger(__name__)

REVIEWED_MAX = 100  # held or decided daily entries listed per day
TOP_DAILY = 10  # the day's top entries listed besides
RACES_MAX = 200  # rated races' results listed per day
STATUSES = ("held", "counted", "confirmed", "disqualified")


class DeskResult(TypedDict):
    """One result as the desk lists it (docs/protocol.md, "Review desk")."""

    result: str
    kind: str
    name: str
    at: int
    outcome: str
    time_ms: int | None
    actions: int
    rank: int | None
    status: str
    review: str | None
    line: LineSignalDict | None
    line_held: str | None
    decision: DecisionDict | None
    replay: str
    record: str
    race: NotRequired[str]


@dataclass(frozen=True, slots=True)
class Target:
    """A result a decision is about: a day's entry or a race's player."""

    kind: str  # "daily" or "race"
    subject: str  # "daily:DATE" or "race:RACE"
    key: str  # the entry id or the player id

    @property
    def result(self) -> str:
        return f"{self.subject}:{self.key}"

    @classmethod
    def parse(cls, text: object) -> Target:
        """``daily:YYYY-MM-DD:ENTRY`` or ``race:RACE:PLAYER``; :class:`Refused` otherwise."""
        bad = Refused("bad_message", "result must be daily:DATE:ENTRY or race:RACE:PLAYER")
        if not isinstance(text, str) or len(text) > 200:
            raise bad
        kind, _, rest = text.partition(":")
        where, _, key = rest.rpartition(":")
        if kind == "daily":
            try:
                d.parse_date(where)
            except d.DateError:
                raise bad from None
            if not key.isascii() or not key.isdigit() or len(key) > d.ENTRY_ID_DIGITS:
                raise bad
            return cls(kind, f"daily:{where}", str(int(key)))
        if kind == "race" and where and key and where.isascii() and key.isascii():
            return cls(kind, f"race:{where}", key)
        raise bad


def daily_links(day: str, entry_id: int) -> tuple[str, str]:
    """The desk's replay page and record of a day's entry (open to moderators all day)."""
    return (
        f"/desk/daily/{day}/replay/{entry_id}",
        f"/api/desk/daily/{day}/records/{entry_id}",
    )


def race_links(race_id: str, player_id: str) -> tuple[str, str]:
    return (
        f"/desk/race/{race_id}/replay/{player_id}",
        f"/api/desk/races/{race_id}/records/{player_id}",
    )


class Desk:
    """The review desk: who is a moderator, what they see, what their decisions do."""

    def __init__(
        self,
        store: DeskStore,
        broker: Broker,
        daily: DailyStore,
        accounts: Accounts,
        results: RaceResults,
        hubs: Hubs,
    ) -> None:
        self.store = store
        self.broker = broker
        self.daily = daily
        self.accounts = accounts
        self.race_results = results
        self.hubs = hubs

    async def moderator_of(self, conn: HTTPConnection) -> a.Account:
        """The request's moderator: :class:`Refused` ``signed_out`` (401) for a guest,
        ``not_moderator`` (403) for an account without the role."""
        account = await self.accounts.account_of(conn)
        if account is None:
            raise Refused("signed_out", "sign in first")
        if not await self.store.is_moderator(account.id):
            raise Refused("not_moderator", "the review desk is for moderators")
        return account

    # -- what a moderator sees ---------------------------------------------------

    async def results(self, day: date) -> list[DeskResult]:
        """The day's held, decided and top results, daily and of rated races, newest first."""
        text = day.isoformat()
        decisions = await self.store.decisions(f"daily:{text}")
        entries = {r.entry_id: r for r in await self.daily.reviewed(day, REVIEWED_MAX)}
        for ranked in (await self.daily.page(day, 0, TOP_DAILY)).entries:
            entries.setdefault(ranked.entry_id, ranked)
        out: list[DeskResult] = []
        for ranked in entries.values():
            entry = ranked.entry
            decided = decisions.get(str(ranked.entry_id), entry.decision)
            replay, record = daily_links(text, ranked.entry_id)
            out.append(
                {
                    "result": f"daily:{text}:{ranked.entry_id}",
                    "kind": "daily",
                    "name": entry.name,
                    "at": entry.at,
                    "outcome": entry.result,
                    "time_ms": entry.time_ms if entry.result == d.WON else None,
                    "actions": entry.actions,
                    "rank": ranked.rank,
                    "status": status_of(entry.review, decided),
                    "review": entry.review,
                    "line": None if entry.line is None else entry.line.to_dict(),
                    "line_held": entry.line_held,
                    "decision": None if decided is None else decided.to_dict(),
                    "replay": replay,
                    "record": record,
                }
            )
        races: dict[str, dict[str, Decision]] = {}
        for seen in await self.store.race_results(text, RACES_MAX):
            if seen.race_id not in races:
                races[seen.race_id] = await self.store.decisions(f"race:{seen.race_id}")
            decided = races[seen.race_id].get(seen.player_id)
            replay, record = race_links(seen.race_id, seen.player_id)
            out.append(
                {
                    "result": f"race:{seen.race_id}:{seen.player_id}",
                    "kind": "race",
                    "name": seen.name,
                    "at": seen.at,
                    "outcome": "won" if seen.time_ms is not None else "lost",
                    "time_ms": seen.time_ms,
                    "actions": seen.actions,
                    "rank": seen.place,
                    "status": status_of(seen.review, decided),
                    "review": seen.review,
                    "line": None if seen.line is None else seen.line.to_dict(),
                    "line_held": seen.line_held,
                    "decision": None if decided is None else decided.to_dict(),
                    "replay": replay,
                    "record": record,
                    "race": f"/race/{seen.race_id}",
                }
            )
        out.sort(key=lambda r: r["at"], reverse=True)
        return out

    # -- decisions ---------------------------------------------------------------

    async def decide(
        self, moderator: a.Account, target: Target, verdict: str, note: str, was: str
    ) -> Decision:
        """Decide a result (or reverse its decision): kept, logged, then followed.

        ``was`` is the status the moderator saw; if another decided since,
        :class:`Refused` ``decided_meanwhile``. Sending the decision in force
        again changes nothing and logs nothing, but follows it again (after a
        failure half-way).
        """
        name, review = await self._find(target)
        current = (await self.store.decisions(target.subject)).get(target.key)
        if status_of(review, current) != was:
            raise Refused("decided_meanwhile", f"this result is {status_of(review, current)} now")
        if current is not None and current.status == verdict:
            await self._follow(target, current)
            return current
        decision = Decision(verdict, note, moderator.name, now_ms())
        try:
            await self.store.decide(target.subject, target.key, decision, current)
        except DecidedMeanwhile as meanwhile:
            status = status_of(review, meanwhile.current)
            raise Refused("decided_meanwhile", f"this result is {status} now") from None
        await self.store.log(
            AuditEntry(
                result=target.result,
                subject=target.subject,
                name=name,
                action="decide" if current is None else "reverse",
                was=was,
                status=verdict,
                note=note,
                by=moderator.name,
                at=decision.at,
            )
        )
        log.info("desk: %s %s by %s", target.result, verdict, moderator.name)
        await self._follow(target, decision)
        return decision

    async def _find(self, target: Target) -> tuple[str, str | None]:
        """The result's player's name and held reason; :class:`Refused` when there is none."""
        if target.kind == "daily":
            day = d.parse_date(target.subject.removeprefix("daily:"))
            for ranked in await self.daily.reviewed(day, REVIEWED_MAX):
                if ranked.entry_id == int(target.key):
                    return ranked.entry.name, ranked.entry.review
            for ranked in (await self.daily.page(day, 0, TOP_DAILY)).entries:
                if ranked.entry_id == int(target.key):
                    return ranked.entry.name, ranked.entry.review
            raise Refused("unknown_entry", "no such entry on the desk")
        hub = await self.hubs.get(target.subject.removeprefix("race:"))
        if hub is None:
            raise Refused("unknown_race", "no such race")
        await hub.catch_up()
        race = hub.race
        if target.key not in race.players:
            raise Refused("unknown_player", "no player with that id in this race")
        if race.meta.practice or race.state(now_ms()) != FINISHED:
            raise Refused("race_running", "a result is decided once its race is over")
        standing = race.standing(race.players[target.key])
        return standing.name, standing.review

    async def _follow(self, target: Target, decision: Decision) -> None:
        """Make the result count, or not, as ``decision`` says."""
        if target.kind == "daily":
            day = d.parse_date(target.subject.removeprefix("daily:"))
            ranked = await self.daily.decide(day, int(target.key), decision)
            if ranked is not None:  # every process's live leaderboard reads the day again
                await self.broker.publish(daily_channel(day), published(day, ranked))
            return
        await self.race_results.follow_decisions(target.subject.removeprefix("race:"))

    async def find_decisions(self, hub: RaceHub) -> None:
        """Note in ``hub`` the decisions on its race's results, for its snapshots (read
        when a race that is over is shown: a decision comes after the race)."""
        race = hub.race
        if race.meta.practice or race.over_reason is None:
            return
        decided = await self.store.decisions(f"race:{race.race_id}")
        reviews = {}
        for player_id, decision in decided.items():
            if player_id in race.players:
                wire = review_wire(None, decision)
                assert wire is not None
                reviews[player_id] = wire
        hub.decisions = reviews


def check_note(raw: object) -> str:
    """A decision's note: 1 to :data:`NOTE_MAX` characters; :class:`Refused` ``bad_note``."""
    note = raw.strip() if isinstance(raw, str) else ""
    if not note or len(note) > NOTE_MAX or not note.isprintable():
        raise Refused("bad_note", f"a note has 1 to {NOTE_MAX} printable characters")
    return note


def check_verdict(raw: object) -> str:
    if raw not in VERDICTS:
        raise Refused("bad_message", f"verdict must be one of {', '.join(VERDICTS)}")
    return str(raw)


def check_status(raw: object) -> str:
    if raw not in STATUSES:
        raise Refused("bad_message", f"was must be one of {', '.join(STATUSES)}")
    return str(raw)
