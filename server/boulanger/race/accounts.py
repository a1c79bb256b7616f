"""Accounts' rules and records: names, passwords, sign-in limits, accounts, history
entries and ratings.

Plain Python, no storage and no transport (those are :mod:`boulanger.broker.accounts`
and :mod:`boulanger.web.accounts`); the records' stored forms are the
``...Dict`` shapes at the end. An account name follows the rules of a
race name (:mod:`.names`: normalised, visible characters, compared by the
confusable skeleton) and has :data:`ACCOUNT_NAME_MIN` to :data:`ACCOUNT_NAME_MAX`
characters; two accounts may not have names that look alike.
"""

from __future__ import annotations

import hashlib
import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import NotRequired, TypedDict
from urllib.parse import quote

from .errors import Refused
from .names import clean_name, look_alike, name_key, shape_key

ACCOUNT_NAME_MIN, ACCOUNT_NAME_MAX = 3, 20
PASSWORD_MIN, PASSWORD_MAX = 8, 128
# Sign-in attempts (right or wrong), per window, before the door closes for the rest of
# it: per name (or per device that signed in to the name's account before), per address.
SIGNIN_ATTEMPTS_PER_ACCOUNT = 10
SIGNIN_ATTEMPTS_PER_ADDRESS = 30
SIGNIN_WINDOW_S = 15 * 60
# Accounts made per address, per hour; passkey ceremonies begun per address, per window.
SIGNUPS_PER_ADDRESS = 5
SIGNUP_WINDOW_S = 60 * 60
CEREMONIES_PER_ADDRESS = 30
SESSION_DAYS = 30
DEVICE_DAYS = 180  # a device cookie: this browser signed in to the account before
HISTORY_MAX = 200  # races kept per account (the oldest go)
RATING_HISTORY_MAX = 100  # points of a rating's history kept per account and cells
DELETED = "deleted player"
# The names the web client gives a guest who has not chosen one, in each of its
# languages (client/lang/*.json, "name.default"): no account may take one (nor a
# look-alike), so that no account can turn new guests away.
GUEST_DEFAULTS = ("Player", "Spiller", "Gracz", "Jucător", "Игрок", "Spelare")
RESERVED = (DELETED, *GUEST_DEFAULTS)


def account_name(raw: object) -> str:
    """An account name as stored and shown; :class:`Refused` ``bad_name`` otherwise."""
    name = clean_name(raw)
    if not ACCOUNT_NAME_MIN <= len(name) <= ACCOUNT_NAME_MAX:
        raise Refused(
            "bad_name",
            f"an account name has {ACCOUNT_NAME_MIN} to {ACCOUNT_NAME_MAX} visible characters",
        )
    if reserved(name):
        raise Refused("bad_name", f"{name!r} is kept for guests and deleted accounts")
    return name


def reserved(name: str) -> bool:
    """Whether ``name`` looks like a name no account may have (:data:`RESERVED`)."""
    return any(look_alike(name, kept) for kept in RESERVED)


def guest_default(name: str) -> bool:
    """Whether ``name`` looks like a name the client gives guests (:data:`GUEST_DEFAULTS`)."""
    return any(look_alike(name, kept) for kept in GUEST_DEFAULTS)


def profile_url(name: str) -> str:
    """The link to a player's profile page, the name encoded (a ``/`` in it too)."""
    return "/@/" + quote(name, safe="")


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def account_key(name: str) -> str:
    """What an account is found by: a digest of its name's key (case folded first,
    :func:`~.names.name_key`; fixed length)."""
    return _digest(name_key(name))


def account_keys(name: str) -> list[str]:
    """Every key an account's name holds, so that no other account nor a guest takes a
    look-alike: :func:`account_key`, then the digest of its
    :func:`~.names.shape_key` when that differs (an account made before the name key
    folded case first is kept under this one)."""
    keys = [account_key(name), _digest(shape_key(name))]
    return keys[:1] if keys[0] == keys[1] else keys


# A language the client shows its words in: a language code (ISO 639, two or
# three lower-case letters). The server keeps it for the account and never
# reads it: which languages there are is the client's (client/lang/).
LANGUAGE = re.compile(r"[a-z]{2,3}")


def check_language(raw: object) -> str:
    """A language code as the account keeps it; :class:`Refused` ``bad_language`` otherwise."""
    if not isinstance(raw, str) or LANGUAGE.fullmatch(raw) is None:
        raise Refused("bad_language", "a language is a code of 2 or 3 lower-case letters")
    return raw


def check_password(raw: object) -> str:
    """A password within the policy; :class:`Refused` ``bad_password`` otherwise."""
    if not isinstance(raw, str) or not PASSWORD_MIN <= len(raw) <= PASSWORD_MAX:
        raise Refused("bad_password", f"a password has {PASSWORD_MIN} to {PASSWORD_MAX} characters")
    return raw


# -- accounts ------------------------------------------------------------------


@dataclass(slots=True)
class Passkey:
    """A WebAuthn credential of an account: its id, public key and signature count."""

    id: str
    public_key: str
    sign_count: int

    def to_dict(self) -> PasskeyDict:
        return {"id": self.id, "public_key": self.public_key, "sign_count": self.sign_count}

    @classmethod
    def from_dict(cls, data: PasskeyDict) -> Passkey:
        return cls(str(data["id"]), str(data["public_key"]), int(data["sign_count"]))


@dataclass(slots=True)
class Account:
    """An account as the store keeps it (its JSON: :meth:`to_dict`, :meth:`from_dict`)."""

    id: str
    name: str
    password: str | None  # the argon2id hash; None: passkeys only
    passkeys: list[Passkey]
    daily_key: str  # the player key hash its daily challenge entries are kept under
    secret: str  # the key of its ranked dailies' host keys
    created: int  # ms
    # Sessions are opened under the account's epoch; a password change moves it on,
    # which ends every session opened before.
    epoch: int = 0
    language: str | None = None  # the client's language, chosen on any device

    def to_dict(self) -> AccountDict:
        data: AccountDict = {
            "id": self.id,
            "name": self.name,
            "password": self.password,
            "passkeys": [p.to_dict() for p in self.passkeys],
            "daily_key": self.daily_key,
            "secret": self.secret,
            "created": self.created,
        }
        if self.epoch:  # left out until the password changes: older records keep their bytes
            data["epoch"] = self.epoch
        if self.language is not None:  # left out until chosen: older records keep their bytes
            data["language"] = self.language
        return data

    @classmethod
    def from_dict(cls, data: AccountDict) -> Account:
        return cls(
            id=str(data["id"]),
            name=str(data["name"]),
            password=data.get("password"),
            passkeys=[Passkey.from_dict(p) for p in data.get("passkeys", [])],
            daily_key=str(data.get("daily_key", "")),
            secret=str(data.get("secret", "")),
            created=int(data.get("created", 0)),
            epoch=int(data.get("epoch", 0)),
            language=data.get("language"),
        )

    def passkey(self, credential_id: str) -> Passkey | None:
        """The account's passkey of that credential id, if any."""
        return next((p for p in self.passkeys if p.id == credential_id), None)


class Me(TypedDict):
    """The signed-in account as ``GET /api/me`` and sign-in answer it."""

    name: str
    password: bool
    passkeys: int
    url: str
    language: str | None


def me(account: Account) -> Me:
    """What the account's own pages are told of it."""
    return {
        "name": account.name,
        "password": account.password is not None,
        "passkeys": len(account.passkeys),
        "url": profile_url(account.name),
        "language": account.language,
    }


@dataclass(frozen=True, slots=True)
class Ceremony:
    """A passkey ceremony between its two requests: its kind and challenge, and for a
    sign-up the name, account id and guest key hash; for adding one, the account."""

    kind: str  # "signup", "signin" or "add"
    challenge: str
    name: str | None = None
    account_id: str | None = None
    key_hash: str | None = None

    def to_dict(self) -> CeremonyDict:
        data: CeremonyDict = {"kind": self.kind}
        if self.name is not None:
            data["name"] = self.name
        if self.account_id is not None:
            data["account_id"] = self.account_id
        if self.kind == "signup":
            data["key_hash"] = self.key_hash
        data["challenge"] = self.challenge
        return data

    @classmethod
    def from_dict(cls, data: CeremonyDict) -> Ceremony:
        return cls(
            str(data["kind"]),
            str(data["challenge"]),
            data.get("name"),
            data.get("account_id"),
            data.get("key_hash"),
        )


# -- history ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RaceResult:
    """One race as its player's history keeps it."""

    race_id: str
    player_id: str
    at: int  # ms, the race's end
    cells: int
    players: int
    place: int | None  # 1 = won the race; None: held for review
    won: bool  # solved the deal
    time_ms: int | None
    daily: str | None = None
    ranked: bool = False
    held: str | None = None  # why the result was held for review, if it was

    def to_dict(self) -> RaceResultDict:
        data: RaceResultDict = {
            "race_id": self.race_id,
            "player_id": self.player_id,
            "at": self.at,
            "cells": self.cells,
            "players": self.players,
            "place": self.place,
            "won": self.won,
            "time_ms": self.time_ms,
            "daily": self.daily,
            "ranked": self.ranked,
        }
        if self.held is not None:
            data["held"] = self.held
        return data

    @classmethod
    def from_dict(cls, data: RaceResultDict) -> RaceResult:
        return cls(
            race_id=data["race_id"],
            player_id=data["player_id"],
            at=data["at"],
            cells=data["cells"],
            players=data["players"],
            place=data["place"],
            won=data["won"],
            time_ms=data["time_ms"],
            daily=data.get("daily"),
            ranked=data.get("ranked", False),
            held=data.get("held"),
        )


@dataclass(slots=True)
class CellStats:
    played: int = 0
    won: int = 0
    first: int = 0
    times: list[int] = field(default_factory=list)

    def to_wire(self) -> CellStatsWire:
        return {
            "played": self.played,
            "won": self.won,
            "first": self.first,
            "win_rate": round(self.won / self.played, 3) if self.played else 0.0,
            "best_ms": min(self.times) if self.times else None,
            "median_ms": int(statistics.median(self.times)) if self.times else None,
        }


def stats(results: Iterable[RaceResult]) -> StatsWire:
    """Races and dailies played and won, and per cell count best and median times."""
    races, dailies = CellStats(), CellStats()
    cells: dict[int, CellStats] = {}
    for result in results:
        for bucket in (
            dailies if result.daily else races,
            cells.setdefault(result.cells, CellStats()),
        ):
            bucket.played += 1
            bucket.won += result.won
            bucket.first += result.place == 1 and result.players > 1
            if result.won and result.time_ms is not None:
                bucket.times.append(result.time_ms)
    return {
        "races": races.to_wire(),
        "dailies": dailies.to_wire(),
        "cells": {str(c): s.to_wire() for c, s in sorted(cells.items(), reverse=True)},
    }


def calendar(days: Iterable[date]) -> list[str]:
    """The days a daily was played, as ISO dates, latest first."""
    return [d.isoformat() for d in sorted(set(days), reverse=True)]


# A sign-up's name is held this long before its account is saved (then for good).
SIGNUP_PENDING_S = 60.0


# -- ratings ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rating:
    """An OpenSkill (Plackett-Luce) rating: ``mu`` and ``sigma``; shown as ``mu - 3 sigma``."""

    mu: float = 25.0
    sigma: float = 25.0 / 3
    races: int = 0

    @property
    def shown(self) -> int:
        return round(max(0.0, self.mu - 3 * self.sigma) * 40)

    def to_dict(self) -> RatingDict:
        return {"mu": self.mu, "sigma": self.sigma, "races": self.races}

    def to_wire(self) -> RatingWire:
        return {"rating": self.shown, "races": self.races}

    @classmethod
    def from_dict(cls, data: RatingDict | None) -> Rating:
        if not data:
            return cls()
        return cls(float(data["mu"]), float(data["sigma"]), int(data.get("races", 0)))


def rated_race(*, practice: bool, open_boards: bool, daily: str | None) -> bool:
    """Whether a race may count for ratings: fair races between players, not practice."""
    return not practice and not open_boards and daily is None


# Ratings move only when every rated player really played: at least this many
# actions each (moves and undos; docs/fair-play.md). A race where one card goes
# up and everyone resigns moves nobody's rating.
RATED_MIN_ACTIONS = 10


def played_enough(actions: int) -> bool:
    """Whether a player's game counts for a rating: :data:`RATED_MIN_ACTIONS` actions."""
    return actions >= RATED_MIN_ACTIONS


def update_ratings(before: list[Rating], places: list[int]) -> list[Rating]:
    """New ratings from a race's final order (``places``: 1 is first; ties share a place)."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    teams = [[model.rating(mu=r.mu, sigma=r.sigma)] for r in before]
    rated = model.rate(teams, ranks=[float(p) for p in places])
    return [
        Rating(team[0].mu, team[0].sigma, old.races + 1)
        for team, old in zip(rated, before, strict=True)
    ]


# -- the stored and wire forms ------------------------------------------------


class PasskeyDict(TypedDict):
    id: str
    public_key: str
    sign_count: int


class AccountDict(TypedDict):
    id: str
    name: str
    password: str | None
    passkeys: list[PasskeyDict]
    daily_key: str
    secret: str
    created: int
    epoch: NotRequired[int]
    language: NotRequired[str]


class CeremonyDict(TypedDict):
    kind: str
    challenge: NotRequired[str]  # set last, as stored
    name: NotRequired[str]
    account_id: NotRequired[str]
    key_hash: NotRequired[str | None]


class RaceResultDict(TypedDict):
    race_id: str
    player_id: str
    at: int
    cells: int
    players: int
    place: int | None
    won: bool
    time_ms: int | None
    daily: NotRequired[str | None]
    ranked: NotRequired[bool]
    held: NotRequired[str]


class CellStatsWire(TypedDict):
    played: int
    won: int
    first: int
    win_rate: float
    best_ms: int | None
    median_ms: int | None


class StatsWire(TypedDict):
    races: CellStatsWire
    dailies: CellStatsWire
    cells: dict[str, CellStatsWire]


class RatingDict(TypedDict):
    mu: float
    sigma: float
    races: NotRequired[int]


class RatingWire(TypedDict):
    rating: int
    races: int


class RatingPoint(TypedDict):
    """A point of a rating's history: when a race's change was applied or taken
    back (``at``, ms), the rating shown after it, and the race."""

    at: int
    cells: int
    shown: int
    race_id: str
