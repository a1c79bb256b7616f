"""HTTP endpoints: create races, read snapshots and game records, health."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute

from ..broker import BrokerUnavailable
from ..codec import parse_json
from ..engine import EngineError, GameCode
from ..race.errors import ProtocolError
from ..race.race import FINISHED, Race
from .hub import now_ms

if TYPE_CHECKING:
    from .app import Server

MAX_BODY = 4096


def error(status: int, code: str, reason: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "reason": reason}}, status_code=status)


def _server(request: Request) -> Server:
    server: Server = request.app.state.server
    return server


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return error(exc.status_code, "http", str(exc.detail))


async def _unavailable(request: Request, exc: Exception) -> Response:
    return error(503, "try_again", "the store is unreachable; try again")


EXCEPTION_HANDLERS: dict[Any, Any] = {
    HTTPException: _http_error,
    BrokerUnavailable: _unavailable,
}


async def healthz(request: Request) -> Response:
    server = _server(request)
    ok = await server.broker.ping()
    body = {"ok": ok, "broker": server.broker.kind, "races": len(server.hubs)}
    return JSONResponse(body, status_code=200 if ok else 503)


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object (empty body: ``{}``); HTTPException 415, 413 or 400 otherwise.

    Only ``application/json`` is read: a cross-site form or ``text/plain``
    POST (which browsers send without asking) cannot create anything. The
    size is checked on ``Content-Length`` and again while the body streams
    in, so an oversized body is refused without being held in memory.
    """
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise HTTPException(415, "send the body as Content-Type: application/json")
    length = request.headers.get("content-length")
    if length is not None and not (length.isascii() and length.isdigit()):
        raise HTTPException(400, "Content-Length is not a number")
    if length is not None and (len(length) > 12 or int(length) > MAX_BODY):
        raise HTTPException(413, f"the body is over {MAX_BODY} bytes")
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise HTTPException(413, f"the body is over {MAX_BODY} bytes")
        chunks.append(chunk)
    body = b"".join(chunks)
    try:
        data = parse_json(body or b"{}")
    except ProtocolError:
        raise HTTPException(400, "the body is not JSON") from None
    if not isinstance(data, dict):
        raise HTTPException(400, "the body must be a JSON object")
    if not _encodable(data):
        raise HTTPException(400, "the body has text that is not valid Unicode")
    return data


def _encodable(value: Any) -> bool:
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


def body_code(status: int) -> str:
    """The error code of a body :func:`json_body` refused with ``status``."""
    return {413: "too_large", 415: "not_json"}.get(status, "bad_message")


async def create_race(request: Request) -> Response:
    server = _server(request)
    address = request.client.host if request.client else "?"
    try:
        data = await json_body(request)
    except HTTPException as exc:
        return error(exc.status_code, body_code(exc.status_code), str(exc.detail))
    unknown = set(data) - {"cells", "code", "practice", "open_boards"}
    if unknown:
        return error(400, "bad_message", f"unknown field(s): {', '.join(sorted(unknown))}")
    practice = data.get("practice", False)
    open_boards = data.get("open_boards", False)
    if not isinstance(practice, bool) or not isinstance(open_boards, bool):
        return error(400, "bad_message", "practice and open_boards must be true or false")
    code = None
    cells = data.get("cells", 4)
    if "code" in data:
        try:
            code = GameCode.parse(data["code"])
        except EngineError as exc:
            return error(400, "bad_code", str(exc))
        if "cells" in data and cells != code.cells:
            return error(400, "bad_message", "cells disagrees with the game code")
        if code.deal == server.daily.deal_today():
            # The same layout with any number of cells: it stays secret all day.
            return error(400, "daily_deal", "that is today's daily deal; it opens tomorrow")
    elif cells not in (4, 2, 1) or isinstance(cells, bool):
        return error(400, "bad_message", "cells must be 4, 2 or 1")
    if not await server.addresses.may_create(address):
        return error(
            429, "too_many_races", "too many races created from this address; wait a minute"
        )
    try:
        created = await server.create_race(
            cells=cells if code is None else code.cells,
            code=code,
            practice=practice,
            open_boards=open_boards,
        )
    except LookupError:
        return error(503, "no_deal", f"no proven-winnable deal with {cells} cells is available")
    return JSONResponse(created, status_code=201)


async def _race(request: Request) -> Race | None:
    """The request's race, brought up to date with its log; None when unknown."""
    hub = await _server(request).hubs.get(request.path_params["race_id"])
    if hub is None:
        return None
    await hub.catch_up()
    return hub.race


async def race_snapshot(request: Request) -> Response:
    race = await _race(request)
    if race is None:
        return error(404, "unknown_race", "no such race")
    return JSONResponse(race.snapshot(now_ms()))


async def race_record(request: Request) -> Response:
    race = await _race(request)
    if race is None:
        return error(404, "unknown_race", "no such race")
    player_id = request.path_params["player_id"]
    if player_id not in race.players:
        return error(404, "unknown_player", "no player with that id in this race")
    if race.state(now_ms()) != FINISHED:
        return error(409, "race_running", "game records are public once the race is over")
    if race.meta.daily is not None and race.code_hidden(now_ms()):
        return error(409, "not_yet", "records of today's daily deal are public once the day ends")
    return JSONResponse(race.record(player_id))


def daily_routes() -> list[BaseRoute]:
    """The daily challenge's routes (see boulanger.web.daily)."""
    from .daily_http import routes  # imported here: boulanger.web.daily_http imports this module

    return routes()
