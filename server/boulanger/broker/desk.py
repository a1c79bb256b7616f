"""The review desk in the store: moderators, decisions, the audit log, the day's rated races.

Like :mod:`.accounts`, every operation is on one key of the store's
key-value part (:class:`~.contracts.KeyValue`), so the same code runs on
every backend, and every process sharing a store reads the same answers::

    bk:{moderators}            string  JSON list of the moderators' account ids
    bk:decisions:{S}           string  JSON object: result -> decision, for subject S
                                       ("daily:DATE": entry ids; "race:RACE": player ids)
    bk:{audit}                 list    every decision, newest first (AuditEntry JSON)
    bk:desk:races:{DATE}       list    the day's results of rated races worth a look
                                       (held, or a win), newest first (RaceSeen JSON)
    bk:desk:race:{RACE}        string  a rated race's players and their changes of rating,
                                       applied while their result counts (RatedRaceDict)

A decision is written by compare-and-set (:meth:`DeskStore.decide`): two
moderators deciding the same result at once cannot both win, and the one
who saw an older state is told (:class:`DecidedMeanwhile`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import NotRequired, TypedDict, cast

from ..race.review import Decision, DecisionDict, LineSignal, LineSignalDict
from .contracts import KeyValue

AUDIT_MAX = 10_000  # decisions the audit log keeps (the oldest go)
RACES_MAX = 1_000  # rated races' results kept per day for the desk
RACE_KEEP_S = 3 * 86400


class DecidedMeanwhile(Exception):
    """The result's decision is not the one the moderator saw (another decided first)."""

    def __init__(self, current: Decision | None) -> None:
        super().__init__("decided meanwhile")
        self.current = current


def _dump(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


class AuditEntryDict(TypedDict):
    result: str
    subject: str
    name: str
    action: str
    was: str
    status: str
    note: str
    by: str
    at: int


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One line of the audit log: who (``by``), when (``at``), what (``action``:
    ``decide`` or ``reverse``, from status ``was`` to ``status``), why (``note``),
    on which result (``result``, its ``subject``, its player's ``name``)."""

    result: str
    subject: str
    name: str
    action: str
    was: str
    status: str
    note: str
    by: str
    at: int

    def to_dict(self) -> AuditEntryDict:
        return {
            "result": self.result,
            "subject": self.subject,
            "name": self.name,
            "action": self.action,
            "was": self.was,
            "status": self.status,
            "note": self.note,
            "by": self.by,
            "at": self.at,
        }

    @classmethod
    def from_dict(cls, data: AuditEntryDict) -> AuditEntry:
        return cls(**{k: data[k] for k in AuditEntryDict.__annotations__})  # type: ignore[literal-required]


class RaceSeenDict(TypedDict):
    race_id: str
    player_id: str
    name: str
    cells: int
    players: int
    place: int | None
    time_ms: int | None
    actions: int
    review: str | None
    line: NotRequired[LineSignalDict]
    line_held: NotRequired[str]
    at: int


@dataclass(frozen=True, slots=True)
class RaceSeen:
    """A result of a rated race as the desk lists it: held, or a win."""

    race_id: str
    player_id: str
    name: str
    cells: int
    players: int
    place: int | None
    time_ms: int | None
    actions: int
    review: str | None
    line: LineSignal | None
    line_held: str | None
    at: int

    def to_dict(self) -> RaceSeenDict:
        data: RaceSeenDict = {
            "race_id": self.race_id,
            "player_id": self.player_id,
            "name": self.name,
            "cells": self.cells,
            "players": self.players,
            "place": self.place,
            "time_ms": self.time_ms,
            "actions": self.actions,
            "review": self.review,
            "at": self.at,
        }
        if self.line is not None:
            data["line"] = self.line.to_dict()
        if self.line_held is not None:
            data["line_held"] = self.line_held
        return data

    @classmethod
    def from_dict(cls, data: RaceSeenDict) -> RaceSeen:
        line = data.get("line")
        return cls(
            race_id=data["race_id"],
            player_id=data["player_id"],
            name=data["name"],
            cells=data["cells"],
            players=data["players"],
            place=data["place"],
            time_ms=data["time_ms"],
            actions=data["actions"],
            review=data["review"],
            line=None if line is None else LineSignal.from_dict(line),
            line_held=data.get("line_held"),
            at=data["at"],
        )


class RatedPlayerDict(TypedDict):
    """A player of a rated race: the change of rating the race gives them (``mu``,
    ``sigma``), and whether it is applied (it is while their result counts)."""

    account_id: str
    change: list[float]
    applied: bool
    held: NotRequired[bool]  # held for review when the race ended


class RatedRaceDict(TypedDict):
    cells: int
    players: dict[str, RatedPlayerDict]


class DeskStore:
    """Moderators, decisions, the audit log and rated races, on a key-value store."""

    def __init__(self, kv: KeyValue) -> None:
        self.kv = kv

    # -- moderators ------------------------------------------------------------

    async def moderators(self) -> list[str]:
        """The moderators' account ids."""
        found = await self.kv.get("bk:{moderators}")
        return [] if found is None else [str(i) for i in json.loads(found)]

    async def is_moderator(self, account_id: str) -> bool:
        return account_id in await self.moderators()

    async def set_moderator(self, account_id: str, moderator: bool) -> bool:
        """Grant (or take back) the role; True when that changed anything."""
        changed = False

        def change(found: str | None) -> str:
            nonlocal changed
            ids = set() if found is None else set(json.loads(found))
            changed = (account_id in ids) != moderator
            ids.add(account_id) if moderator else ids.discard(account_id)
            return _dump(sorted(ids))

        await self.kv.update("bk:{moderators}", change)
        return changed

    # -- decisions ----------------------------------------------------------------

    async def decisions(self, subject: str) -> dict[str, Decision]:
        """Every decision on the results of ``subject`` (a day's or a race's)."""
        found = await self.kv.get(f"bk:decisions:{{{subject}}}")
        if found is None:
            return {}
        data: dict[str, DecisionDict] = json.loads(found)
        return {key: Decision.from_dict(value) for key, value in data.items()}

    async def decide(
        self, subject: str, key: str, decision: Decision, was: Decision | None
    ) -> None:
        """Make ``decision`` the result's, if its decision is still ``was`` (compared by
        status and time): else :class:`DecidedMeanwhile`, nothing written."""

        def change(found: str | None) -> str:
            data: dict[str, DecisionDict] = {} if found is None else json.loads(found)
            current = data.get(key)
            seen = None if current is None else Decision.from_dict(current)
            if seen != was:
                raise DecidedMeanwhile(seen)
            data[key] = decision.to_dict()
            return _dump(data)

        await self.kv.update(f"bk:decisions:{{{subject}}}", change)

    # -- the audit log ------------------------------------------------------------

    async def log(self, entry: AuditEntry) -> None:
        await self.kv.push("bk:{audit}", _dump(entry.to_dict()), AUDIT_MAX)

    async def audit(self, limit: int) -> list[AuditEntry]:
        return [
            AuditEntry.from_dict(json.loads(t)) for t in await self.kv.items("bk:{audit}", limit)
        ]

    # -- rated races ----------------------------------------------------------------

    async def add_race_result(self, day: str, seen: RaceSeen) -> None:
        await self.kv.push(f"bk:desk:races:{{{day}}}", _dump(seen.to_dict()), RACES_MAX)

    async def race_results(self, day: str, limit: int) -> list[RaceSeen]:
        texts = await self.kv.items(f"bk:desk:races:{{{day}}}", limit)
        return [RaceSeen.from_dict(json.loads(t)) for t in texts]

    async def rated_race(self, race_id: str) -> RatedRaceDict | None:
        """A rated race's players and their changes of rating (kept a few days)."""
        found = await self.kv.get(f"bk:desk:race:{{{race_id}}}")
        return None if found is None else cast(RatedRaceDict, json.loads(found))

    async def set_rated_race(self, race_id: str, race: RatedRaceDict) -> None:
        await self.kv.set(f"bk:desk:race:{{{race_id}}}", _dump(race), RACE_KEEP_S)

    async def mark_applied(self, race_id: str, player_id: str, applied: bool) -> list[float] | None:
        """Mark the player's change of rating applied (or not): the change to make to
        their rating now (the race's change, or its opposite), or None when it
        already was so (or the race is not kept)."""
        flipped: list[float] | None = None

        def change(found: str | None) -> str:
            nonlocal flipped
            flipped = None
            if found is None:
                return ""
            race = cast(RatedRaceDict, json.loads(found))
            player = race["players"].get(player_id)
            if player is not None and player["applied"] != applied:
                player["applied"] = applied
                sign = 1.0 if applied else -1.0
                flipped = [sign * part for part in player["change"]]
            return _dump(race)

        key = f"bk:desk:race:{{{race_id}}}"
        if await self.kv.get(key) is None:
            return None
        await self.kv.update(key, change)
        return flipped
