"""Accounts over HTTP: sign up, sign in with a password, sessions, profiles, ratings.

Thin transport around :mod:`.accounts` (the service); the passkey routes are
:mod:`.passkeys`'s. See docs/protocol.md, "Accounts".
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from ..race import accounts as a
from ..race.errors import Refused
from ..race.ids import player_key, secret_hash
from ..race.names import clean_name
from .accounts import Accounts
from .http import json_body, known_fields
from .limits import address_key
from .services import Server

TOP_MAX = 100

Handler = Callable[[Request], Awaitable[Response]]


def server_of(conn: HTTPConnection) -> Server:
    server: Server = conn.app.state.server
    return server


def accounts_of(conn: HTTPConnection) -> Accounts:
    """The accounts service of the app serving ``conn``."""
    return server_of(conn).accounts


def address_of(request: Request) -> str:
    """What the request's address counts as (see :func:`.limits.address_key`)."""
    return address_key(request.client.host if request.client else "?")


async def body(request: Request, fields: set[str]) -> dict[str, Any]:
    """The request's JSON object, with no field but ``fields``."""
    data = await json_body(request)
    known_fields(data, *sorted(fields))
    return data


def guarded(handler: Handler, *, changes: bool = True) -> Handler:
    """A state-changing request needs our own ``Origin`` (refusals are answered by the
    app's handlers, as every route's)."""

    async def wrapped(request: Request) -> Response:
        if changes and not accounts_of(request).same_origin(request):
            raise Refused("bad_origin", "this request must come from this site's pages")
        return await handler(request)

    wrapped.__name__ = handler.__name__
    wrapped.__doc__ = handler.__doc__
    return wrapped


def optional_player_key(value: object) -> str | None:
    """A body's ``player_key``, if it has one."""
    return None if value is None else player_key(value)


async def signed_in(request: Request) -> a.Account:
    """The request's signed-in account; :class:`Refused` ``signed_out`` without one."""
    account = await accounts_of(request).account_of(request)
    if account is None:
        raise Refused("signed_out", "sign in first")
    return account


async def sign_up(request: Request) -> Response:
    """``POST /api/accounts``: a name and a password (a passkey: see the passkey routes)."""
    accounts = accounts_of(request)
    data = await body(request, {"name", "password", "player_key"})
    name = a.account_name(data.get("name"))
    password = a.check_password(data.get("password"))
    player_key = optional_player_key(data.get("player_key"))
    await accounts.count_signup(address_of(request))
    key_hash = None if player_key is None else secret_hash(player_key)
    account = await accounts.create(name, password=password, key_hash=key_hash)
    response = JSONResponse(a.me(account), status_code=201)
    await accounts.open_session(response, account)
    return response


async def sign_in(request: Request) -> Response:
    """``POST /api/session``: a name and password."""
    accounts = accounts_of(request)
    data = await body(request, {"name", "password"})
    raw_name, password = data.get("name"), data.get("password")
    if not isinstance(raw_name, str) or not isinstance(password, str):
        raise Refused("bad_message", "name and password are text")
    try:
        name = clean_name(raw_name)
        key = a.account_key(name)
    except Refused:
        name, key = None, hashlib.sha256(raw_name.encode("utf-8", "replace")).hexdigest()[:32]
    account = None if name is None else await accounts.find(name)
    # Counted before the password is checked: attempts sent at once are counted too.
    await accounts.count_signin(
        request, key, None if account is None else account.id, address_of(request)
    )
    stored = None if account is None else account.password
    good = len(password) <= a.PASSWORD_MAX and await accounts.verify_password(
        stored, password[: a.PASSWORD_MAX]
    )
    if account is None or not good:
        raise Refused("bad_credentials", "wrong name or password")
    response = JSONResponse(a.me(account))
    await accounts.open_session(response, account)
    return response


async def sign_out(request: Request) -> Response:
    """``DELETE /api/session``: this browser's session ends (in every replica: it is stored)."""
    response = JSONResponse({"ok": True})
    await accounts_of(request).close_session(request, response)
    return response


async def me(request: Request) -> Response:
    """``GET /api/me``: the signed-in account, or ``{"account": null}``."""
    account = await accounts_of(request).account_of(request)
    if account is None:
        return JSONResponse({"account": None})
    moderator = await server_of(request).desk.store.is_moderator(account.id)
    return JSONResponse({"account": {**a.me(account), "moderator": moderator}})


async def change_password(request: Request) -> Response:
    """``POST /api/me/password``: the current password (or a passkey assertion) and a
    new one. Every other session of the account ends; this one goes on, renewed."""
    accounts = accounts_of(request)
    account = await signed_in(request)
    data = await body(request, {"current", "passkey", "password"})
    new = a.check_password(data.get("password"))
    await accounts.reauthenticate(request, account, data, address_of(request))
    await accounts.change_password(account, new)
    response = JSONResponse(a.me(account))
    await accounts.open_session(response, account)  # the old one ended with the epoch
    return response


async def set_language(request: Request) -> Response:
    """``POST /api/me/language``: the language the client shows the account's pages in."""
    accounts = accounts_of(request)
    account = await signed_in(request)
    data = await body(request, {"language"})
    account.language = a.check_language(data.get("language"))
    await accounts.store.save(account)
    return JSONResponse(a.me(account))


async def delete_account(request: Request) -> Response:
    """``DELETE /api/me``: the body names the account, as a confirmation, with the
    current password (or a passkey assertion)."""
    accounts = accounts_of(request)
    account = await signed_in(request)
    data = await body(request, {"name", "current", "passkey"})
    if data.get("name") != account.name:
        raise Refused("confirm", "send the account's name to confirm")
    await accounts.reauthenticate(request, account, data, address_of(request))
    await accounts.delete(account)
    response = JSONResponse({"ok": True})
    await accounts.close_session(request, response)
    return response


async def player(request: Request) -> Response:
    """``GET /api/players/{name}``: a player's stats, streak, calendar, ratings, races."""
    accounts = accounts_of(request)
    try:
        name = clean_name(request.path_params["name"])
    except Refused:
        raise Refused("unknown_player", "no such player") from None
    account = await accounts.find(name)
    if account is None:
        raise Refused("unknown_player", "no such player")
    return JSONResponse(await server_of(request).profiles.profile(account))


async def ratings(request: Request) -> Response:
    """``GET /api/ratings?cells=4``: the top of a cell count's ratings."""
    accounts = accounts_of(request)
    text = request.query_params.get("cells", "4")
    if text not in ("4", "2", "1"):
        raise Refused("bad_message", "cells must be 4, 2 or 1")
    cells = int(text)
    top = []
    for account_id, shown in await accounts.store.top(cells, TOP_MAX):
        account = await accounts.store.account(account_id)
        rating = await accounts.store.rating(account_id, cells)
        if account is None or rating is None:
            continue
        top.append({"name": account.name, "rating": int(shown), "races": rating.races})
    return JSONResponse({"cells": cells, "top": top})


async def race_ratings(request: Request) -> Response:
    """``GET /api/races/{race_id}/ratings``: the signed-in players of a race and their ratings."""
    server = server_of(request)
    accounts = server.accounts
    hub = await server.hubs.get(request.path_params["race_id"])
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
        rating = await accounts.store.rating(account.id, cells) or a.Rating()
        players.append(
            {
                "player_id": player_id,
                "name": account.name,
                **rating.to_wire(),
                "url": a.profile_url(account.name),
            }
        )
    return JSONResponse({"cells": cells, "players": players})


def routes() -> list[BaseRoute]:
    """The accounts' routes, for :func:`boulanger.web.app.create_app`."""
    return [
        Route("/api/accounts", guarded(sign_up), methods=["POST"]),
        Route("/api/session", guarded(sign_in), methods=["POST"]),
        Route("/api/session", guarded(sign_out), methods=["DELETE"]),
        Route("/api/me", guarded(me, changes=False), methods=["GET"]),
        Route("/api/me", guarded(delete_account), methods=["DELETE"]),
        Route("/api/me/password", guarded(change_password), methods=["POST"]),
        Route("/api/me/language", guarded(set_language), methods=["POST"]),
        Route("/api/players/{name:path}", guarded(player, changes=False)),
        Route("/api/ratings", guarded(ratings, changes=False)),
        Route("/api/races/{race_id}/ratings", guarded(race_ratings, changes=False)),
    ]
