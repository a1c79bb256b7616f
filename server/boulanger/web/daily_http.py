"""The daily challenge over HTTP and its live leaderboard WebSocket.

Thin transport around :mod:`boulanger.web.daily` (the service) and
:mod:`boulanger.race.daily` (the rules of the day); see the "Daily
challenge" section of docs/protocol.md.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from datetime import date

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket

from .. import codec
from ..broker import BrokerUnavailable
from ..race import daily as d
from ..race import protocol as p
from ..race.accounts import Account
from ..race.decoding import decode
from ..race.errors import Refused
from ..race.ids import new_race_id, new_secret, player_key, secret_hash
from ..race.names import clean_name
from .clock import now_ms
from .connection import (
    CLOSE_NO_RACE,
    CLOSE_TRY_AGAIN,
)
from .daily import LiveLeaderboard
from .http import json_body, known_fields, may_create
from .limits import DAY_S, address_key
from .services import Server
from .session import Session, refuse
from .socket import limited_per_address

log = logging.getLogger(__name__)

PAGE_DEFAULT, PAGE_MAX = 20, 100
OFFSET_MAX = 10_000_000
PLAYER_KEY_HEADER = "x-player-key"


def _host_key(player_key: str, race_id: str) -> str:
    """The ranked attempt's host key: only the player key's holder (and we) can make it again."""
    return hmac.new(
        player_key.encode(), f"daily-host:{race_id}".encode(), hashlib.sha256
    ).hexdigest()


# -- HTTP ---------------------------------------------------------------------


def _server(request: Request | WebSocket) -> Server:
    server: Server = request.app.state.server
    return server


def _day(text: str) -> date:
    """A date with a challenge that is out: 400 when malformed, 404 when not out."""
    try:
        day = d.parse_date(text)
    except d.DateError as exc:
        raise Refused("bad_date", str(exc)) from None
    if day < d.FIRST_DAY:
        raise Refused("no_daily", f"the daily challenge starts on {d.FIRST_DAY}")
    if day > d.today(now_ms()):
        raise Refused("no_daily", f"the daily challenge of {day} is not out yet")
    return day


def _int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    text = request.query_params.get(name)
    if text is None:
        return default
    # The length first: int() of thousands of digits is slow, and refused past 4,300.
    if len(text) > len(str(high)) or not text.isascii() or not text.isdigit():
        raise Refused("bad_message", f"{name} must be an integer from {low} to {high}")
    if not low <= int(text) <= high:
        raise Refused("bad_message", f"{name} must be an integer from {low} to {high}")
    return int(text)


async def today_challenge(request: Request) -> Response:
    """``GET /api/daily``: today's daily challenge."""
    return JSONResponse(_server(request).daily.challenge(d.today(now_ms())))


async def day_challenge(request: Request) -> Response:
    """``GET /api/daily/{date}``: a day's daily challenge."""
    return JSONResponse(_server(request).daily.challenge(_day(request.path_params["date"])))


async def leaderboard(request: Request) -> Response:
    """``GET /api/daily/{date}/leaderboard``: a page of a day's leaderboard."""
    day = _day(request.path_params["date"])
    limit = _int_param(request, "limit", PAGE_DEFAULT, 1, PAGE_MAX)
    offset = _int_param(request, "offset", 0, 0, OFFSET_MAX)
    page = await _server(request).daily.store.page(day, offset, limit)
    return JSONResponse(
        {
            "date": day.isoformat(),
            "total": page.total,
            "offset": offset,
            "limit": limit,
            "entries": [ranked.to_wire() for ranked in page.entries],
        }
    )


async def create_attempt(request: Request) -> Response:
    """A one-player race on the day's deal: ranked for a key's first attempt of today."""
    server = _server(request)
    day = _day(request.path_params["date"])
    data = await json_body(request)
    known_fields(data, "player_key", "name")
    # The session cookie counts on a request from this site's own pages only.
    account = None
    if server.accounts.same_origin(request):
        account = await server.accounts.account_of(request)
    guest_key = ""
    if account is None or data.get("player_key") is not None:
        guest_key = player_key(data.get("player_key"))
    name = data.get("name")
    if name is not None:
        clean_name(name)  # the rules of a join; a Refused is answered as a 400
    await may_create(server, request)
    # Signed in: the account's attempt (one ranked a day, wherever it signs in).
    # A guest's is unranked, unless this server ranks guests (daily_guests_ranked).
    key_hash = account.daily_key if account is not None else secret_hash(guest_key)
    may_rank = account is not None or server.settings.daily_guests_ranked
    daily = server.daily
    ranked = False
    today = day == d.today(now_ms())
    address = address_key(request.client.host if request.client else "?")
    if today and account is None and server.settings.daily_guest_seen_unranks:
        await server.store.kv.set(_seen_key(address, day), "1", ttl_s=2 * DAY_S)
    not_ranked: str | None = None
    may_claim = today and may_rank and await daily.settle(server.hubs, day, key_hash) is None
    # An account's first claim of the day answers to its address's rules too.
    if may_claim and account is not None and await daily.store.attempt(day, key_hash) is None:
        not_ranked = await _address_rule(server, account, address, day)
    if may_claim and not_ranked is None:
        race_id = await daily.store.claim_attempt(day, key_hash, new_race_id())
        secret = guest_key if account is None else account.secret
        host_key = _host_key(secret, race_id)
        ranked = True
        if await server.broker.race_meta(race_id) is None:
            await _create_race(server, day, race_id, host_key, key_hash, ranked=True)
    else:
        race_id, host_key = new_race_id(), new_secret()
        await _create_race(server, day, race_id, host_key, key_hash, ranked=False)
    answer = {
        "race_id": race_id,
        "url": f"/race/{race_id}",
        "host_key": host_key,
        "ranked": ranked,
        **daily.challenge(day),
    }
    if today and not may_rank:
        answer["unranked"] = "sign_in"  # the client says: sign up (or in) to be ranked
    elif not_ranked is not None:
        answer["unranked"] = not_ranked  # seen_as_guest or new_account (docs/fair-play.md)
    elif today and not ranked:
        answer["unranked"] = "played_today"  # one ranked attempt a day
    return JSONResponse(answer, status_code=201)


def _seen_key(address: str, day: date) -> str:
    return f"daily-seen:{{{address}}}:{day.isoformat()}"


async def _address_rule(server: Server, account: Account, address: str, day: date) -> str | None:
    """Why an account's first attempt of ``day`` from ``address`` is not ranked, or None.

    Today's deal was dealt to a guest from this address (``seen_as_guest``);
    or the account was made today and this address had its one ranked daily
    of an account made today (``new_account``). See docs/fair-play.md.
    """
    settings = server.settings
    if settings.daily_guest_seen_unranks and await server.store.kv.get(_seen_key(address, day)):
        return "seen_as_guest"
    new = d.today(account.created) == day
    limit = settings.daily_new_accounts_per_address
    if new and limit and not await server.addresses.may_rank_new_account(address, day, limit):
        return "new_account"
    return None


async def _create_race(
    server: Server, day: date, race_id: str, host_key: str, key_hash: str, *, ranked: bool
) -> None:
    info = server.daily.challenge(day)
    meta = server.races.meta(
        race_id,
        server.daily.game_code(day),
        secret_hash(host_key),
        par=info["par"],
        winnable=True if info["par"] is not None else None,
        daily=day.isoformat(),
        ranked=ranked,
        player_key_hash=key_hash,
        # Today's deal stays secret until the day ends (docs/fair-play.md).
        hidden_deal=day == d.today(now_ms()),
    )
    await server.races.add(meta)


async def my_standing(request: Request) -> Response:
    """The caller's rank, entry, streak and ranked attempt; the player key is a header."""
    server = _server(request)
    day = _day(request.path_params["date"])
    account = await server.accounts.account_of(request)
    if account is not None:
        key_hash = account.daily_key
    else:
        key_hash = secret_hash(player_key(request.headers.get(PLAYER_KEY_HEADER)))
    daily = server.daily
    ranked = await daily.settle(server.hubs, day, key_hash)
    race_id = await daily.store.attempt(day, key_hash)
    streak = await daily.store.streak(key_hash, day)
    total = (await daily.store.page(day, 0, 0)).total
    share = None
    if ranked is not None:
        site = str(request.base_url).rstrip("/")
        share = d.share_text(day, ranked, total, streak, daily.challenge(day)["par"], site)
    return JSONResponse(
        {
            "date": day.isoformat(),
            "rank": None if ranked is None else ranked.rank,
            "total": total,
            "entry": None if ranked is None else ranked.to_wire(),
            "streak": streak,
            "attempt": None if race_id is None else {"race_id": race_id, "url": f"/race/{race_id}"},
            "share": share,
            # Whether a guest's first attempt of today would be ranked (else: sign in).
            "guests_ranked": server.settings.daily_guests_ranked,
            "signed_in": account is not None,
        }
    )


async def game_record(request: Request) -> Response:
    """``GET /api/daily/{date}/records/{entry_id}``: an entry's game record."""
    day = _day(request.path_params["date"])
    text = request.path_params["entry_id"]
    if not text.isascii() or not text.isdigit() or len(text) > d.ENTRY_ID_DIGITS:
        raise Refused("unknown_entry", "no such entry")
    record = await _server(request).daily.store.game_record(day, int(text))
    if record is None:
        raise Refused("unknown_entry", "no such entry")
    if day == d.today(now_ms()):
        # The first winner's record is everyone's solution: public once the day ends.
        raise Refused("not_yet", "today's game records are public once the day ends")
    return JSONResponse(record)


# -- the live leaderboard WebSocket -------------------------------------------


@limited_per_address
async def daily_socket(websocket: WebSocket) -> None:
    """``/ws/daily/{date}``: a watcher of a day's live leaderboard."""
    try:
        day = _day(websocket.path_params["date"])
    except Refused:
        await refuse(websocket, CLOSE_NO_RACE, "no such daily challenge")
        return
    await websocket.accept()
    await Watcher(_server(websocket), day, websocket).run()


class Watcher(Session):
    """One watcher's connection to a day's live leaderboard."""

    def __init__(self, server: Server, day: date, websocket: WebSocket) -> None:
        super().__init__(server.settings, websocket, lambda: server.stopping)
        self.server = server
        self.day = day
        self.leaderboard: LiveLeaderboard | None = None

    def describe(self) -> str:
        return f"daily {self.day} watcher"

    async def opened(self) -> None:
        try:
            self.leaderboard = await self.server.daily.watch(self.day, self.conn)
        except BrokerUnavailable:
            self.conn.close(CLOSE_TRY_AGAIN)

    async def closing(self) -> None:
        if self.leaderboard is not None:
            await self.server.daily.leave(self.leaderboard, self.conn)

    async def handle(self, text: str) -> None:
        self._handle(text)

    def _handle(self, text: str) -> None:
        try:
            message = decode(codec.parse_json(text), d.CLIENT_MESSAGES)
        except Refused as refused:
            self.fault(refused.code, refused.reason, ref=refused.ref, action_id=refused.action_id)
            return
        if isinstance(message, p.Ping):
            self.conn.send(codec.encode(p.ServerPong(message.t, ref=message.ref)))


def routes() -> list[BaseRoute]:
    """The daily challenge's routes, for :func:`boulanger.web.app.create_app`."""
    return [
        Route("/api/daily", today_challenge),
        Route("/api/daily/{date}", day_challenge),
        Route("/api/daily/{date}/leaderboard", leaderboard),
        Route("/api/daily/{date}/attempts", create_attempt, methods=["POST"]),
        Route("/api/daily/{date}/me", my_standing),
        Route("/api/daily/{date}/records/{entry_id}", game_record),
        WebSocketRoute("/ws/daily/{date}", daily_socket),
    ]
