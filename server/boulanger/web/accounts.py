"""Accounts over HTTP: sign up, sign in (password or passkey), sessions, profiles, ratings.

See docs/protocol.md, "Accounts". The rules are :mod:`boulanger.race.accounts`'s,
the storage :mod:`boulanger.broker.accounts`'s; this module is the shell:
cookies, ``Origin`` checks, argon2id and WebAuthn.

- A session is a random id in the ``bk_session`` cookie (``HttpOnly``,
  ``SameSite=Lax``, ``Secure`` when ``cookie_secure`` is set), kept in the
  store by its hash, for :data:`~boulanger.race.accounts.SESSION_DAYS` days.
- Every state-changing request of this module must come with an ``Origin``
  that is the server's own (a form or a script on another site cannot sign
  anyone in or out, or delete anything).
- Failed sign-ins are counted per account name (whether it exists or not)
  and per address; past a limit, sign-in answers 429 for the rest of the
  window, the same for a name that exists and one that does not. A wrong
  name and a wrong password get the same answer, after the same work (a
  password is checked against a dummy hash when the name is unknown).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from ..broker.accounts import AccountStore
from ..race import accounts as a
from ..race import daily as d
from ..race.errors import Refused
from ..race.ids import secret_hash
from ..race.names import clean_name
from .hub import RaceHub, now_ms
from .limits import address_key

if TYPE_CHECKING:
    from .services import Server
    from .settings import Settings

log = logging.getLogger(__name__)

COOKIE = "bk_session"
CEREMONY_S = 300.0  # a passkey ceremony's challenge lives this long
CELLS = (4, 2, 1)
HISTORY_SHOWN = 20
TOP_MAX = 100


def _new_id() -> str:
    return secrets.token_hex(12)


class Accounts:
    """Accounts in one server process: the store, the password hasher, the ceremonies."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.settings: Settings = server.settings
        self.store = AccountStore(server.store.kv)
        s = self.settings
        self.hasher = PasswordHasher(
            time_cost=s.argon2_time_cost,
            memory_cost=s.argon2_memory_kib,
            parallelism=s.argon2_parallelism,
        )
        # How long a sign-up holds its name before its account is saved.
        self.pending_s: float = a.SIGNUP_PENDING_S
        # Checked when a name is unknown, so that it costs what a known one does.
        self._dummy = self.hasher.hash(secrets.token_hex(16))

    # -- origins and sessions -------------------------------------------------

    def origin_of(self, conn: HTTPConnection) -> str:
        """The server's own origin: the setting, or the request's scheme and host."""
        if self.settings.public_origin:
            return self.settings.public_origin.rstrip("/")
        scheme = "https" if conn.url.scheme in ("https", "wss") else "http"
        return f"{scheme}://{conn.headers.get('host', '')}"

    def same_origin(self, conn: HTTPConnection) -> bool:
        return conn.headers.get("origin") == self.origin_of(conn)

    async def account_of(self, conn: HTTPConnection) -> dict[str, Any] | None:
        """The signed-in account of a request or WebSocket, from its session cookie."""
        session = conn.cookies.get(COOKIE)
        if not session or len(session) > 100:
            return None
        account_id = await self.store.session(secret_hash(session))
        if account_id is None:
            return None
        return await self.store.account(account_id)  # None once deleted: the session is over

    async def open_session(self, response: Response, account: dict[str, Any]) -> None:
        session = secrets.token_urlsafe(32)
        ttl = a.SESSION_DAYS * 86400
        await self.store.open_session(secret_hash(session), account["id"], ttl)
        response.set_cookie(
            COOKIE,
            session,
            max_age=ttl,
            path="/",
            httponly=True,
            samesite="lax",
            secure=self.settings.cookie_secure,
        )

    async def close_session(self, request: Request, response: Response) -> None:
        session = request.cookies.get(COOKIE)
        if session and len(session) <= 100:
            await self.store.close_session(secret_hash(session))
        response.delete_cookie(
            COOKIE, path="/", httponly=True, samesite="lax", secure=self.settings.cookie_secure
        )

    # -- passwords ---------------------------------------------------------

    async def hash_password(self, password: str) -> str:
        # argon2id takes tens of milliseconds of one core: off the event loop.
        return await asyncio.to_thread(self.hasher.hash, password)

    async def verify_password(self, stored: str | None, password: str) -> bool:
        def verify() -> bool:
            try:
                return self.hasher.verify(stored or self._dummy, password) and stored is not None
            except (VerificationError, InvalidHashError):
                return False

        return await asyncio.to_thread(verify)

    # -- accounts ----------------------------------------------------------

    async def create(
        self,
        name: str,
        *,
        password: str | None,
        key_hash: str | None,
        account_id: str | None = None,
        passkey: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A new account named ``name``; :class:`Refused` ``name_taken`` when it looks taken.

        ``key_hash``: the hash of the guest player key this browser held, if any.
        """
        account_id = account_id or _new_id()
        name_key = a.account_key(name)
        # The name (and passkey) are reserved for a while, then kept once the account
        # is saved: a crash in between frees them again instead of holding them for ever.
        pending = self.pending_s
        if not await self.store.claim_name(name_key, account_id, pending):
            raise Refused("name_taken", f"{name!r} is taken (or looks like a name taken)")
        if passkey is not None and not await self.store.claim_credential(
            passkey["id"], account_id, pending
        ):
            await self.store.release_name(name_key)
            raise Refused("passkey_taken", "that passkey belongs to an account already")
        daily_key = hashlib.sha256(f"account:{account_id}".encode()).hexdigest()
        # A guest's key, claimed once: its dailies and streak become the account's.
        if key_hash is not None and await self.store.claim_guest_key(key_hash, account_id):
            daily_key = key_hash
        account = {
            "id": account_id,
            "name": name,
            "password": None if password is None else await self.hash_password(password),
            "passkeys": [] if passkey is None else [passkey],
            "daily_key": daily_key,
            "secret": secrets.token_hex(16),
            "created": now_ms(),
        }
        await self.store.save(account)
        await self.store.keep_name(name_key, account_id)
        if passkey is not None:
            await self.store.keep_credential(passkey["id"], account_id)
        return account

    async def check_signin_limits(self, name_key: str, address: str) -> None:
        s = self.settings
        if (
            await self.store.failures("acct", name_key) >= s.signin_fails_per_account
            or await self.store.failures("addr", address) >= s.signin_fails_per_address
        ):
            raise Refused("too_many_attempts", "too many sign-in attempts; try again later")

    async def count_failure(self, name_key: str, address: str) -> None:
        window = a.SIGNIN_WINDOW_S
        await self.store.count_failure("acct", name_key, window)
        await self.store.count_failure("addr", address, window)

    # -- results -----------------------------------------------------------

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
            )
            await self.store.add_result(account_id, result.to_dict(), a.HISTORY_MAX)
        held = any(standings[pid].review is not None for pid in accounts)
        fair = a.rated_race(practice=meta.practice, open_boards=meta.open_boards, daily=meta.daily)
        if len(accounts) < 2 or held or not fair:
            return
        cells = race.code.cells
        ids = list(accounts.values())
        before = [a.Rating.from_dict(await self.store.rating(i, cells)) for i in ids]
        places = [standings[pid].rank or len(race.players) for pid in accounts]
        for index, account_id in enumerate(ids):
            if await self.store.account(account_id) is None:
                continue  # deleted meanwhile

            def change(found: dict[str, Any] | None, index: int = index) -> dict[str, Any]:
                # The opponents as they were when the race ended; this player's own
                # rating as it is now (another race may have just moved it).
                mine = [*before[:index], a.Rating.from_dict(found), *before[index + 1 :]]
                return a.update_ratings(mine, places)[index].to_dict()

            await self.store.update_rating(
                account_id, cells, change, lambda r: a.Rating.from_dict(r).shown
            )

    async def rating_shown(self, account: dict[str, Any], cells: int) -> int:
        """The account's rating for ``cells`` as shown beside its name."""
        return a.Rating.from_dict(await self.store.rating(account["id"], cells)).shown

    async def check_guest_name(self, name: str | None) -> None:
        """Refuse a guest a name an account holds (or "deleted player"), under the
        same normalisation and look-alike key as account names: a guest must not
        pass for a signed-in player in another race."""
        try:
            cleaned = clean_name(name or "")
        except Refused:
            return  # the race refuses it as bad_name
        key = a.account_key(cleaned)
        if key == a.account_key(a.DELETED) or await self.store.name_taken(key):
            raise Refused(
                "name_reserved", f"{cleaned!r} is an account's name: sign in to play as it"
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

    async def forget_dailies(self, account: dict[str, Any]) -> None:
        """Show the account's daily entries under "deleted player".

        Rewritten at deletion, not resolved when read: a day's leaderboard is
        kept for weeks (longer than a race's player -> account notes), its
        pages would need a lookup per entry, and the account knows its one
        player key, so its entries are one look-up per kept day.
        """
        daily = self.server.daily.store
        today = d.today(now_ms())
        for back in range(daily.retention_days + 2):
            await daily.rename(today - timedelta(days=back), account["daily_key"], a.DELETED)

    # -- profiles ----------------------------------------------------------

    async def profile(self, account: dict[str, Any]) -> dict[str, Any]:
        store = self.store
        history = await store.history(account["id"], a.HISTORY_MAX)
        results = [a.RaceResult.from_dict(h) for h in history]
        today = d.today(now_ms())
        daily = self.server.daily.store
        streak = await daily.streak(account["daily_key"], today)
        won = await daily.won_days(account["daily_key"], today, 400)
        played = {date.fromisoformat(r.daily) for r in results if r.daily and r.ranked}
        ratings = {}
        for cells in CELLS:
            found = await store.rating(account["id"], cells)
            if found is not None:
                ratings[str(cells)] = a.Rating.from_dict(found).to_wire()
        return {
            "name": account["name"],
            "since": account["created"],
            "stats": a.stats(results),
            "streak": streak,
            "calendar": a.calendar(played | set(won)),
            "ratings": ratings,
            "races": [
                {
                    **r.to_dict(),
                    "url": f"/race/{r.race_id}",
                    "record": f"/api/races/{r.race_id}/records/{r.player_id}",
                }
                for r in results[:HISTORY_SHOWN]
            ],
        }


# -- HTTP ------------------------------------------------------------------------


def _accounts(conn: HTTPConnection) -> Accounts:
    accounts: Accounts = conn.app.state.server.accounts
    return accounts


def _address(request: Request) -> str:
    return address_key(request.client.host if request.client else "?")


async def _body(request: Request, fields: set[str]) -> dict[str, Any]:
    from .http import json_body, known_fields

    data = await json_body(request)
    known_fields(data, *sorted(fields))
    return data


def _guarded(handler: Any, *, changes: bool = True) -> Any:
    """A state-changing request needs our own ``Origin`` (refusals are answered by the
    app's handlers, as every route's)."""

    async def wrapped(request: Request) -> Response:
        if changes and not _accounts(request).same_origin(request):
            raise Refused("bad_origin", "this request must come from this site's pages")
        response: Response = await handler(request)
        return response

    wrapped.__name__ = handler.__name__
    wrapped.__doc__ = handler.__doc__
    return wrapped


def _player_key(value: Any) -> str | None:
    from .daily_http import _player_key as check

    return None if value is None else check(value)


def _me(account: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": account["name"],
        "password": account["password"] is not None,
        "passkeys": len(account["passkeys"]),
        "url": f"/@/{account['name']}",
    }


async def _signed_in(request: Request) -> dict[str, Any]:
    account = await _accounts(request).account_of(request)
    if account is None:
        raise Refused("signed_out", "sign in first")
    return account


async def sign_up(request: Request) -> Response:
    """``POST /api/accounts``: a name and a password (a passkey: see the passkey routes)."""
    accounts = _accounts(request)
    data = await _body(request, {"name", "password", "player_key"})
    name = a.account_name(data.get("name"))
    password = a.check_password(data.get("password"))
    player_key = _player_key(data.get("player_key"))
    if not await accounts.server.addresses.may_create(_address(request)):
        raise Refused("too_many_accounts", "too many accounts made from this address")
    key_hash = None if player_key is None else secret_hash(player_key)
    account = await accounts.create(name, password=password, key_hash=key_hash)
    response = JSONResponse(_me(account), status_code=201)
    await accounts.open_session(response, account)
    return response


async def sign_in(request: Request) -> Response:
    """``POST /api/session``: a name and password."""
    accounts = _accounts(request)
    data = await _body(request, {"name", "password"})
    raw_name, password = data.get("name"), data.get("password")
    if not isinstance(raw_name, str) or not isinstance(password, str):
        raise Refused("bad_message", "name and password are text")
    try:
        key = a.account_key(a.account_name(raw_name))
    except Refused:
        key = hashlib.sha256(raw_name.encode("utf-8", "replace")).hexdigest()[:32]
    address = _address(request)
    await accounts.check_signin_limits(key, address)
    account = await accounts.store.account_by_name(key)
    stored = None if account is None else account["password"]
    good = len(password) <= a.PASSWORD_MAX and await accounts.verify_password(
        stored, password[: a.PASSWORD_MAX]
    )
    if account is None or not good:
        await accounts.count_failure(key, address)
        raise Refused("bad_credentials", "wrong name or password")
    response = JSONResponse(_me(account))
    await accounts.open_session(response, account)
    return response


async def sign_out(request: Request) -> Response:
    """``DELETE /api/session``: this browser's session ends (in every replica: it is stored)."""
    response = JSONResponse({"ok": True})
    await _accounts(request).close_session(request, response)
    return response


async def me(request: Request) -> Response:
    """``GET /api/me``: the signed-in account, or ``{"account": null}``."""
    account = await _accounts(request).account_of(request)
    return JSONResponse({"account": None if account is None else _me(account)})


async def change_password(request: Request) -> Response:
    """``POST /api/me/password``: the current password (if any) and a new one."""
    accounts = _accounts(request)
    account = await _signed_in(request)
    data = await _body(request, {"current", "password"})
    new = a.check_password(data.get("password"))
    if account["password"] is not None:
        current = data.get("current")
        if not isinstance(current, str) or not await accounts.verify_password(
            account["password"], current
        ):
            raise Refused("bad_credentials", "the current password is wrong")
    account["password"] = await accounts.hash_password(new)
    await accounts.store.save(account)
    return JSONResponse(_me(account))


async def delete_account(request: Request) -> Response:
    """``DELETE /api/me``: the body names the account, as a confirmation."""
    accounts = _accounts(request)
    account = await _signed_in(request)
    data = await _body(request, {"name"})
    if data.get("name") != account["name"]:
        raise Refused("confirm", "send the account's name to confirm")
    await accounts.store.delete(account, a.account_key(account["name"]), list(CELLS))
    await accounts.forget_dailies(account)
    response = JSONResponse({"ok": True})
    await accounts.close_session(request, response)
    return response


async def player(request: Request) -> Response:
    """``GET /api/players/{name}``: a player's stats, streak, calendar, ratings, races."""
    accounts = _accounts(request)
    try:
        key = a.account_key(a.account_name(request.path_params["name"]))
    except Refused:
        raise Refused("unknown_player", "no such player") from None
    account = await accounts.store.account_by_name(key)
    if account is None:
        raise Refused("unknown_player", "no such player")
    return JSONResponse(await accounts.profile(account))


async def ratings(request: Request) -> Response:
    """``GET /api/ratings?cells=4``: the top of a cell count's ratings."""
    accounts = _accounts(request)
    text = request.query_params.get("cells", "4")
    if text not in ("4", "2", "1"):
        raise Refused("bad_message", "cells must be 4, 2 or 1")
    cells = int(text)
    top = []
    for account_id, shown in await accounts.store.top(cells, TOP_MAX):
        account = await accounts.store.account(account_id)
        found = await accounts.store.rating(account_id, cells)
        if account is None or found is None:
            continue
        rating = a.Rating.from_dict(found)
        top.append({"name": account["name"], "rating": int(shown), "races": rating.races})
    return JSONResponse({"cells": cells, "top": top})


async def race_ratings(request: Request) -> Response:
    """``GET /api/races/{race_id}/ratings``: the signed-in players of a race and their ratings."""
    accounts = _accounts(request)
    hub = await accounts.server.hubs.get(request.path_params["race_id"])
    if hub is None:
        raise Refused("unknown_race", "no such race")
    race = hub.race
    cells = race.code.cells
    players = []
    for player_id in list(race.players):
        account_id = await accounts.store.player_account(race.race_id, player_id)
        account = None if account_id is None else await accounts.store.account(account_id)
        if account is None:
            continue
        rating = a.Rating.from_dict(await accounts.store.rating(account["id"], cells))
        players.append(
            {
                "player_id": player_id,
                "name": account["name"],
                **rating.to_wire(),
                "url": f"/@/{account['name']}",
            }
        )
    return JSONResponse({"cells": cells, "players": players})


def routes() -> list[BaseRoute]:
    """The accounts' routes, for :func:`boulanger.web.app.create_app`."""
    return [
        Route("/api/accounts", _guarded(sign_up), methods=["POST"]),
        Route("/api/session", _guarded(sign_in), methods=["POST"]),
        Route("/api/session", _guarded(sign_out), methods=["DELETE"]),
        Route("/api/me", _guarded(me, changes=False), methods=["GET"]),
        Route("/api/me", _guarded(delete_account), methods=["DELETE"]),
        Route("/api/me/password", _guarded(change_password), methods=["POST"]),
        Route("/api/players/{name}", _guarded(player, changes=False)),
        Route("/api/ratings", _guarded(ratings, changes=False)),
        Route("/api/races/{race_id}/ratings", _guarded(race_ratings, changes=False)),
    ]


def host_of(origin: str) -> str:
    """The host name of an origin: a passkey's relying party id."""
    return urlsplit(origin).hostname or ""
