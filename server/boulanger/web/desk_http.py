"""The review desk over HTTP (docs/protocol.md, "Review desk").

Thin transport around :mod:`.desk`. Every route answers a guest 401
``signed_out`` and an account without the moderator role 403
``not_moderator``; a decision, which changes state, also needs this site's
own ``Origin`` (403 ``bad_origin``), as the accounts' routes do.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from ..race import daily as d
from ..race.errors import Refused
from ..race.race import FINISHED
from .accounts_http import body, guarded
from .clock import now_ms
from .daily_http import _day, _int_param
from .desk import Desk, Target, check_note, check_status, check_verdict
from .services import Server

AUDIT_DEFAULT, AUDIT_MAX = 100, 1000


def _desk(request: Request) -> Desk:
    server: Server = request.app.state.server
    return server.desk


async def results(request: Request) -> Response:
    """``GET /api/desk?date=YYYY-MM-DD``: the day's results for review (today by default)."""
    desk = _desk(request)
    await desk.moderator_of(request)
    text = request.query_params.get("date")
    day = d.today(now_ms()) if text is None else _day(text)
    return JSONResponse({"date": day.isoformat(), "results": await desk.results(day)})


async def decide(request: Request) -> Response:
    """``POST /api/desk/decisions``: confirm or disqualify a result, or reverse a decision."""
    desk = _desk(request)
    moderator = await desk.moderator_of(request)
    data = await body(request, {"result", "verdict", "note", "was"})
    target = Target.parse(data.get("result"))
    verdict = check_verdict(data.get("verdict"))
    note = check_note(data.get("note"))
    was = check_status(data.get("was"))
    decision = await desk.decide(moderator, target, verdict, note, was)
    return JSONResponse({"result": target.result, "decision": decision.to_dict()})


async def audit(request: Request) -> Response:
    """``GET /api/desk/audit?limit=N``: the latest decisions, newest first."""
    desk = _desk(request)
    await desk.moderator_of(request)
    limit = _int_param(request, "limit", AUDIT_DEFAULT, 1, AUDIT_MAX)
    return JSONResponse({"audit": [e.to_dict() for e in await desk.store.audit(limit)]})


async def daily_record(request: Request) -> Response:
    """``GET /api/desk/daily/{date}/records/{entry_id}``: an entry's record, today's too."""
    desk = _desk(request)
    await desk.moderator_of(request)
    day = _day(request.path_params["date"])
    text = request.path_params["entry_id"]
    if not text.isascii() or not text.isdigit() or len(text) > d.ENTRY_ID_DIGITS:
        raise Refused("unknown_entry", "no such entry")
    record = await desk.daily.game_record(day, int(text))
    if record is None:
        raise Refused("unknown_entry", "no such entry")
    return JSONResponse(record)


async def race_record(request: Request) -> Response:
    """``GET /api/desk/races/{race_id}/records/{player_id}``: a record of a race that is
    over, a daily attempt of today's too."""
    desk = _desk(request)
    await desk.moderator_of(request)
    hub = await desk.hubs.get(request.path_params["race_id"])
    if hub is None:
        raise Refused("unknown_race", "no such race")
    await hub.catch_up()
    race = hub.race
    player_id = request.path_params["player_id"]
    if player_id not in race.players:
        raise Refused("unknown_player", "no player with that id in this race")
    if race.state(now_ms()) != FINISHED:
        raise Refused("race_running", "game records are public once the race is over")
    return JSONResponse(race.record(player_id).to_dict())


def routes() -> list[BaseRoute]:
    """The desk's routes, for :func:`boulanger.web.app.create_app` (the records' replay,
    text and review routes are :mod:`.replays`')."""
    return [
        Route("/api/desk", guarded(results, changes=False)),
        Route("/api/desk/decisions", guarded(decide), methods=["POST"]),
        Route("/api/desk/audit", guarded(audit, changes=False)),
        Route("/api/desk/daily/{date}/records/{entry_id}", guarded(daily_record, changes=False)),
        Route("/api/desk/races/{race_id}/records/{player_id}", guarded(race_record, changes=False)),
    ]
