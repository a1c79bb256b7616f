"""HTTP endpoints: create races (quick races too), read snapshots and game records, health.

Handlers refuse by raising :class:`~boulanger.race.errors.Refused`, answered
by the app's one set of exception handlers (:mod:`.refusals`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from ..codec import parse_json
from ..engine import EngineError, GameCode
from ..race.errors import Refused
from ..race.race import FINISHED, Race
from .clock import now_ms
from .limits import address_key, requester
from .services import Server

MAX_BODY = 4096


def _server(request: Request) -> Server:
    server: Server = request.app.state.server
    return server


async def healthz(request: Request) -> Response:
    """``GET /healthz``: 200 while the broker answers, 503 otherwise."""
    server = _server(request)
    ok = await server.broker.ping()
    body = {"ok": ok, "broker": server.broker.kind, "races": len(server.hubs)}
    return JSONResponse(body, status_code=200 if ok else 503)


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object (empty body: ``{}``); :class:`Refused` 415, 413 or 400 otherwise.

    Only ``application/json`` is read: a cross-site form or ``text/plain``
    POST (which browsers send without asking) cannot create anything. The
    size is checked on ``Content-Length`` and again while the body streams
    in, so an oversized body is refused without being held in memory.
    """
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise Refused("not_json", "send the body as Content-Type: application/json")
    length = request.headers.get("content-length")
    if length is not None and not (length.isascii() and length.isdigit()):
        raise Refused("bad_message", "Content-Length is not a number")
    if length is not None and (len(length) > 12 or int(length) > MAX_BODY):
        raise Refused("too_large", f"the body is over {MAX_BODY} bytes")
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise Refused("too_large", f"the body is over {MAX_BODY} bytes")
        chunks.append(chunk)
    body = b"".join(chunks)
    try:
        data = parse_json(body or b"{}")
    except Refused:
        raise Refused("bad_message", "the body is not JSON") from None
    if not isinstance(data, dict):
        raise Refused("bad_message", "the body must be a JSON object")
    if not _encodable(data):
        raise Refused("bad_message", "the body has text that is not valid Unicode")
    return data


def _encodable(value: object) -> bool:
    """False when a string in ``value`` (a key or a value) has lone surrogates."""
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, dict):
        return all(_encodable(k) and _encodable(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_encodable(v) for v in value)
    return True


def known_fields(data: Mapping[str, object], *known: str) -> None:
    """Refuse a body with fields other than ``known``."""
    unknown = set(data) - set(known)
    if unknown:
        raise Refused("bad_message", f"unknown field(s): {', '.join(sorted(unknown))}")


def cells_of(data: Mapping[str, object]) -> int:
    """The body's ``cells`` (4 when absent): 4, 2 or 1."""
    cells = data.get("cells", 4)
    if cells not in (4, 2, 1) or isinstance(cells, bool):
        raise Refused("bad_message", "cells must be 4, 2 or 1")
    return int(cells)


async def may_create(server: Server, request: Request) -> None:
    """Refuse the request when its address has created too many races lately."""
    address = request.client.host if request.client else "?"
    if not await server.addresses.may_create(address):
        raise Refused("too_many_races", "too many races created from this address; wait a minute")


def no_deal(cells: int) -> Refused:
    """The refusal when the catalog has no winnable deal for ``cells``."""
    return Refused("no_deal", f"no proven-winnable deal with {cells} cells is available")


async def create_race(request: Request) -> Response:
    """``POST /api/races``: a new race, with its id, link and host key."""
    server = _server(request)
    data = await json_body(request)
    known_fields(data, "cells", "code", "practice", "open_boards")
    practice = data.get("practice", False)
    open_boards = data.get("open_boards", False)
    if not isinstance(practice, bool) or not isinstance(open_boards, bool):
        raise Refused("bad_message", "practice and open_boards must be true or false")
    code = None
    if "code" in data:
        try:
            code = GameCode.parse(data["code"])
        except EngineError as exc:
            raise Refused("bad_code", str(exc)) from None
        if "cells" in data and data["cells"] != code.cells:
            raise Refused("bad_message", "cells disagrees with the game code")
        if code.deal == server.daily.deal_today():
            # The same layout with any number of cells: it stays secret all day.
            raise Refused("daily_deal", "that is today's daily deal; it opens tomorrow")
    cells = cells_of(data) if code is None else code.cells
    await may_create(server, request)
    try:
        created = await server.races.create(
            cells=cells,
            code=code,
            practice=practice,
            open_boards=open_boards,
            owners=(requester(request),),
        )
    except LookupError:
        raise no_deal(cells) from None
    return JSONResponse(created, status_code=201)


async def quick_race(request: Request) -> Response:
    """``POST /api/quick`` with ``{"cells": 4}``: a place in the next quick race."""
    server = _server(request)
    data = await json_body(request)
    known_fields(data, "cells")
    cells = cells_of(data)
    await may_create(server, request)
    try:
        answer = await server.quick.ask(
            cells, address_key(request.client.host if request.client else "?")
        )
    except LookupError:
        raise no_deal(cells) from None
    return JSONResponse(answer)


async def quick_counts(request: Request) -> Response:
    """``GET /api/quick``: how many players wait in quick races and race now."""
    return JSONResponse(await _server(request).quick.counts())


async def _race(request: Request) -> Race | None:
    """The request's race, brought up to date with its log; None when unknown."""
    hub = await _server(request).hubs.get(request.path_params["race_id"])
    if hub is None:
        return None
    await hub.catch_up()
    return hub.race


async def race_snapshot(request: Request) -> Response:
    """``GET /api/races/{race_id}``: the race as a spectator sees it."""
    server = _server(request)
    hub = await server.hubs.get(request.path_params["race_id"])
    if hub is None:
        raise Refused("unknown_race", "no such race")
    await hub.catch_up()
    await server.results.find_deleted(hub)
    await server.desk.find_decisions(hub)
    return JSONResponse(hub.snapshot(now_ms()))


async def race_record(request: Request) -> Response:
    """``GET /api/races/{race_id}/records/{player_id}``: a game record, once the race is over."""
    race = await _race(request)
    if race is None:
        raise Refused("unknown_race", "no such race")
    player_id = request.path_params["player_id"]
    if player_id not in race.players:
        raise Refused("unknown_player", "no player with that id in this race")
    if race.state(now_ms()) != FINISHED:
        raise Refused("race_running", "game records are public once the race is over")
    if race.meta.daily is not None and race.code_hidden(now_ms()):
        raise Refused("not_yet", "records of today's daily deal are public once the day ends")
    return JSONResponse(race.record(player_id).to_dict())


def routes() -> list[BaseRoute]:
    """The races' HTTP routes, for :func:`boulanger.web.app.create_app`."""
    return [
        Route("/healthz", healthz),
        Route("/api/races", create_race, methods=["POST"]),
        Route("/api/quick", quick_race, methods=["POST"]),
        Route("/api/quick", quick_counts, methods=["GET"]),
        Route("/api/races/{race_id}", race_snapshot),
        Route("/api/races/{race_id}/records/{player_id}", race_record),
    ]
