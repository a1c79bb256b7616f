"""Replays over HTTP: a public game record as text, as frames for the viewer, and its review.

Each route reads the record through the route that serves its JSON (so the
same rules say when a record is public) and adds its own form:

* ``.../text``: one readable line per action (boulanger.race.replay);
* ``.../replay``: the frames the replay viewer and ghosts play;
* ``.../review``: the solver's review (boulanger.solver.review), computed in
  the solver process, bounded in time, and kept per record.

See "Replays" in docs/protocol.md.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import cast

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Route

from ..engine import RecordDict
from ..race.errors import Refused
from ..race.replay import ReviewLines, play_back, text_lines
from . import daily_http, desk_http, http
from .limits import requester
from .services import Server

log = logging.getLogger(__name__)

# Seconds of solver time one review may take, and reviews kept per process.
REVIEW_BUDGET_S = 5.0
REVIEWS_KEPT = 512
# The viewer's pages (the client's one page; it reads the path).
PAGES = (
    "/race/{race_id}/replay/{player_id}",
    "/daily/{date}/replay/{entry_id}",
    # The review desk's, on its own routes: open to moderators before the day ends.
    "/desk/race/{race_id}/replay/{player_id}",
    "/desk/daily/{date}/replay/{entry_id}",
)

Fetch = Callable[[Request], Awaitable[Response]]


class ReviewCache:
    """Reviews by record, least recently used forgotten; one computation per record at a time."""

    def __init__(self, kept: int = REVIEWS_KEPT) -> None:
        self.kept = kept
        self._done: OrderedDict[str, ReviewLines] = OrderedDict()
        self._running: dict[str, asyncio.Future[ReviewLines]] = {}

    @staticmethod
    def key(record: RecordDict) -> str:
        return hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()

    def __len__(self) -> int:
        return len(self._done)

    async def get(
        self, record: RecordDict, compute: Callable[[], Awaitable[ReviewLines]]
    ) -> ReviewLines:
        key = self.key(record)
        found = self._done.get(key)
        if found is not None:
            self._done.move_to_end(key)
            return found
        running = self._running.get(key)
        if running is None:
            running = self._running[key] = asyncio.ensure_future(compute())
            running.add_done_callback(lambda _: self._running.pop(key, None))
        review = await asyncio.shield(running)
        self._done[key] = review
        while len(self._done) > self.kept:
            self._done.popitem(last=False)
        return review


def _server(request: Request) -> Server:
    server: Server = request.app.state.server
    return server


def _reviews(request: Request) -> ReviewCache:
    state = request.app.state
    cache: ReviewCache | None = getattr(state, "reviews", None)
    if cache is None:
        cache = state.reviews = ReviewCache()
    return cache


async def _record(request: Request, fetch: Fetch) -> tuple[RecordDict | None, Response]:
    """The record the JSON route answers, or None and that route's answer.

    The route raises :class:`Refused` while the record is not public: it
    goes on to the app's handlers, which answer it as that route would.
    """
    response = await fetch(request)
    if response.status_code != 200:
        return None, response
    return cast(RecordDict, json.loads(bytes(response.body))), response


def _text(fetch: Fetch) -> Fetch:
    async def text(request: Request) -> Response:
        record, refusal = await _record(request, fetch)
        if record is None:
            return refusal
        body = "".join(f"{line}\n" for line in text_lines(record))
        name = re.sub(r"[^A-Za-z0-9_-]", "", "-".join(request.path_params.values()))
        return PlainTextResponse(
            body, headers={"Content-Disposition": f'inline; filename="{name}.txt"'}
        )

    return text


def _replay(fetch: Fetch) -> Fetch:
    async def replay(request: Request) -> Response:
        record, refusal = await _record(request, fetch)
        if record is None:
            return refusal
        code = record["code"]
        return JSONResponse({"code": code, "frames": play_back(record)})

    return replay


def _review(fetch: Fetch) -> Fetch:
    async def review(request: Request) -> Response:
        record, refusal = await _record(request, fetch)
        if record is None:
            return refusal
        server = _server(request)

        async def compute() -> ReviewLines:
            # Only a review computed counts against the address's day; a cached one
            # is free, and so is one refused because the solver is busy.
            server.solver.answers.check(owners)
            if not await server.addresses.may_review(address):
                raise Refused(
                    "too_many_reviews",
                    f"this address has had its {server.settings.reviews_per_day_per_address} "
                    "reviews of today; reviews already made still open",
                )
            return await server.solver.review(record, None, REVIEW_BUDGET_S, owners)

        address = request.client.host if request.client else "?"
        owners = [requester(request)]
        if server.accounts.same_origin(request):
            account = await server.accounts.account_of(request)
            if account is not None:
                owners.append(f"account:{account.id}")
        try:
            review = await _reviews(request).get(record, compute)
        except Refused:
            raise
        except Exception:  # the solver process failed (or was stopped): nothing is kept
            log.exception("review of %s failed", request.url.path)
            raise Refused(
                "try_again", "the solver cannot review this game now; try again"
            ) from None
        return JSONResponse(review)

    return review


def routes() -> list[BaseRoute]:
    """The replay routes, for :func:`boulanger.web.app.create_app`."""
    out: list[BaseRoute] = []
    for base, fetch in (
        ("/api/races/{race_id}/records/{player_id}", http.race_record),
        ("/api/daily/{date}/records/{entry_id}", daily_http.game_record),
        ("/api/desk/races/{race_id}/records/{player_id}", desk_http.race_record),
        ("/api/desk/daily/{date}/records/{entry_id}", desk_http.daily_record),
    ):
        out += [
            Route(f"{base}/text", _text(fetch)),
            Route(f"{base}/replay", _replay(fetch)),
            Route(f"{base}/review", _review(fetch)),
        ]
    return out
